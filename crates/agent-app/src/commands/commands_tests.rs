//! Tests of custom commands: discovery, front matter and placeholders.

use std::path::Path;

use super::*;

/// Writes `text` to `root/rel`, making its folders.
fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A command with `body` and no front matter.
fn bare(body: &str) -> CustomCommand {
    CustomCommand {
        name: "c".into(),
        description: String::new(),
        argument_hint: None,
        model: None,
        allowed_tools: Vec::new(),
        body: body.into(),
        path: PathBuf::from("c.md"),
        source: ".agent/commands".into(),
    }
}

#[test]
fn arguments_fill_the_placeholders() {
    let command = bare("Review $1 focusing on $2.\nAll: $ARGUMENTS. Cost: $5 and $$.\n");
    assert_eq!(
        command.prompt("src/app.py \"error handling\""),
        "Review src/app.py focusing on error handling.\nAll: src/app.py \"error handling\". \
         Cost:  and $$."
    );
    // No placeholder: the arguments follow, never lost; no arguments, nothing added.
    let command = bare("Explain the build.");
    assert_eq!(
        command.prompt("  fast please "),
        "Explain the build.\n\nARGUMENTS: fast please"
    );
    assert_eq!(command.prompt(""), "Explain the build.");
    assert_eq!(words("a 'b c' \"d\"e  f"), ["a", "b c", "de", "f"]);
}

#[test]
fn commands_are_found_with_front_matter_and_the_first_of_a_name_wins() {
    let dir = tempfile::tempdir().unwrap();
    let (work, user) = (dir.path().join("work"), dir.path().join("user"));
    write(
        &work,
        ".agent/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: FILE [FOCUS]\nmodel: gpt-4.1\n\
         allowed-tools: Read, Grep\n---\nReview $1.\n",
    );
    write(&work, ".claude/commands/review.md", "Claude's review.\n");
    write(
        &work,
        ".claude/commands/explain.md",
        "# Explain the code\n\nExplain $ARGUMENTS.\n",
    );
    write(&user, "commands/standup.md", "Write the standup.\n");
    write(&work, ".agent/commands/notes.txt", "not a command");
    write(&work, ".agent/commands/bad name.md", "x");

    let found = discover(&work, Some(&user));
    let names: Vec<(&str, &str)> = found
        .commands
        .iter()
        .map(|c| (c.name.as_str(), c.source.as_str()))
        .collect();
    let user_dir = user.join("commands").display().to_string();
    assert_eq!(
        names,
        [
            ("review", ".agent/commands"),
            ("explain", ".claude/commands"),
            ("standup", user_dir.as_str()),
        ]
    );
    let review = found.get("review").unwrap();
    assert_eq!(review.description, "Review a file");
    assert_eq!(review.argument_hint.as_deref(), Some("FILE [FOCUS]"));
    assert_eq!(review.model.as_deref(), Some("gpt-4.1"));
    assert_eq!(review.allowed_tools, ["Read", "Grep"]);
    assert_eq!(
        review.listed(),
        (
            "/review".to_owned(),
            "FILE [FOCUS]  Review a file".to_owned()
        )
    );
    // Without front matter the description is the first line.
    assert_eq!(
        found.get("explain").unwrap().description,
        "Explain the code"
    );
    assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
    let warnings = found.warnings.join("\n");
    assert!(warnings.contains("shadowed"), "{warnings}");
    assert!(warnings.contains("is not a command name"), "{warnings}");
}

#[test]
fn only_the_name_of_a_command_is_expanded() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".agent/commands/review.md", "Review $1.\n");
    let found = discover(dir.path(), None);
    let expanded = found.expand("  /review src/app.py").unwrap().unwrap();
    assert_eq!(expanded.name, "review");
    assert_eq!(expanded.task, "Review src/app.py.");
    for text in [
        "review src/app.py",
        "/reviewer x",
        "/etc/hosts is odd",
        "/",
        "a /review",
    ] {
        assert!(found.expand(text).is_none(), "{text}");
    }
    // The file is read again when used; one gone is said.
    write(
        dir.path(),
        ".agent/commands/review.md",
        "Look at $1 closely.\n",
    );
    assert_eq!(
        found.expand("/review a.rs").unwrap().unwrap().task,
        "Look at a.rs closely."
    );
    std::fs::remove_file(dir.path().join(".agent/commands/review.md")).unwrap();
    let error = found.expand("/review a.rs").unwrap().unwrap_err();
    assert!(error.contains("review.md is not used"), "{error}");
}
