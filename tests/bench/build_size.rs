//! What a downstream project compiles: the crates `cargo tree` counts for the smallest offline
//! agent (the runner without default features), the runner with its defaults, the facade with
//! its defaults and the `agent` binary; and, in a full run, the clean debug build time of the
//! smallest agent against the binary's, one after the other in a scratch target folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// One build measured.
pub(crate) struct Build {
    /// What it is, for people.
    pub(crate) name: &'static str,
    /// `cargo` arguments selecting it.
    args: &'static [&'static str],
    /// The crates `cargo tree -e normal` lists, its own included.
    pub(crate) crates: usize,
    /// Its clean build's wall time in seconds (full runs only).
    pub(crate) seconds: Option<f64>,
}

/// The builds compared; the first is the smallest agent, the last the binary.
const BUILDS: [(&str, &[&str]); 4] = [
    (
        "smallest offline agent: goaltree-runner, no default features",
        &["-p", "goaltree-runner", "--no-default-features"],
    ),
    (
        "goaltree-runner, default features",
        &["-p", "goaltree-runner"],
    ),
    (
        "goaltree (the facade), default features",
        &["-p", "goaltree"],
    ),
    ("the `agent` binary (goaltree-cli)", &["-p", "goaltree-cli"]),
];

fn root() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.parent().unwrap_or(here).to_path_buf()
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The crates `cargo tree` lists for `args`.
fn crates(args: &[&str]) -> Result<usize> {
    let output = Command::new(cargo())
        .current_dir(root())
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}"])
        .args(args)
        .output()
        .context("cargo tree")?;
    if !output.status.success() {
        bail!("cargo tree: {}", String::from_utf8_lossy(&output.stderr));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let names: BTreeSet<&str> = text.lines().filter_map(|l| l.split(" (").next()).collect();
    Ok(names.len())
}

/// Counts every build's crates; with `time`, also builds the smallest agent and the binary
/// from nothing, one after the other, in a scratch target folder.
pub(crate) fn measure(time: bool) -> Result<Vec<Build>> {
    let mut builds = Vec::new();
    for (name, args) in BUILDS {
        builds.push(Build {
            name,
            args,
            crates: crates(args)?,
            seconds: None,
        });
    }
    if time {
        let last = builds.len() - 1;
        for index in [0, last] {
            let scratch = tempfile::tempdir()?;
            let started = Instant::now();
            let status = Command::new(cargo())
                .current_dir(root())
                .args(["build", "--locked", "--quiet"])
                .args(builds[index].args)
                .env("CARGO_TARGET_DIR", scratch.path())
                .status()
                .context("cargo build")?;
            if !status.success() {
                bail!("the build of {} failed", builds[index].name);
            }
            builds[index].seconds = Some(started.elapsed().as_secs_f64());
        }
    }
    Ok(builds)
}

/// The summary's row: the smallest agent against the binary.
pub(crate) fn summary_rows(builds: &[Build]) -> String {
    let (small, full) = (&builds[0], &builds[builds.len() - 1]);
    let mut rows = format!(
        "| 9. build | crates compiled, smallest offline agent vs the `agent` binary | {} | {} | {:.2}× the crates |\n",
        small.crates,
        full.crates,
        small.crates as f64 / full.crates as f64
    );
    if let (Some(a), Some(b)) = (small.seconds, full.seconds) {
        rows.push_str(&format!(
            "| 9. build | clean debug build, smallest offline agent vs the `agent` binary | {a:.0} s | {b:.0} s | {:.2}× the time |\n",
            a / b
        ));
    }
    rows
}

/// The report's section.
pub(crate) fn section(builds: &[Build]) -> String {
    let mut out = String::from(
        "\n## 9. What a downstream project compiles\n\n\
         The crates `cargo tree -e normal` lists for each build (its own included), and in a \
         full run the wall time of a clean debug build in an empty target folder, the two \
         builds one after the other. The smallest offline agent is the runner without default \
         features: the model types and the scripted client, the records and the in-memory \
         store, the tools without the shell-rule parser and the sandbox, token estimates \
         without tiktoken.\n\n\
         | build | crates | clean debug build |\n|---|---:|---:|\n",
    );
    for build in builds {
        let time = build
            .seconds
            .map_or_else(|| "—".to_owned(), |s| format!("{s:.0} s"));
        out.push_str(&format!("| {} | {} | {time} |\n", build.name, build.crates));
    }
    out
}
