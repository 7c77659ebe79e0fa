//! Mistakes in the command line or the configuration end with exit code 2 and one line that
//! says the cause once, before any trace is made.

use agent_test_support::cli::{code, stderr, stdout};

use crate::agent_env;

#[tokio::test]
async fn a_bad_workspace_or_script_is_a_usage_error_said_once() {
    let env = agent_env();
    let script = env.write("script.json", r#"[{"text": "Done."}]"#);
    let not_json = env.write("bad.json", "[");
    let file = env.write("a-file.txt", "x");
    let missing = env.arg("no-such-folder");
    let cases: [(&[&str], &str); 4] = [
        (
            &["--script", &script, "--workspace", &missing],
            "does not exist",
        ),
        (
            &["--script", &script, "--workspace", &file],
            "is not a folder",
        ),
        (
            &["--script", &env.arg("nope.json")],
            "cannot read the script",
        ),
        (&["--script", &not_json], "invalid script"),
    ];
    for (extra, cause) in cases {
        let mut args = vec!["run", "--provider", "scripted"];
        args.extend_from_slice(extra);
        args.push("Do it");
        let output = env.run(&args).await;
        let log = stderr(&output);
        assert_eq!(code(&output), 2, "{args:?}: {log}");
        assert_eq!(stdout(&output), "", "{args:?}");
        assert_eq!(log.lines().count(), 1, "{args:?}: {log}");
        assert_eq!(log.matches(cause).count(), 1, "{args:?}: {log}");
    }
    assert_eq!(
        std::fs::read_dir(env.traces()).unwrap().count(),
        0,
        "no trace was made"
    );
}
