//! The checks of what downstream projects get: the packages as they would be published, a
//! publish dry run of the crates that depend on no other crate of the workspace, the lean build
//! (no default features) tested and documented, and a project outside the workspace built against a fresh
//! resolve of the newest compatible dependencies, failing on any warning, then run.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{cargo, cargo_bin, workspace_root};

/// The crates that depend on no other crate of the workspace: a publish dry run builds them
/// from their packaged sources alone.
const LEAVES: [&str; 3] = ["goaltree-goal", "goaltree-checkpoint", "goaltree-tools"];

/// Runs every check of the release side.
pub(crate) fn check() -> Result<()> {
    // Every crate but the tests' own packs as it would be published: metadata, licence files,
    // READMEs and versioned dependencies on each other.
    cargo(&[
        "package",
        "--workspace",
        "--locked",
        "--no-verify",
        "--exclude",
        "agent-test-support",
        "--exclude",
        "agent-e2e",
        "--exclude",
        "xtask",
    ])?;
    let mut publish = vec!["publish", "--dry-run", "--locked", "--allow-dirty"];
    for leaf in LEAVES {
        publish.extend(["-p", leaf]);
    }
    cargo(&publish)?;
    // The lean build: without the shell-rule parser and the sandbox, the tools' own tests.
    // The lean builds' documentation has no broken link either.
    crate::cargo_env(
        &[
            "doc",
            "--no-deps",
            "--locked",
            "--no-default-features",
            "-p",
            "goaltree-llm",
            "-p",
            "goaltree-tools",
            "-p",
            "goaltree-context",
            "-p",
            "goaltree-runner",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    let lean = ["--locked", "-p", "goaltree-tools", "--no-default-features"];
    if crate::has_nextest() {
        cargo(&[&["nextest", "run"][..], &lean].concat())?;
    } else {
        cargo(&[&["test"][..], &lean].concat())?;
    }
    downstream()
}

/// `examples/downstream`, outside the workspace: a fresh lockfile (the newest versions its
/// requirements allow), a build in which any warning fails (a deprecation in a new release of
/// a dependency shows here before a user sees it), and a run.
fn downstream() -> Result<()> {
    let manifest = "examples/downstream/Cargo.toml";
    let target = workspace_root().join("target");
    let target = target.to_string_lossy();
    cargo(&["generate-lockfile", "--manifest-path", manifest])?;
    let args = [
        "build",
        "--manifest-path",
        manifest,
        "--message-format",
        "short",
    ];
    eprintln!("$ cargo {}", args.join(" "));
    let output = Command::new(cargo_bin())
        .args(args)
        .env("CARGO_TARGET_DIR", target.as_ref())
        .current_dir(workspace_root())
        .output()
        .context("could not start cargo build")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprint!("{stderr}");
    if !output.status.success() {
        bail!("the downstream project does not build against a fresh resolve");
    }
    // The compiler's warnings (`path:line:col: warning: ...` in the short format, and the
    // `generated N warnings` summaries); not cargo's notes about third-party crates.
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(": warning:") || (l.contains("generated") && l.contains("warning")))
        .collect();
    if !warnings.is_empty() {
        bail!(
            "the downstream project builds with warnings against a fresh resolve:\n{}",
            warnings.join("\n")
        );
    }
    let status = Command::new(target.as_ref().to_owned() + "/debug/downstream-weather")
        .status()
        .context("could not start the downstream project")?;
    if !status.success() {
        bail!("the downstream project failed: {status}");
    }
    Ok(())
}
