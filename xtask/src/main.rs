//! Development workflow for the workspace, run as `cargo xtask <command>`.
//!
//! - `ci`: formatting check, clippy with warnings denied on all targets, the tests (with
//!   cargo-nextest when it is installed, else `cargo test`), the doc tests, the doc build, a
//!   smoke run of the benchmark program, and `cargo package` of every publishable crate.
//! - `bench [--quick]`: the benchmarks in release mode, side by side with LangGraph (in a pinned
//!   virtualenv) and the raw limits; the summary goes to stdout, the report and its plots to
//!   `docs/benchmarks.md` and `docs/bench-*.svg` (see `bench.rs`).
//! - `soak [--quick] [--kills N] [--fuzz-seconds N] [--http-examples N]`: the long forms of the
//!   reliability tests and coverage-guided fuzzing; the report goes to `docs/reliability.md`
//!   (see `soak.rs`).
//! - `setup`: installs what the tests need beyond the Rust toolchain (each `scripts/setup-*.sh`,
//!   idempotent); `ci` runs it first.
//! - `openapi`: rewrites `crates/agent-api/openapi.json` from the code.

use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

mod bench;
mod public_api;
mod release;
mod soak;
mod tidy;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("setup") => setup(),
        Some("bench") => bench::bench(args.iter().skip(1).any(|a| a == "--quick")),
        Some("openapi") => openapi(),
        Some("public-api") => public_api::check(
            &workspace_root(),
            args.iter().skip(1).any(|a| a == "--bless"),
        ),
        Some("soak") => soak::soak(&args[1..]),
        Some("help") | Some("--help") | Some("-h") | None => {
            eprintln!(
                "usage: cargo xtask <command>\n\ncommands:\n  setup    install what the tests need beyond Rust (scripts/setup-*.sh)\n  ci       fmt check, clippy -D warnings, tests, doc build\n  bench    benchmarks in release mode (--quick for a short run)\n  soak     the long reliability runs, report in docs/reliability.md (--quick for a short run)\n  openapi  rewrite crates/agent-api/openapi.json\n  public-api  check each crate's public API against its public-api.txt (--bless rewrites them)"
            );
            Ok(())
        }
        Some(other) => Err(anyhow::anyhow!(
            "unknown xtask command `{other}`; try `cargo xtask help`"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("xtask: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every check CI runs, stopping at the first failure.
fn ci() -> Result<()> {
    setup()?;
    cargo(&["fmt", "--all", "--check"])?;
    cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ])?;
    // Benches are compiled by clippy above and run by `cargo xtask bench`, not here.
    if has_nextest() {
        cargo(&[
            "nextest",
            "run",
            "--workspace",
            "--locked",
            "--no-fail-fast",
        ])?;
        // nextest does not run doc tests.
        cargo(&["test", "--workspace", "--doc", "--locked"])?;
    } else {
        cargo(&["test", "--workspace", "--locked", "--no-fail-fast"])?;
        cargo(&["test", "--workspace", "--doc", "--locked"])?;
    }
    let doc_env = [("RUSTDOCFLAGS", "-D warnings")];
    cargo_env(&["doc", "--workspace", "--no-deps", "--locked"], &doc_env)?;
    // The benchmark program must keep working; a debug build of its quick mode checks that
    // (with the `agent` binary it runs from outside).
    cargo(&[
        "build",
        "--locked",
        "--quiet",
        "-p",
        "goaltree-cli",
        "--bin",
        "agent",
    ])?;
    cargo(&[
        "run",
        "--locked",
        "--quiet",
        "-p",
        "agent-e2e",
        "--bin",
        "agent-bench",
        "--",
        "--quick",
    ])?;
    // What downstream projects get: packages, a publish dry run, the lean build, a project
    // outside the workspace against a fresh resolve.
    release::check()?;
    // The official MCP conformance suite against the MCP client: a scenario that fails more
    // checks than tests/mcp-conformance/expected-failures.txt allows fails CI.
    bash(&["scripts/mcp-conformance.sh", "--gate"])?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// Rewrites the committed OpenAPI document of agent-api: its staleness test does that when
/// `UPDATE_OPENAPI` is set.
fn openapi() -> Result<()> {
    cargo_env(
        &[
            "test",
            "-p",
            "goaltree-api",
            "--test",
            "it",
            "--quiet",
            "--",
            "openapi::",
        ],
        &[("UPDATE_OPENAPI", "1")],
    )?;
    eprintln!("xtask openapi: crates/agent-api/openapi.json is up to date");
    Ok(())
}

/// Runs every `scripts/setup-*.sh` in name order: each installs one thing the tests need (a
/// browser, npm packages, ...) and does nothing when it is already there.
fn setup() -> Result<()> {
    let dir = workspace_root().join("scripts");
    let mut scripts: Vec<_> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                name.starts_with("setup-") && name.ends_with(".sh")
            })
            .collect(),
        Err(_) => Vec::new(),
    };
    scripts.sort();
    for script in scripts {
        eprintln!("$ bash {}", script.display());
        let status = Command::new("bash")
            .arg(&script)
            .current_dir(workspace_root())
            .status()
            .with_context(|| format!("could not start {}", script.display()))?;
        if !status.success() {
            bail!("{} failed with {status}", script.display());
        }
    }
    Ok(())
}

/// Runs `bash <args>` in the workspace root.
fn bash(args: &[&str]) -> Result<()> {
    eprintln!("$ bash {}", args.join(" "));
    let status = Command::new("bash")
        .args(args)
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("could not start bash {}", args.join(" ")))?;
    if !status.success() {
        bail!("`bash {}` failed with {status}", args.join(" "));
    }
    Ok(())
}

fn has_nextest() -> bool {
    Command::new(cargo_bin())
        .args(["nextest", "--version"])
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false)
}

fn cargo(args: &[&str]) -> Result<()> {
    cargo_env(args, &[])
}

fn cargo_env(args: &[&str], env: &[(&str, &str)]) -> Result<()> {
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo_bin())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(workspace_root())
        .status()
        .with_context(|| format!("could not start cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("`cargo {}` failed with {status}", args.join(" "));
    }
    Ok(())
}

fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// The workspace root: the parent of this crate's manifest directory.
fn workspace_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}
