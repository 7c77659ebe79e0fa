//! Tests of plan templates: files read, rendered and written back, names, values and bad
//! files refused.

use std::collections::BTreeMap;

use super::*;

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

const FILE: &str = "---\n\
description: Add a cache  # shown by agent plan list\n\
mission: \"Add a cache to {{module}}: \\\"fast\\\" # not a comment\"\n\
params:\n  module: src/store.rs\n  reviewer:\n  ttl: 60\n\
---\n\
# One goal a line.\n\
Read {{ module }} and its callers\n\
Implement the cache\n  Keep entries {{ttl}} seconds\n\
Review the change @{{reviewer}}\n";

#[test]
fn a_template_file_is_read_rendered_and_written_back() {
    let template = PlanTemplate::parse("cache", FILE).unwrap();
    assert_eq!(template.description, "Add a cache");
    assert_eq!(
        template.mission.as_deref(),
        Some("Add a cache to {{module}}: \"fast\" # not a comment")
    );
    let params: Vec<(&str, Option<&str>)> = template
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.default.as_deref()))
        .collect();
    assert_eq!(
        params,
        [
            ("module", Some("src/store.rs")),
            ("reviewer", None),
            ("ttl", Some("60"))
        ]
    );

    let plan = template
        .render(&vars(&[("reviewer", "critic"), ("ttl", "5")]))
        .unwrap();
    assert_eq!(
        plan.mission.as_deref(),
        Some("Add a cache to src/store.rs: \"fast\" # not a comment")
    );
    assert_eq!(
        plan.text,
        "# One goal a line.\nRead src/store.rs and its callers\nImplement the cache\n  \
         Keep entries 5 seconds\nReview the change @critic\n"
    );
    let items = agent_goal::parse_plan(&plan.text).unwrap();
    assert_eq!(items[3].agent.as_deref(), Some("critic"));

    // Written and read back, it is the same template.
    let written = template.to_file_text();
    assert_eq!(PlanTemplate::parse("cache", &written).unwrap(), template);
}

#[test]
fn odd_text_survives_the_round_trip() {
    let template = PlanTemplate {
        name: "odd".into(),
        description: "Quotes \" and \\ and # and: colons\tand tabs".into(),
        mission: Some("Two\nlines, C# and 'single' {{x}}".into()),
        params: vec![TemplateParam {
            name: "x".into(),
            default: Some("a # b \"c\"".into()),
        }],
        text: "Do {{x}}\n  Then more @reviewer\n".into(),
    };
    let back = PlanTemplate::parse("odd", &template.to_file_text()).unwrap();
    assert_eq!(back, template);
    let empty = PlanTemplate {
        params: vec![TemplateParam {
            name: "x".into(),
            default: Some(String::new()),
        }],
        ..template
    };
    let back = PlanTemplate::parse("odd", &empty.to_file_text()).unwrap();
    assert_eq!(back, empty);
}

#[test]
fn unknown_and_missing_values_are_refused_by_name() {
    let template = PlanTemplate::parse("cache", FILE).unwrap();
    let error = template
        .render(&vars(&[("reviewer", "x"), ("colour", "red")]))
        .unwrap_err();
    assert!(error.is_request_error());
    assert_eq!(
        error.to_string(),
        "plan template \"cache\" has no parameter \"colour\" (its parameters: module, reviewer, ttl)"
    );
    let error = template.render(&BTreeMap::new()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "plan template \"cache\" needs a value for \"reviewer\": pass --var NAME=VALUE"
    );
    let error = template.render(&vars(&[("reviewer", "a\nb")])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the value of \"reviewer\" must be one line of text"
    );
    // A value is not read again for placeholders.
    let plan = template
        .render(&vars(&[("reviewer", "r"), ("module", "{{ttl}}")]))
        .unwrap();
    assert!(plan.text.contains("Read {{ttl}} and"), "{}", plan.text);
}

#[test]
fn bad_files_are_refused_with_what_is_wrong() {
    let cases = [
        (
            "---\nmission: Do {{thing}}\n---\nA\n",
            "{{thing}} is used but is not a parameter",
        ),
        ("---\ncolour: red\n---\nA\n", "unknown field `colour`"),
        (
            "---\nparams:\n  bad-name: 1\n---\nA\n",
            // Front matter takes `-` in names (Claude Code's `allowed-tools`); the template
            // still refuses it in a parameter's.
            "\"bad-name\" is not a parameter name",
        ),
        ("---\nparams: x\n---\nA\n", "`params`: indented"),
        ("---\ndescription: x\n", "no closing `---` line"),
        ("---\ndescription: x\n---\n# nothing\n", "no goal"),
        // The error names the line of the file, not of the plan.
        ("---\ndescription: x\n---\nA\n\tB\n", "line 5"),
    ];
    for (text, expected) in cases {
        let error = PlanTemplate::parse("t", text).unwrap_err().to_string();
        assert!(error.contains(expected), "{text:?}: {error}");
        assert!(error.starts_with("plan template \"t\""), "{error}");
    }
    // A plan file without front matter is a template without mission or parameters.
    let plain = PlanTemplate::parse("plain", "# Plan: x\nWrite\n  Check\n").unwrap();
    assert_eq!((plain.mission, plain.params.len()), (None, 0));
}

#[test]
fn names_never_leave_the_templates_folder() {
    for good in ["cache", "add-cache_v2", "v1.2", "X"] {
        check_name(good).unwrap();
    }
    for (bad, reason) in [
        ("../x", "path separator"),
        ("a/b", "path separator"),
        ("..", "\"..\""),
        ("a..b", "\"..\""),
        ("", "empty"),
        (".hidden", "starts with a letter or a digit"),
        ("two words", "' ' is not allowed"),
    ] {
        let error = check_name(bad).unwrap_err().to_string();
        assert!(
            error.starts_with(&format!("invalid template name {bad:?}")),
            "{error}"
        );
        assert!(error.contains(reason), "{bad:?}: {error}");
    }
}

#[test]
fn templates_are_saved_listed_and_loaded() {
    let workspace = tempfile::tempdir().unwrap();
    assert!(list(workspace.path()).unwrap().is_empty());
    let template = PlanTemplate::from_plan(
        "notes",
        "Write notes",
        "Make notes about {{topic}}",
        "# Plan: Make notes about {{topic}}\n# One goal a line.\nWrite\nCheck @reviewer\n",
    )
    .unwrap();
    assert_eq!(
        template.text,
        "# One goal a line.\nWrite\nCheck @reviewer\n"
    );
    assert_eq!(template.params[0].name, "topic");
    let path = save(workspace.path(), &template, false).unwrap();
    assert_eq!(path, workspace.path().join(".agent/plans/notes.md"));
    let error = save(workspace.path(), &template, false).unwrap_err();
    assert!(error.to_string().contains("--force"), "{error}");
    save(workspace.path(), &template, true).unwrap();
    assert_eq!(
        list(workspace.path()).unwrap(),
        std::slice::from_ref(&template)
    );
    assert_eq!(load(workspace.path(), "notes").unwrap(), template);
    let missing = load(workspace.path(), "other").unwrap_err();
    assert!(
        matches!(missing, TemplateError::NotFound { .. }),
        "{missing}"
    );
    let bad = load(workspace.path(), "../notes").unwrap_err();
    assert!(bad.is_request_error(), "{bad}");
}
