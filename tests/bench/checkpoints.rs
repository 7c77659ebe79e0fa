//! Section 8: what checkpoints cost. A workspace of source-like files (10,000 in a full run) is
//! snapshotted into a shadow store as a run would at its goal boundaries: the first snapshot
//! (every file read and stored), a snapshot with nothing changed (only the index's stat check),
//! one after ten files changed, and a restore of the first snapshot; then the store's size on
//! disk against the workspace's bytes.

use std::path::Path;
use std::time::Instant;

use agent_checkpoint::{CheckpointStore, Limits, RestoreOptions};
use anyhow::{Result, bail};

use crate::stats::{Sample, count, seconds};

/// The figures of one workspace size.
pub(crate) struct CheckpointCost {
    /// Files in the workspace.
    pub(crate) files: usize,
    /// Bytes of those files.
    pub(crate) bytes: u64,
    /// The first snapshot, every file new.
    pub(crate) first: Sample,
    /// A snapshot with nothing changed.
    pub(crate) unchanged: Sample,
    /// A snapshot after ten files changed.
    pub(crate) ten_changed: Sample,
    /// Restoring the first snapshot over the ten changes.
    pub(crate) restore: Sample,
    /// The store on disk after those snapshots (loose objects, never packed).
    pub(crate) store_bytes: u64,
}

fn source_file(i: usize) -> String {
    let mut text = format!("//! Module {i}: generated for the benchmark.\n\n");
    for f in 0..(20 + i % 40) {
        text.push_str(&format!(
            "pub fn function_{i}_{f}(x: u64) -> u64 {{\n    x.wrapping_mul({}) ^ {}\n}}\n\n",
            i * 31 + f,
            f * 7 + 3
        ));
    }
    text
}

fn make_workspace(root: &Path, files: usize) -> Result<u64> {
    let mut bytes = 0;
    for i in 0..files {
        let dir = root.join(format!("src/m{:03}", i % 100));
        std::fs::create_dir_all(&dir)?;
        let text = source_file(i);
        bytes += text.len() as u64;
        std::fs::write(dir.join(format!("f{i}.rs")), text)?;
    }
    std::fs::write(root.join(".gitignore"), "target/\n")?;
    Ok(bytes)
}

fn size_on_disk(dir: &Path) -> u64 {
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.metadata() {
            Ok(meta) if meta.is_dir() => total += size_on_disk(&path),
            Ok(meta) => total += meta.len(),
            Err(_) => {}
        }
    }
    total
}

/// Measures a workspace of `files` files, `runs` times (a fresh workspace and store each run).
pub(crate) fn measure(files: usize, runs: usize) -> Result<CheckpointCost> {
    eprintln!("agent-bench: checkpoints of a workspace of {files} files");
    let mut cost = CheckpointCost {
        files,
        bytes: 0,
        first: Sample::default(),
        unchanged: Sample::default(),
        ten_changed: Sample::default(),
        restore: Sample::default(),
        store_bytes: 0,
    };
    for _ in 0..runs.max(1) {
        let workspace = tempfile::tempdir()?;
        let traces = tempfile::tempdir()?;
        cost.bytes = make_workspace(workspace.path(), files)?;
        let store_dir = traces.path().join("checkpoints.git");
        let store = CheckpointStore::open(&store_dir, workspace.path(), Limits::default())?;
        let timed = |sample: &mut Sample, label: &str| -> Result<_> {
            let started = Instant::now();
            let id = store.snapshot(label)?;
            sample.push(started.elapsed().as_secs_f64());
            Ok(id)
        };
        let first = timed(&mut cost.first, "first")?;
        timed(&mut cost.unchanged, "unchanged")?;
        for i in 0..10 {
            let path = workspace
                .path()
                .join(format!("src/m{:03}/f{i}.rs", i % 100));
            std::fs::write(path, format!("// changed {i}\n"))?;
        }
        timed(&mut cost.ten_changed, "ten changed")?;
        let started = Instant::now();
        let changes = store.restore(&first, RestoreOptions::default())?;
        cost.restore.push(started.elapsed().as_secs_f64());
        if changes.modified.len() != 10 {
            bail!(
                "the restore put back {} files instead of 10",
                changes.modified.len()
            );
        }
        cost.store_bytes = size_on_disk(&store_dir);
    }
    Ok(cost)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// The summary table's row.
pub(crate) fn summary_rows(cost: &CheckpointCost) -> String {
    format!(
        "| 8. checkpoints | snapshot of a workspace of {} files at a goal boundary, nothing changed / ten files changed | {} / {} | first snapshot {} | store {} for {} of files |\n",
        count(cost.files as f64),
        cost.unchanged.show(seconds),
        cost.ten_changed.show(seconds),
        cost.first.show(seconds),
        mib(cost.store_bytes),
        mib(cost.bytes),
    )
}

/// The report's section.
pub(crate) fn section(cost: &CheckpointCost) -> String {
    format!(
        "\n## 8. Checkpoints\n\n\
         A workspace of {} source-like files ({}) in {} folders is snapshotted into a shadow git \
         store (`agent-checkpoint`, the `git` program, an index of its own) as a run does at its \
         goal boundaries. The first snapshot reads and stores every file; later ones check each \
         file's stat against the store's index and read only the changed ones. Medians \
         (min–max) of fresh workspaces.\n\n\
         | step | time |\n|---|---:|\n\
         | first snapshot (every file stored) | {} |\n\
         | snapshot, nothing changed | {} |\n\
         | snapshot, ten files changed | {} |\n\
         | restore of the first snapshot over the ten changes | {} |\n\n\
         The store after these three snapshots and the restore's own takes {} on disk for {} of \
         files: git's compressed loose objects, one blob per distinct file content and one tree per \
         folder and snapshot, never packed during a run.\n",
        count(cost.files as f64),
        mib(cost.bytes),
        cost.files.min(100),
        cost.first.show(seconds),
        cost.unchanged.show(seconds),
        cost.ten_changed.show(seconds),
        cost.restore.show(seconds),
        mib(cost.store_bytes),
        mib(cost.bytes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_workspace_is_measured_and_reported() {
        let files: usize = std::env::var("AGENT_BENCH_CHECKPOINT_FILES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(50);
        let cost = measure(files, 1).unwrap();
        assert_eq!(cost.files, files);
        assert!(cost.store_bytes > 0);
        let row = summary_rows(&cost);
        assert!(row.starts_with("| 8. checkpoints |"), "{row}");
        let section = section(&cost);
        println!("{row}{section}");
        assert!(section.contains("## 8. Checkpoints"), "{section}");
    }
}
