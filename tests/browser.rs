//! The viewer's end-to-end browser test, run by the workspace test command: builds the `agent`
//! binary, then runs `node --test tests/browser/viewer.test.mjs`, which records the demo trace,
//! serves it, and drives Debian's headless Chromium through the page (see that file).
//!
//! Needs `/usr/bin/chromium`, Node.js and `tests/browser/node_modules`, which
//! `scripts/setup-browser.sh` installs (`cargo xtask setup`, run first by `cargo xtask ci`).
//! When one is missing the test fails with what to run; it never skips.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (this crate lives in `tests/`).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Builds the `agent` binary with the profile this test was built with and returns its path.
fn build_agent() -> PathBuf {
    // This test runs from <target>/<profile>/deps/; the binary goes to <target>/<profile>/.
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("the test runs from <target>/<profile>/deps")
        .to_path_buf();
    let target_dir = profile_dir.parent().expect("<target>").to_path_buf();
    let profile = profile_dir
        .file_name()
        .expect("a profile folder")
        .to_string_lossy()
        .into_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root())
        .args(["build", "--quiet", "-p", "goaltree-cli", "--bin", "agent"])
        .arg("--target-dir")
        .arg(&target_dir);
    match profile.as_str() {
        "debug" => {}
        "release" => {
            build.arg("--release");
        }
        other => {
            build.args(["--profile", other]);
        }
    }
    let status = build.status().expect("cargo runs");
    assert!(status.success(), "cargo build -p goaltree-cli failed");
    let agent = profile_dir.join(format!("agent{}", std::env::consts::EXE_SUFFIX));
    assert!(agent.is_file(), "{} was not built", agent.display());
    agent
}

#[test]
fn the_viewer_works_in_headless_chromium() {
    let root = root();
    let setup = "run scripts/setup-browser.sh (or `cargo xtask setup`)";
    assert!(
        Path::new("/usr/bin/chromium").exists(),
        "/usr/bin/chromium is missing: {setup}"
    );
    assert!(
        root.join("tests/browser/node_modules/playwright-core/package.json")
            .is_file(),
        "tests/browser/node_modules is missing: {setup}"
    );
    let agent = build_agent();
    let output = Command::new("node")
        .current_dir(root.join("tests/browser"))
        .args(["--test", "--test-reporter=spec", "viewer.test.mjs"])
        .env("AGENT_BIN", &agent)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (Node.js is needed: {setup}): {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "the browser test failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
}
