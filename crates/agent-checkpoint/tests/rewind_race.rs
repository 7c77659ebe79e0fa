//! A restore while another process swaps a folder of the workspace for a symlink to a folder
//! outside, as fast as it can (a command left running with the sandbox off could): the restore
//! deletes files in the folder, and never the same-named files outside. The same deletions made
//! the plain way, through the path, do delete outside files under the same race, which shows the
//! race is really run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use agent_checkpoint::{CheckpointStore, Limits, RestoreOptions};

/// Swaps `root/dir` with a symlink to `outside` until told to stop.
fn swap(root: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (dir, parked) = (root.join("dir"), root.join("parked"));
        while !stop.load(Ordering::Relaxed) {
            if std::fs::rename(&dir, &parked).is_err() {
                continue;
            }
            if std::os::unix::fs::symlink(&outside, &dir).is_ok() {
                std::thread::yield_now();
                let _ = std::fs::remove_file(&dir);
            }
            // Bounded, so that the stop is always seen.
            for _ in 0..1000 {
                if std::fs::rename(&parked, &dir).is_ok() {
                    break;
                }
                // A restore may have emptied and removed the parked folder.
                if !parked.exists() {
                    let _ = std::fs::create_dir(&dir);
                    break;
                }
                let _ = std::fs::remove_dir_all(&dir);
            }
        }
    })
}

/// The outside files that were deleted.
fn victims(outside: &Path) -> usize {
    (0..20)
        .filter(|i| !outside.join(format!("f{i}.txt")).exists())
        .count()
}

fn plant(dir: &Path) {
    for i in 0..20 {
        let _ = std::fs::write(dir.join(format!("f{i}.txt")), "x");
    }
}

#[test]
fn a_restore_never_deletes_outside_through_a_swapped_folder() {
    let workspace = tempfile::tempdir().unwrap();
    let traces = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = workspace.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("dir")).unwrap();
    std::fs::write(root.join("dir/keep.txt"), "keep").unwrap();
    let store = CheckpointStore::open(
        traces.path().join("checkpoints.git"),
        &root,
        Limits::default(),
    )
    .unwrap();
    let first = store.snapshot("first").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = swap(root.clone(), outside.path().to_path_buf(), stop.clone());
    let started = Instant::now();
    let mut restores = 0;
    while started.elapsed() < Duration::from_secs(4) && restores < 40 {
        plant(outside.path());
        plant(&root.join("dir"));
        // The planted files are not in the first snapshot: the restore deletes them.
        let _ = store.restore(
            &first,
            RestoreOptions {
                force: true,
                dry_run: false,
            },
        );
        restores += 1;
        assert_eq!(
            victims(outside.path()),
            0,
            "a restore deleted a file outside"
        );
    }
    // The plain way, under the same race, deletes outside.
    let mut plain_victims = 0;
    let started = Instant::now();
    while plain_victims == 0 && started.elapsed() < Duration::from_secs(20) {
        plant(outside.path());
        plant(&root.join("dir"));
        for i in 0..20 {
            let _ = std::fs::remove_file(root.join(format!("dir/f{i}.txt")));
        }
        plain_victims = victims(outside.path());
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    println!("REWIND-RACE {{\"restores\":{restores},\"plain_victims\":{plain_victims}}}");
    assert!(restores > 0);
    assert!(
        plain_victims > 0,
        "the race never sent a plain deletion outside"
    );
}
