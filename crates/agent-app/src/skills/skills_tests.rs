//! Tests of skill discovery and the `skill` tool.

use std::path::Path;

use agent_tools::{ToolContext, TypedTool};
use serde_json::json;

use super::*;

/// Writes `text` to `root/rel`, making its folders.
fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A SKILL.md with `name` and `description`.
fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n")
}

#[test]
fn skills_are_found_in_every_folder_with_the_first_of_a_name_winning() {
    let dir = tempfile::tempdir().unwrap();
    let (work, user) = (dir.path().join("work"), dir.path().join("user"));
    write(
        &work,
        ".agent/skills/a/SKILL.md",
        &skill_md("alpha", "Ours."),
    );
    write(
        &work,
        ".claude/skills/a/SKILL.md",
        &skill_md("alpha", "Claude's."),
    );
    write(&work, ".claude/skills/b/SKILL.md", &skill_md("beta", "B."));
    write(&work, ".agents/skills/c/SKILL.md", &skill_md("gamma", "C."));
    write(&user, "skills/d/SKILL.md", &skill_md("delta", "D."));
    write(
        &user,
        "skills/e/SKILL.md",
        &skill_md("beta", "User's beta."),
    );
    // A folder without SKILL.md is no skill; a file beside the folders is ignored.
    write(&work, ".agent/skills/notes/README.md", "nothing");
    write(&work, ".agent/skills/loose.md", "nothing");

    let found = discover(&work, Some(&user));
    let listed: Vec<(&str, &str, String)> = found
        .skills
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.as_str(),
                s.source.to_string(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            ("alpha", "Ours.", ".agent/skills".to_owned()),
            ("beta", "B.", ".claude/skills".to_owned()),
            ("gamma", "C.", ".agents/skills".to_owned()),
            ("delta", "D.", user.join("skills").display().to_string()),
        ]
    );
    assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
    assert!(found.warnings.iter().all(|w| w.contains("shadowed")));
}

#[test]
fn front_matter_gives_name_description_and_allowed_tools() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".claude/skills/git-helper/SKILL.md",
        "---\nname: git-helper\ndescription: \"Commits: staged changes, with a message.\"\n\
         allowed-tools: Bash(git add:*), Bash(git commit:*), Read\nlicense: MIT\n\
         metadata:\n  version: 1.0\n---\n# Git helper\n",
    );
    // No name: the folder's; a space-separated list.
    write(
        dir.path(),
        ".claude/skills/lint/SKILL.md",
        "---\ndescription: Lints.\nallowed-tools: Read Grep\n---\nLint.\n",
    );
    let found = discover(dir.path(), None);
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    let git = found.get("git-helper").unwrap();
    assert_eq!(git.description, "Commits: staged changes, with a message.");
    assert_eq!(
        git.allowed_tools,
        ["Bash(git add:*)", "Bash(git commit:*)", "Read"]
    );
    assert_eq!(found.get("lint").unwrap().allowed_tools, ["Read", "Grep"]);
}

#[test]
fn a_skill_that_cannot_be_read_is_a_warning_and_the_others_stay() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".agent/skills/ok/SKILL.md",
        &skill_md("ok", "Fine."),
    );
    write(dir.path(), ".agent/skills/bare/SKILL.md", "Just text.\n");
    write(
        dir.path(),
        ".agent/skills/nodesc/SKILL.md",
        "---\nname: nodesc\n---\nx\n",
    );
    write(
        dir.path(),
        ".agent/skills/badname/SKILL.md",
        &skill_md("bad name/../x", "Bad."),
    );
    let huge = format!(
        "{}{}",
        skill_md("huge", "Huge."),
        "x".repeat(MAX_SKILL_BYTES as usize)
    );
    write(dir.path(), ".agent/skills/huge/SKILL.md", &huge);
    let found = discover(dir.path(), None);
    let names: Vec<&str> = found.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    assert_eq!(found.warnings.len(), 4, "{:?}", found.warnings);
    let warnings = found.warnings.join("\n");
    assert!(warnings.contains("no front matter"), "{warnings}");
    assert!(warnings.contains("no `description`"), "{warnings}");
    assert!(warnings.contains("is not a skill name"), "{warnings}");
    assert!(warnings.contains("larger than"), "{warnings}");
}

#[test]
fn the_prompt_lists_names_and_descriptions_and_no_block_without_skills() {
    assert!(instruction(&[]).is_none());
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".agent/skills/a/SKILL.md",
        &skill_md("pdf", "Reads PDFs."),
    );
    let found = discover(dir.path(), None);
    let block = instruction(&found.skills).unwrap();
    assert_eq!(block.title, "Skills");
    assert!(
        block.text.contains("\n- pdf: Reads PDFs."),
        "{}",
        block.text
    );
    assert!(!block.text.contains("Body of pdf"), "{}", block.text);
}

#[tokio::test]
async fn the_skill_tool_returns_the_body_the_folder_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".agent/skills/pdf/SKILL.md",
        "---\nname: pdf\ndescription: Reads PDFs.\nallowed-tools: Bash, Read\n---\n\
         Run scripts/extract.py on the file.\n",
    );
    write(
        dir.path(),
        ".agent/skills/pdf/scripts/extract.py",
        "print(1)\n",
    );
    write(dir.path(), ".agent/skills/pdf/reference.md", "ref\n");
    write(dir.path(), ".agent/skills/pdf/.hidden", "no\n");
    let found = discover(dir.path(), None);
    let folder = found.get("pdf").unwrap().dir.clone();
    let tool = SkillTool::new(found);
    let ctx = ToolContext::new(dir.path(), "t1").unwrap();
    let output = tool
        .run(
            serde_json::from_value(json!({"name": "pdf"})).unwrap(),
            &ctx,
        )
        .await
        .unwrap();
    let text = output.content;
    assert!(
        text.contains("Run scripts/extract.py on the file."),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Base directory for this skill: {}",
            folder.display()
        )),
        "{text}"
    );
    assert!(text.contains("Tools the skill uses: Bash, Read"), "{text}");
    assert!(
        text.contains("- reference.md\n- scripts/extract.py\n"),
        "{text}"
    );
    assert!(!text.contains(".hidden"), "{text}");
    assert!(!text.contains("- SKILL.md"), "{text}");

    // A name that is no skill (or a path) is refused, naming the skills.
    let error = tool
        .run(
            serde_json::from_value(json!({"name": "../../etc/passwd"})).unwrap(),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(error.to_string().contains("the skills are: pdf"), "{error}");
}
