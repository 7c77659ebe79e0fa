//! The search tools (`glob_files`, `grep`) through the registry: ignore rules, ordering, caps and
//! errors.

use agent_tools::{ToolContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Workspace {
    _dir: TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Workspace {
    /// A workspace with a small tree, a `.gitignore`, a `.git` directory and a binary file.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path(), "trace-1").unwrap();
        let ws = Self {
            _dir: dir,
            ctx,
            registry: ToolRegistry::with_builtins(),
        };
        ws.write("src/main.rs", "fn main() {\n    helper();\n}\n");
        ws.write("src/lib/helper.rs", "pub fn helper() {}\n// TODO: more\n");
        ws.write("README.md", "# Demo\nTODO: write docs\n");
        ws.write(".gitignore", "target/\n*.log\n");
        ws.write("target/debug/out.rs", "fn helper() {}\n");
        ws.write("run.log", "helper\n");
        ws.write(".git/config", "helper\n");
        ws.write(".github/ci.yml", "helper: yes\n");
        std::fs::write(ws.ctx.workspace.join("image.bin"), b"helper\0\x01\x02").unwrap();
        ws
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.ctx.workspace.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.registry
            .execute(tool, &args.to_string(), &self.ctx)
            .await
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert!(!result.is_error, "expected success, got {}", result.content);
        result.content
    }
}

#[tokio::test]
async fn glob_files_lists_sorted_matches_and_respects_gitignore() {
    let ws = Workspace::new();
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": "**/*.rs" })).await,
        "src/lib/helper.rs\nsrc/main.rs"
    );
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": "src/*.rs" })).await,
        "src/main.rs"
    );
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": "./*.md" })).await,
        "README.md"
    );
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": "**/*.yml" })).await,
        ".github/ci.yml"
    );
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": "**/config" })).await,
        "no files match \"**/config\""
    );
    let absolute = format!("{}/src/*.rs", ws.ctx.workspace.display());
    assert_eq!(
        ws.ok("glob_files", json!({ "pattern": absolute })).await,
        "src/main.rs"
    );
}

#[tokio::test]
async fn glob_files_caps_the_number_of_results() {
    let ws = Workspace::new();
    for i in 0..1005 {
        ws.write(&format!("many/f{i:04}.txt"), "");
    }
    let out = ws
        .ok("glob_files", json!({ "pattern": "many/*.txt" }))
        .await;
    assert!(out.starts_with("many/f0000.txt\nmany/f0001.txt\n"));
    assert!(out.contains("many/f0999.txt\n"));
    assert!(!out.contains("many/f1000.txt"));
    assert!(
        out.ends_with("[showing 1000 of 1005 matching files; use a narrower pattern]"),
        "{out}"
    );
}

#[tokio::test]
async fn glob_files_rejects_bad_patterns() {
    let ws = Workspace::new();
    let escape = ws.call("glob_files", json!({ "pattern": "../*" })).await;
    assert!(escape.is_error);
    assert_eq!(
        escape.content,
        "error: path \"../*\" is outside the workspace"
    );
    let invalid = ws.call("glob_files", json!({ "pattern": "src/[a" })).await;
    assert!(
        invalid.is_error && invalid.content.contains("invalid glob pattern"),
        "{}",
        invalid.content
    );
}

#[tokio::test]
async fn grep_reports_path_line_and_text() {
    let ws = Workspace::new();
    assert_eq!(
        ws.ok("grep", json!({ "pattern": "helper" })).await,
        ".github/ci.yml:1: helper: yes\nsrc/lib/helper.rs:1: pub fn helper() {}\nsrc/main.rs:2:     helper();"
    );
    assert_eq!(
        ws.ok("grep", json!({ "pattern": "TODO", "glob": "*.rs" }))
            .await,
        "src/lib/helper.rs:2: // TODO: more"
    );
    assert_eq!(
        ws.ok("grep", json!({ "pattern": "TODO", "path": "README.md" }))
            .await,
        "README.md:2: TODO: write docs"
    );
    assert_eq!(
        ws.ok(
            "grep",
            json!({ "pattern": "fn \\w+\\(", "path": "src", "glob": "src/lib/**" })
        )
        .await,
        "src/lib/helper.rs:1: pub fn helper() {}"
    );
    assert_eq!(
        ws.ok("grep", json!({ "pattern": "absent" })).await,
        "no matches for \"absent\""
    );
}

#[tokio::test]
async fn grep_caps_matches_and_rejects_bad_input() {
    let ws = Workspace::new();
    let many: String = (0..600).map(|i| format!("match {i}\n")).collect();
    ws.write("many.txt", &many);
    let out = ws
        .ok("grep", json!({ "pattern": "^match", "path": "many.txt" }))
        .await;
    assert_eq!(
        out.lines().filter(|l| l.starts_with("many.txt:")).count(),
        500
    );
    assert!(
        out.ends_with("[stopped after 500 matches; narrow the pattern, path or glob]"),
        "{out}"
    );

    let invalid = ws.call("grep", json!({ "pattern": "(unclosed" })).await;
    assert!(
        invalid.is_error && invalid.content.contains("invalid regular expression"),
        "{}",
        invalid.content
    );
    let missing = ws
        .call("grep", json!({ "pattern": "x", "path": "nope" }))
        .await;
    assert_eq!(missing.content, "error: \"nope\" does not exist");
    let no_pattern = ws.call("grep", json!({ "path": "src" })).await;
    assert_eq!(
        no_pattern.content,
        "error: invalid arguments for grep: missing required argument `pattern` (a string)"
    );
}
