//! The file tools (`read_file`, `write_file`, `edit_file`) through the registry, including every
//! way a path can try to leave the workspace.

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_tools::{ToolContext, ToolRegistry, ToolResult};
use serde_json::{Value, json};
use tempfile::TempDir;

struct Workspace {
    _dir: TempDir,
    outside: TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

impl Workspace {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(dir.path(), "trace-1").unwrap();
        Self {
            _dir: dir,
            outside,
            ctx,
            registry: ToolRegistry::with_builtins(),
        }
    }

    fn root(&self) -> &Path {
        &self.ctx.workspace
    }

    fn write(&self, relative: &str, content: &str) {
        let path = self.root().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.root().join(relative)).unwrap()
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

    async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert!(result.is_error, "expected an error, got {}", result.content);
        assert!(result.content.starts_with("error: "), "{}", result.content);
        result.content
    }
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\nthree\n");
    assert_eq!(
        ws.ok("read_file", json!({ "path": "a.txt" })).await,
        "     1\tone\n     2\ttwo\n     3\tthree\n"
    );
    let page = ws
        .ok(
            "read_file",
            json!({ "path": "a.txt", "offset": 2, "limit": 1 }),
        )
        .await;
    assert_eq!(
        page,
        "     2\ttwo\n\n[showing lines 2-2 of 3; use offset=3 to read more]"
    );
    let tail = ws
        .ok("read_file", json!({ "path": "a.txt", "offset": 3 }))
        .await;
    assert_eq!(tail, "     3\tthree\n");

    let long: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    ws.write("long.txt", &long);
    let first = ws.ok("read_file", json!({ "path": "long.txt" })).await;
    assert!(first.contains("  2000\tline 2000\n"));
    assert!(!first.contains("line 2001"));
    assert!(first.ends_with("[showing lines 1-2000 of 2500; use offset=2001 to read more]"));

    ws.write("empty.txt", "");
    assert_eq!(
        ws.ok("read_file", json!({ "path": "empty.txt" })).await,
        "(empty.txt is empty)"
    );
}

#[tokio::test]
async fn read_file_respects_the_output_limit() {
    let mut ws = Workspace::new();
    ws.ctx.limits.max_output_bytes = 100;
    let long: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    ws.write("long.txt", &long);
    let out = ws.ok("read_file", json!({ "path": "long.txt" })).await;
    assert!(out.contains("     1\tline 1\n"));
    assert!(out.contains("use offset="), "{out}");
    assert!(out.len() < 200, "{out}");
}

#[tokio::test]
async fn read_file_refuses_what_it_cannot_show() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
    std::fs::create_dir(ws.root().join("dir")).unwrap();
    std::fs::write(ws.root().join("blob.bin"), [0u8, 159, 146, 150, 0, 1]).unwrap();

    assert!(
        ws.err("read_file", json!({ "path": "missing.txt" }))
            .await
            .contains("\"missing.txt\" does not exist")
    );
    assert!(
        ws.err("read_file", json!({ "path": "dir" }))
            .await
            .contains("is a directory")
    );
    assert!(
        ws.err("read_file", json!({ "path": "blob.bin" }))
            .await
            .contains("binary file")
    );
    assert!(
        ws.err("read_file", json!({ "path": "a.txt", "offset": 5 }))
            .await
            .contains("past the end")
    );
    let wrong = ws
        .err("read_file", json!({ "path": "a.txt", "limit": "ten" }))
        .await;
    assert_eq!(
        wrong,
        "error: invalid arguments for read_file: argument `limit` must be an integer, got a string (\"ten\")"
    );
}

#[tokio::test]
async fn write_file_creates_parents_and_replaces_atomically() {
    let ws = Workspace::new();
    let out = ws
        .ok(
            "write_file",
            json!({ "path": "deep/er/new.txt", "content": "héllo" }),
        )
        .await;
    assert_eq!(out, "wrote 6 bytes to deep/er/new.txt (created)");
    assert_eq!(ws.read("deep/er/new.txt"), "héllo");

    let out = ws
        .ok(
            "write_file",
            json!({ "path": "deep/er/new.txt", "content": "bye" }),
        )
        .await;
    assert_eq!(out, "wrote 3 bytes to deep/er/new.txt (replaced)");
    assert_eq!(ws.read("deep/er/new.txt"), "bye");
    let leftovers: Vec<_> = std::fs::read_dir(ws.root().join("deep/er"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary files remain");

    std::fs::create_dir(ws.root().join("dir")).unwrap();
    assert!(
        ws.err("write_file", json!({ "path": "dir", "content": "x" }))
            .await
            .contains("is a directory")
    );
    assert!(
        ws.err("write_file", json!({ "path": "x.txt" }))
            .await
            .contains("missing required argument `content`")
    );
}

#[tokio::test]
async fn edit_file_replaces_exactly_what_was_asked() {
    let ws = Workspace::new();
    ws.write("code.rs", "fn a() {}\nfn b() {}\nfn a() {}\n");

    let once = ws
        .ok(
            "edit_file",
            json!({ "path": "code.rs", "old": "fn b", "new": "fn c" }),
        )
        .await;
    assert_eq!(once, "replaced 1 occurrence in code.rs");
    assert_eq!(ws.read("code.rs"), "fn a() {}\nfn c() {}\nfn a() {}\n");

    let twice = ws
        .err(
            "edit_file",
            json!({ "path": "code.rs", "old": "fn a", "new": "fn z" }),
        )
        .await;
    assert!(twice.contains("occurs 2 times"), "{twice}");
    assert_eq!(ws.read("code.rs"), "fn a() {}\nfn c() {}\nfn a() {}\n");

    let all = ws
        .ok(
            "edit_file",
            json!({ "path": "code.rs", "old": "fn a", "new": "fn z", "replace_all": true }),
        )
        .await;
    assert_eq!(all, "replaced 2 occurrences in code.rs");
    assert_eq!(ws.read("code.rs"), "fn z() {}\nfn c() {}\nfn z() {}\n");

    assert!(
        ws.err(
            "edit_file",
            json!({ "path": "code.rs", "old": "nope", "new": "x" })
        )
        .await
        .contains("not found")
    );
    assert!(
        ws.err(
            "edit_file",
            json!({ "path": "code.rs", "old": "fn c", "new": "fn c" })
        )
        .await
        .contains("the same")
    );
    assert!(
        ws.err(
            "edit_file",
            json!({ "path": "code.rs", "old": "", "new": "x" })
        )
        .await
        .contains("must not be empty")
    );
    assert!(
        ws.err(
            "edit_file",
            json!({ "path": "none.rs", "old": "a", "new": "b" })
        )
        .await
        .contains("does not exist")
    );
    let flag = ws
        .err(
            "edit_file",
            json!({ "path": "code.rs", "old": "a", "new": "b", "replace_all": "yes" }),
        )
        .await;
    assert!(
        flag.contains("argument `replace_all` must be a boolean"),
        "{flag}"
    );
}

#[tokio::test]
async fn no_file_tool_leaves_the_workspace() {
    let ws = Workspace::new();
    std::fs::write(ws.outside.path().join("secret.txt"), "secret").unwrap();
    symlink(ws.outside.path(), ws.root().join("escape")).unwrap();
    symlink(
        ws.outside.path().join("secret.txt"),
        ws.root().join("secret-link"),
    )
    .unwrap();
    ws.write("inside/real.txt", "inside\n");
    symlink(ws.root().join("inside"), ws.root().join("alias")).unwrap();
    let outside_secret = ws
        .outside
        .path()
        .join("secret.txt")
        .to_str()
        .unwrap()
        .to_owned();

    let attempts = [
        "../secret.txt".to_owned(),
        "inside/../../secret.txt".to_owned(),
        outside_secret.clone(),
        "escape/secret.txt".to_owned(),
        "secret-link".to_owned(),
        "escape/new.txt".to_owned(),
    ];
    for path in &attempts {
        let expected = format!("error: path {path:?} is outside the workspace");
        assert_eq!(
            ws.call("read_file", json!({ "path": path })).await.content,
            expected
        );
        assert_eq!(
            ws.call("write_file", json!({ "path": path, "content": "x" }))
                .await
                .content,
            expected
        );
        assert_eq!(
            ws.call(
                "edit_file",
                json!({ "path": path, "old": "secret", "new": "x" })
            )
            .await
            .content,
            expected
        );
        assert_eq!(
            ws.call("grep", json!({ "pattern": "secret", "path": path }))
                .await
                .content,
            expected
        );
    }
    assert_eq!(std::fs::read_to_string(&outside_secret).unwrap(), "secret");
    assert!(!ws.outside.path().join("new.txt").exists());

    // A symlink that stays inside the workspace is fine, and so is an absolute path inside it.
    assert_eq!(
        ws.ok("read_file", json!({ "path": "alias/real.txt" }))
            .await,
        "     1\tinside\n"
    );
    let absolute = ws.root().join("inside/real.txt");
    assert_eq!(
        ws.ok("read_file", json!({ "path": absolute })).await,
        "     1\tinside\n"
    );
    ws.ok(
        "write_file",
        json!({ "path": "alias/other.txt", "content": "ok" }),
    )
    .await;
    assert_eq!(ws.read("inside/other.txt"), "ok");
}

#[tokio::test]
async fn read_file_of_a_picture_returns_the_image_and_refuses_a_huge_one() {
    let ws = Workspace::new();
    std::fs::write(ws.root().join("shot.png"), agent_test_support::TINY_PNG).unwrap();
    let result = ws.call("read_file", json!({ "path": "shot.png" })).await;
    assert!(!result.is_error, "{}", result.content);
    assert!(
        result
            .content
            .contains("shot.png is a picture (image/png, 73 bytes)")
    );
    assert_eq!(result.images.len(), 1);
    assert_eq!(result.images[0].media_type, "image/png");
    assert_eq!(result.images[0].data, agent_test_support::TINY_PNG);
    // A picture too large for any provider is refused with the reason, and nothing is attached.
    let mut huge = agent_test_support::TINY_PNG.to_vec();
    huge.resize(6 * 1024 * 1024, 0);
    std::fs::write(ws.root().join("huge.png"), huge).unwrap();
    let result = ws.call("read_file", json!({ "path": "huge.png" })).await;
    assert!(
        result.is_error && result.content.contains("more than"),
        "{}",
        result.content
    );
    assert!(result.images.is_empty());
}
