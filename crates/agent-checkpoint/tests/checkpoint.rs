//! Snapshots, restores and diffs of real workspaces with the real `git`, and the user's own
//! repository left exactly as it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use agent_checkpoint::{
    Changes, CheckpointError, CheckpointStore, Checkpointer, DiffTarget, EntriesExt,
    FolderCheckpoints, Limits, Point, RestoreOptions,
};

/// Every file under `root` (but `.git`) with its bytes.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() == ".git" {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().into(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn write(root: &Path, path: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=u",
            "-c",
            "user.email=u@x",
            "-c",
            "commit.gpgSign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The user's repository as a test can see it: HEAD, refs, stash, index bytes. (Not `git
/// status`: it would run the user's filter itself.)
fn repo_state(dir: &Path) -> (String, String, Vec<u8>) {
    (
        git(dir, &["rev-parse", "HEAD"]),
        git(dir, &["for-each-ref"]) + &git(dir, &["stash", "list"]),
        fs::read(dir.join(".git/index")).unwrap(),
    )
}

struct Fixture {
    workspace: tempfile::TempDir,
    traces: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Self {
            workspace: tempfile::tempdir().unwrap(),
            traces: tempfile::tempdir().unwrap(),
        }
    }

    fn ws(&self) -> &Path {
        self.workspace.path()
    }

    fn store(&self, limits: Limits) -> CheckpointStore {
        CheckpointStore::open(
            self.traces.path().join("checkpoints.git"),
            self.ws(),
            limits,
        )
        .unwrap()
    }
}

const SMALL: Limits = Limits {
    max_file_bytes: 1000,
    max_snapshot_bytes: 100_000,
};

#[test]
fn a_restore_makes_the_workspace_byte_identical_and_leaves_ignored_and_large_files_alone() {
    let f = Fixture::new();
    let ws = f.ws();
    write(ws, ".gitignore", "build/\n*.log\n");
    write(ws, "src/main.rs", "fn main() {}\n");
    write(ws, "logo.png", [0u8, 159, 146, 150, 255, 0, 10, 13]);
    write(ws, "build/out.o", "object");
    write(ws, "big.bin", vec![7u8; 5000]);
    let store = f.store(SMALL);
    let start = store.snapshot("start").unwrap();
    let before = files(ws);

    write(ws, "src/main.rs", "fn main() { println!(\"hi\"); }\n");
    write(ws, "src/lib/new.rs", "pub fn f() {}\n");
    fs::remove_file(ws.join("logo.png")).unwrap();
    write(ws, "build/out.o", "object 2");
    write(ws, "run.log", "log");
    write(ws, "big.bin", vec![8u8; 6000]);
    store.snapshot("end").unwrap();

    let dry = store
        .restore(
            &start,
            RestoreOptions {
                dry_run: true,
                force: false,
            },
        )
        .unwrap();
    assert_eq!(
        dry,
        Changes {
            added: vec!["logo.png".into()],
            modified: vec!["src/main.rs".into()],
            deleted: vec!["src/lib/new.rs".into()],
        }
    );
    assert!(
        ws.join("src/lib/new.rs").exists(),
        "a dry run changes nothing"
    );
    assert_eq!(
        store.restore(&start, RestoreOptions::default()).unwrap(),
        dry
    );

    let after = files(ws);
    for (path, bytes) in &before {
        let kept = matches!(path.to_str().unwrap(), "build/out.o" | "big.bin");
        if !kept {
            assert_eq!(after.get(path), Some(bytes), "{}", path.display());
        }
    }
    assert_eq!(
        after[Path::new("build/out.o")],
        b"object 2",
        "ignored: untouched"
    );
    assert_eq!(
        after[Path::new("big.bin")],
        vec![8u8; 6000],
        "over the cap: untouched"
    );
    assert_eq!(after[Path::new("run.log")], b"log", "ignored: not deleted");
    assert!(
        !ws.join("src/lib").exists(),
        "the folder the restore emptied is gone"
    );
    let entries = store.entries().unwrap();
    assert_eq!(entries[0].skipped, ["big.bin"]);
    assert_eq!(entries.last().unwrap().point, Point::Restored);
}

#[test]
fn the_users_repository_index_refs_and_stash_are_never_touched() {
    let f = Fixture::new();
    let ws = f.ws();
    git(ws, &["init", "-q"]);
    write(ws, "a.txt", "one");
    git(ws, &["add", "a.txt"]);
    git(ws, &["commit", "-q", "-m", "first"]);
    write(ws, "a.txt", "stashed");
    git(ws, &["stash", "-q"]);
    write(ws, "staged.txt", "staged");
    git(ws, &["add", "staged.txt"]);
    write(ws, ".git/info/exclude", "secret.txt\n");
    write(ws, "secret.txt", "never in a snapshot");
    // A filter the user's repository names would run a program if its configuration were read.
    let marker = f.traces.path().join("filter-ran");
    git(
        ws,
        &[
            "config",
            "filter.evil.clean",
            &format!("touch {}; cat", marker.display()),
        ],
    );
    write(ws, ".gitattributes", "*.txt filter=evil\n");
    let state = repo_state(ws);

    let store = f.store(Limits::default());
    let start = store.snapshot("start").unwrap();
    write(ws, "a.txt", "changed by the run");
    write(ws, "b.txt", "new");
    store.snapshot("end").unwrap();
    store.restore(&start, RestoreOptions::default()).unwrap();
    let diff = store.diff(&start, &DiffTarget::Workspace).unwrap();

    assert_eq!(diff, "");
    assert_eq!(fs::read_to_string(ws.join("a.txt")).unwrap(), "one");
    assert!(!ws.join("b.txt").exists());
    assert!(
        !marker.exists(),
        "no filter of the user's configuration ran"
    );
    assert_eq!(repo_state(ws), state);
    let tree = Command::new("git")
        .args(["ls-tree", "-r", "--name-only", start.as_str()])
        .env("GIT_DIR", store.store_dir())
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&tree.stdout).into_owned();
    assert!(
        !names.contains("secret.txt"),
        "info/exclude is honoured: {names}"
    );
    assert!(!names.contains(".git/"), "{names}");
}

#[test]
fn a_file_changed_since_the_newest_snapshot_is_kept_unless_forced() {
    let f = Fixture::new();
    let ws = f.ws();
    write(ws, "notes.md", "v1");
    write(ws, "code.rs", "v1");
    let store = f.store(Limits::default());
    let start = store.snapshot("start").unwrap();
    write(ws, "notes.md", "v2 by the run");
    write(ws, "code.rs", "v2 by the run");
    store.snapshot("end").unwrap();
    write(ws, "notes.md", "v3 by the user");

    let refused = store
        .restore(&start, RestoreOptions::default())
        .unwrap_err();
    assert!(
        matches!(&refused, CheckpointError::Conflicts { paths } if paths == &["notes.md"]),
        "{refused}"
    );
    assert_eq!(
        fs::read_to_string(ws.join("code.rs")).unwrap(),
        "v2 by the run"
    );
    assert_eq!(
        fs::read_to_string(ws.join("notes.md")).unwrap(),
        "v3 by the user"
    );

    let forced = store
        .restore(
            &start,
            RestoreOptions {
                force: true,
                dry_run: false,
            },
        )
        .unwrap();
    assert_eq!(forced.modified, ["code.rs", "notes.md"]);
    assert_eq!(fs::read_to_string(ws.join("notes.md")).unwrap(), "v1");
}

#[test]
fn a_snapshot_over_the_cap_is_recorded_as_failed_and_the_next_one_works() {
    let f = Fixture::new();
    let ws = f.ws();
    for i in 0..20 {
        write(ws, &format!("f{i}.txt"), vec![b'x'; 900]);
    }
    let store = f.store(Limits {
        max_file_bytes: 1000,
        max_snapshot_bytes: 10_000,
    });
    let error = store.snapshot("too big").unwrap_err();
    assert!(matches!(
        error,
        CheckpointError::TooLarge {
            bytes: 18_000,
            cap: 10_000
        }
    ));
    for i in 0..15 {
        fs::remove_file(ws.join(format!("f{i}.txt"))).unwrap();
    }
    let id = store.snapshot("fits").unwrap();
    let entries = store.entries().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(
        entries[0]
            .error
            .as_deref()
            .unwrap()
            .contains("over the cap")
    );
    assert_eq!(entries.latest_snapshot(), Some(id));
    assert_eq!(entries[1].files, 5);
}

#[test]
fn diffs_between_snapshots_and_with_the_workspace_are_unified_diffs() {
    let f = Fixture::new();
    let ws = f.ws();
    write(ws, "a.txt", "one\ntwo\n");
    write(ws, "img.bin", [0u8, 1, 2, 0]);
    let store = f.store(Limits::default());
    let first = store.snapshot("first").unwrap();
    write(ws, "a.txt", "one\nthree\n");
    write(ws, "img.bin", [0u8, 1, 3, 0]);
    let second = store.snapshot("second").unwrap();
    write(ws, "c.txt", "new\n");

    let diff = store
        .diff(&first, &DiffTarget::Snapshot(second.clone()))
        .unwrap();
    assert!(diff.contains("--- a/a.txt\n+++ b/a.txt\n"), "{diff}");
    assert!(diff.contains("-two\n+three\n"), "{diff}");
    assert!(
        diff.contains("Binary files a/img.bin and b/img.bin differ"),
        "{diff}"
    );
    let now = store.diff(&second, &DiffTarget::Workspace).unwrap();
    assert!(now.contains("+++ b/c.txt\n@@ -0,0 +1 @@\n+new\n"), "{now}");
    assert_eq!(store.resolve("first").unwrap(), first);
    assert_eq!(store.resolve(&second.as_str()[..10]).unwrap(), second);
    assert!(store.resolve("nope").is_err());
}

#[test]
fn unchanged_files_are_not_stored_again() {
    let f = Fixture::new();
    let ws = f.ws();
    for i in 0..200 {
        write(ws, &format!("d{}/f{i}.txt", i % 10), format!("file {i}\n"));
    }
    let store = f.store(Limits::default());
    let first = store.snapshot("first").unwrap();
    let objects = || {
        let out = Command::new("git")
            .args(["count-objects"])
            .env("GIT_DIR", store.store_dir())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let before = objects();
    let second = store.snapshot("second").unwrap();
    assert_ne!(first, second);
    // One commit more, no blob or tree.
    let count = |s: &str| s.split_whitespace().next().unwrap().parse::<u32>().unwrap();
    assert_eq!(count(&objects()), count(&before) + 1);
}

#[test]
fn a_trace_folder_inside_the_workspace_is_never_snapshotted() {
    let f = Fixture::new();
    let ws = f.ws();
    write(ws, "code.rs", "v1");
    let traces = ws.join(".trace");
    let checkpoints = FolderCheckpoints::new(&traces, ws, Limits::default());
    let goal = Point::GoalStart {
        goal_id: "1".into(),
    };
    let taken = checkpoints.checkpoint("t1", &[goal]).unwrap().unwrap();
    assert_eq!(taken.files, 1, "only code.rs: {taken:?}");
    write(ws, "code.rs", "v2");
    write(ws, "new.rs", "new");
    let end = Point::GoalEnd {
        goal_id: "1".into(),
        abandoned: true,
    };
    checkpoints.checkpoint("t1", &[end]).unwrap();
    let changes = checkpoints
        .roll_back_goal("t1", "1", RestoreOptions::default())
        .unwrap();
    assert_eq!(changes.modified, ["code.rs"]);
    assert_eq!(changes.deleted, ["new.rs"]);
    assert!(
        traces
            .join("t1/checkpoints.git/checkpoints.jsonl")
            .is_file()
    );
    let entries = checkpoints.store("t1").unwrap().entries().unwrap();
    assert_eq!(entries.goal_start("1"), Some(taken.id));
}

#[test]
fn each_snapshot_follows_the_one_before_whether_the_ref_is_loose_or_packed() {
    let f = Fixture::new();
    let ws = f.ws();
    write(ws, "a.txt", "one\n");
    let store = f.store(Limits::default());
    let history = || {
        let out = Command::new("git")
            .args(["rev-list", "refs/heads/snapshots"])
            .env("GIT_DIR", store.store_dir())
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let first = store.snapshot("first").unwrap();
    write(ws, "a.txt", "two\n");
    let second = store.snapshot("second").unwrap();
    assert_eq!(history(), [second.0.clone(), first.0.clone()]);
    // A packed ref has no file of its own: the store asks git for it.
    let packed = Command::new("git")
        .args(["pack-refs", "--all"])
        .env("GIT_DIR", store.store_dir())
        .status()
        .unwrap();
    assert!(packed.success());
    assert!(!store.store_dir().join("refs/heads/snapshots").exists());
    write(ws, "a.txt", "three\n");
    let third = store.snapshot("third").unwrap();
    assert_eq!(history(), [third.0, second.0, first.0]);
}
