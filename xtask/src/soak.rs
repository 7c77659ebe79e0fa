//! `cargo xtask soak`: the long forms of the reliability tests, and their report in
//! `docs/reliability.md`.
//!
//! The quick forms run in `cargo xtask ci` as ordinary tests. The soak runs the same tests with
//! bigger numbers, through their environment knobs, plus coverage-guided fuzzing with
//! `cargo fuzz` (libFuzzer; `RUSTC_BOOTSTRAP=1` lets the stable toolchain build it; cargo-fuzz
//! is installed on first use):
//!
//! - the crash matrix, `CRASH_MATRIX_ITERATIONS` kills (`--kills`, 50), of the `agent` process
//!   on the filesystem store and of a worker on the PostgreSQL store;
//! - the hostile model output corpus and the tool races (`HOSTILE_RACE_CALLS`, 20,000 calls);
//! - the provider faults;
//! - schemathesis against `agent serve` (`HOSTILE_HTTP_EXAMPLES`, `--http-examples`, 300) and
//!   the hand-written hostile requests;
//! - each fuzz target for `--fuzz-seconds` (300) under libFuzzer, then the stable driver for a
//!   minute per target.
//!
//! Every test prints a one-line JSON summary (`CRASH-MATRIX {...}` and the like); the report is
//! built from those lines. Any failure stops the soak and the report is not written.
//! `--quick` runs small numbers, to try the pipeline.

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

mod fuzz;
mod report;

use crate::{cargo_bin, workspace_root};
use report::{Report, render};

/// How long a soak runs each part.
struct Plan {
    quick: bool,
    kills: u32,
    race_calls: u32,
    http_examples: u32,
    fuzz_seconds: u32,
    smoke_seconds: u32,
}

impl Plan {
    fn from_args(args: &[String]) -> Result<Self> {
        let quick = args.iter().any(|a| a == "--quick");
        let mut plan = if quick {
            Plan {
                quick: true,
                kills: 6,
                race_calls: 2_000,
                http_examples: 25,
                fuzz_seconds: 15,
                smoke_seconds: 5,
            }
        } else {
            Plan {
                quick: false,
                kills: 50,
                race_calls: 20_000,
                http_examples: 300,
                fuzz_seconds: 300,
                smoke_seconds: 60,
            }
        };
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let mut number = |name: &str| -> Result<u32> {
                rest.next()
                    .and_then(|v| v.parse().ok())
                    .with_context(|| format!("{name} needs a number"))
            };
            match arg.as_str() {
                "--quick" => {}
                "--kills" => plan.kills = number("--kills")?,
                "--fuzz-seconds" => plan.fuzz_seconds = number("--fuzz-seconds")?,
                "--http-examples" => plan.http_examples = number("--http-examples")?,
                other => bail!(
                    "unknown soak option {other}; use --quick, --kills N, --fuzz-seconds N, --http-examples N"
                ),
            }
        }
        Ok(plan)
    }
}

/// The output of one step, and how long it took.
struct Step {
    stdout: String,
    seconds: f64,
}

/// Runs a cargo command with `env`, echoing its output to stderr as it comes (a long step shows
/// its progress) and keeping it for the report; fails when the command fails.
fn run_cargo(what: &str, args: &[&str], env: &[(&str, String)]) -> Result<Step> {
    eprintln!("xtask soak: {what}: cargo {}", args.join(" "));
    let started = Instant::now();
    let mut child = Command::new(cargo_bin())
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("could not start cargo for {what}"))?;
    let echo = |stream: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut kept = String::new();
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                eprintln!("  {line}");
                kept.push_str(&line);
                kept.push('\n');
            }
            kept
        })
    };
    let stdout = child.stdout.take().map(|s| echo(Box::new(s)));
    let stderr = child.stderr.take().map(|s| echo(Box::new(s)));
    let status = child
        .wait()
        .with_context(|| format!("could not wait for cargo ({what})"))?;
    let collect = |thread: Option<std::thread::JoinHandle<String>>| {
        thread.and_then(|t| t.join().ok()).unwrap_or_default()
    };
    let (stdout, stderr) = (collect(stdout), collect(stderr));
    if !status.success() {
        bail!("{what} failed ({status}); its output is above");
    }
    Ok(Step {
        stdout: format!("{stdout}\n{stderr}"),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The lines of `text` that start with `tag ` (after any prefix the test harness adds), without
/// the tag.
fn tagged<'a>(text: &'a str, tag: &str) -> Vec<&'a str> {
    let marker = format!("{tag} ");
    text.lines()
        .filter_map(|line| line.find(&marker).map(|at| &line[at + marker.len()..]))
        .collect()
}

/// The number after `"key":` in a one-line JSON summary.
fn number(json: &str, key: &str) -> f64 {
    let marker = format!("\"{key}\":");
    json.find(&marker)
        .map(|at| &json[at + marker.len()..])
        .and_then(|rest| {
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | 'e' | '+')))
                .unwrap_or(rest.len());
            rest[..end].parse().ok()
        })
        .unwrap_or(0.0)
}

/// The digits after `"key":` in a one-line JSON summary, exactly as written (a 64-bit seed does
/// not survive a round trip through `f64`).
fn digits(json: &str, key: &str) -> String {
    let marker = format!("\"{key}\":");
    json.find(&marker)
        .map(|at| &json[at + marker.len()..])
        .map(|rest| rest.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default()
}

/// The string after `"key":` in a one-line JSON summary (no escapes expected).
fn text(json: &str, key: &str) -> String {
    let marker = format!("\"{key}\":\"");
    json.find(&marker)
        .map(|at| &json[at + marker.len()..])
        .and_then(|rest| rest.find('"').map(|end| rest[..end].to_owned()))
        .unwrap_or_default()
}

/// `passed` counts from libtest's `test result:` lines.
fn passed(text: &str) -> u64 {
    text.lines()
        .filter(|l| l.starts_with("test result: ok."))
        .filter_map(|l| l.split_whitespace().nth(3)?.parse::<u64>().ok())
        .sum()
}

/// `cargo xtask soak`.
pub(crate) fn soak(args: &[String]) -> Result<()> {
    let plan = Plan::from_args(args)?;
    let started = Instant::now();

    let crash = run_cargo(
        "crash matrix",
        &[
            "test",
            "--locked",
            "-p",
            "agent-e2e",
            "--test",
            "it",
            "--",
            "crash_matrix::",
            "nodes::a_killed_workers_run",
            "--nocapture",
        ],
        &[("CRASH_MATRIX_ITERATIONS", plan.kills.to_string())],
    )?;
    let hostile = run_cargo(
        "hostile model output and tools",
        &[
            "test",
            "--locked",
            "-p",
            "goaltree-runner",
            "-p",
            "goaltree-tools",
            "--test",
            "it",
            "--",
            "hostile_output::",
            "hostile::",
            "--nocapture",
        ],
        &[("HOSTILE_RACE_CALLS", plan.race_calls.to_string())],
    )?;
    let faults = run_cargo(
        "provider faults",
        &[
            "test",
            "--locked",
            "-p",
            "agent-e2e",
            "--test",
            "it",
            "--",
            "provider_faults::",
            "--nocapture",
        ],
        &[],
    )?;
    let http = run_cargo(
        "hostile HTTP",
        &[
            "test",
            "--locked",
            "-p",
            "agent-e2e",
            "--test",
            "it",
            "--",
            "hostile_http::",
            "--nocapture",
        ],
        &[("HOSTILE_HTTP_EXAMPLES", plan.http_examples.to_string())],
    )?;
    let fuzz_runs = fuzz::fuzz(plan.fuzz_seconds)?;
    let smoke = run_cargo(
        "stable fuzz driver",
        &[
            "test",
            "--locked",
            "-p",
            "agent-e2e",
            "--test",
            "it",
            "--",
            "fuzz_smoke::",
            "--nocapture",
        ],
        &[
            ("FUZZ_SMOKE_SECONDS", plan.smoke_seconds.to_string()),
            ("FUZZ_SMOKE_INPUTS", "100000000".into()),
        ],
    )?;

    let report = render(&Report {
        plan: &plan,
        crash: &crash,
        hostile: &hostile,
        faults: &faults,
        http: &http,
        fuzz: &fuzz_runs,
        smoke: &smoke,
        minutes: started.elapsed().as_secs_f64() / 60.0,
    });
    let path = workspace_root().join("docs").join("reliability.md");
    std::fs::write(&path, report).with_context(|| format!("cannot write {}", path.display()))?;
    eprintln!(
        "xtask soak: all passed; the report is in {}",
        path.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{number, passed, tagged, text};

    #[test]
    fn summary_lines_are_read() {
        let out = "noise\nCRASH-MATRIX {\"iterations\":50,\"losses\":0,\"seed\":12345}\n\
                   PROVIDER-FAULT {\"fault\":\"429 storm\",\"requests\":4,\"seconds\":0.9}\n\
                   test result: ok. 3 passed; 0 failed\ntest result: ok. 2 passed; 0 failed\n";
        let crash = tagged(out, "CRASH-MATRIX");
        assert_eq!(crash.len(), 1);
        assert_eq!(number(crash[0], "iterations"), 50.0);
        assert_eq!(number(crash[0], "seed"), 12345.0);
        assert_eq!(number(crash[0], "missing"), 0.0);
        let fault = tagged(out, "PROVIDER-FAULT")[0];
        assert_eq!(text(fault, "fault"), "429 storm");
        assert_eq!(number(fault, "seconds"), 0.9);
        assert_eq!(passed(out), 5);
    }
}
