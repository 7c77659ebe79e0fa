//! `cargo xtask soak`: the long forms of the reliability tests, and their report in
//! `docs/reliability.md`.
//!
//! The quick forms run in `cargo xtask ci` as ordinary tests. The soak runs the same tests with
//! bigger numbers, through their environment knobs, plus coverage-guided fuzzing with
//! `cargo fuzz` (libFuzzer; `RUSTC_BOOTSTRAP=1` lets the stable toolchain build it; cargo-fuzz
//! is installed on first use):
//!
//! - the crash matrix, `CRASH_MATRIX_ITERATIONS` kills (`--kills`, 50);
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

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::{cargo_bin, workspace_root};

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

/// One libFuzzer target's run.
struct FuzzRun {
    target: &'static str,
    runs: u64,
    seconds: f64,
    coverage: u64,
    corpus: u64,
}

const FUZZ_TARGETS: [&str; 4] = [
    "goal_command",
    "events_log",
    "sse_stream",
    "context_builder",
];

/// Makes sure `cargo fuzz` is there, installing it (pinned) when it is not.
fn ensure_cargo_fuzz() -> Result<()> {
    let present = Command::new(cargo_bin())
        .args(["fuzz", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !present {
        run_cargo(
            "install cargo-fuzz",
            &["install", "cargo-fuzz", "--version", "0.13.2", "--locked"],
            &[],
        )?;
    }
    Ok(())
}

/// Runs every fuzz target under libFuzzer for `seconds`; a crash fails the soak and names the
/// input libFuzzer saved.
fn fuzz(seconds: u32) -> Result<Vec<FuzzRun>> {
    ensure_cargo_fuzz()?;
    let root = workspace_root();
    // Built once up front, so the run times below are fuzzing only.
    eprintln!("xtask soak: building the fuzz targets");
    let status = Command::new(cargo_bin())
        .args(["fuzz", "build"])
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(&root)
        .status()
        .context("could not run cargo fuzz build")?;
    if !status.success() {
        bail!("cargo fuzz build failed ({status})");
    }
    let mut runs = Vec::new();
    for target in FUZZ_TARGETS {
        // The growing corpus stays out of the repository: only the seeds are committed.
        let corpus = root.join("target").join("fuzz-corpus").join(target);
        std::fs::create_dir_all(&corpus)?;
        let seeds = root.join("fuzz").join("corpus").join(target);
        let max_time = format!("-max_total_time={seconds}");
        eprintln!("xtask soak: fuzzing {target} for {seconds} s");
        let started = Instant::now();
        let output = Command::new(cargo_bin())
            .args(["fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .args(["--", &max_time, "-print_final_stats=1", "-timeout=30"])
            .env("RUSTC_BOOTSTRAP", "1")
            .current_dir(&root)
            .output()
            .with_context(|| format!("could not run cargo fuzz for {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        if !output.status.success() {
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            bail!(
                "fuzz target {target} failed; the input is under fuzz/artifacts/{target}/ — fix \
                 the bug and add the input to fuzz/regressions/{target}/:\n{}",
                tail.join("\n")
            );
        }
        // `stat::number_of_executed_units: 12345`
        let stat = |name: &str| -> u64 {
            log.lines()
                .filter(|l| l.starts_with(name))
                .filter_map(|l| l.rsplit(':').next()?.trim().parse().ok())
                .next_back()
                .unwrap_or(0)
        };
        let coverage = log
            .lines()
            .rev()
            .find_map(|l| {
                let at = l.find("cov: ")?;
                l[at + 5..].split_whitespace().next()?.parse().ok()
            })
            .unwrap_or(0);
        runs.push(FuzzRun {
            target,
            runs: stat("stat::number_of_executed_units"),
            seconds: started.elapsed().as_secs_f64(),
            coverage,
            corpus: std::fs::read_dir(&corpus)
                .map(|d| d.count() as u64)
                .unwrap_or(0),
        });
    }
    Ok(runs)
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
            "crash_matrix",
            "--",
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
            "agent-runner",
            "-p",
            "agent-tools",
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
    let fuzz_runs = fuzz(plan.fuzz_seconds)?;
    let smoke = run_cargo(
        "stable fuzz driver",
        &[
            "test",
            "--locked",
            "-p",
            "agent-e2e",
            "--test",
            "fuzz_smoke",
            "--",
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

struct Report<'a> {
    plan: &'a Plan,
    crash: &'a Step,
    hostile: &'a Step,
    faults: &'a Step,
    http: &'a Step,
    fuzz: &'a [FuzzRun],
    smoke: &'a Step,
    minutes: f64,
}

/// The commit the report names: `SOAK_COMMIT` when set (a tree exported without its history),
/// else the checkout's HEAD.
fn commit() -> String {
    if let Ok(commit) = std::env::var("SOAK_COMMIT") {
        return commit;
    }
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(workspace_root())
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn render(r: &Report<'_>) -> String {
    let mut out = String::new();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let crash = tagged(&r.crash.stdout, "CRASH-MATRIX")
        .first()
        .copied()
        .unwrap_or_default()
        .to_owned();
    let cases = tagged(&r.hostile.stdout, "HOSTILE-CASE").len();
    let races = tagged(&r.hostile.stdout, "HOSTILE-RACE");
    let race_calls: f64 = races.iter().map(|l| number(l, "calls")).sum();
    let faults = tagged(&r.faults.stdout, "PROVIDER-FAULT");
    let http_lines = tagged(&r.http.stdout, "HOSTILE-HTTP");
    let http_value = |key: &str| -> f64 { http_lines.iter().map(|l| number(l, key)).sum() };
    let smoke = tagged(&r.smoke.stdout, "FUZZ-SMOKE")
        .first()
        .copied()
        .unwrap_or_default()
        .to_owned();
    let fuzz_runs: u64 = r.fuzz.iter().map(|f| f.runs).sum();
    let smoke_inputs: f64 = FUZZ_TARGETS
        .iter()
        .map(|t| {
            smoke
                .find(&format!("\"{t}\":{{"))
                .map_or(0.0, |at| number(&smoke[at..], "inputs"))
        })
        .sum();

    let _ = writeln!(out, "# Reliability report\n");
    let _ = writeln!(
        out,
        "Written by `cargo xtask soak{}` on {} at commit `{}`, on {cores} cores, in {:.0} minutes. \
         The same tests run in `cargo xtask ci` with small numbers (see the end). Every number \
         below comes from that run; a soak that finds a failure stops without writing this file.{}\n",
        if r.plan.quick { " --quick" } else { "" },
        today(),
        commit(),
        r.minutes,
        if r.plan.quick {
            " **This was a `--quick` run**: small numbers, to try the pipeline; its figures say \
             little."
        } else {
            ""
        }
    );
    let _ = writeln!(out, "## Summary\n");
    let _ = writeln!(out, "| area | what ran | inputs | failures |");
    let _ = writeln!(out, "|---|---|---|---|");
    let _ = writeln!(
        out,
        "| crash matrix | SIGKILL of `agent run` / `agent serve` at random moments, then `agent resume` | {} kills ({} mid-run, {} after the end), {} events acknowledged before the kills | losses {}, duplicate event ids {}, calls without a result {} |",
        number(&crash, "iterations"),
        number(&crash, "kills_during_run"),
        number(&crash, "kills_after_completion"),
        number(&crash, "events_acknowledged"),
        number(&crash, "losses"),
        number(&crash, "duplicate_event_ids"),
        number(&crash, "unanswered_calls"),
    );
    let _ = writeln!(
        out,
        "| hostile model output | bad assistant turns through the runner | {cases} cases, {} tests with the tool tests | 0 |",
        passed(&r.hostile.stdout)
    );
    let _ = writeln!(
        out,
        "| tools | symlink swapped between check and use, against 4 tools; a named pipe; timeouts; floods | {race_calls:.0} racing calls | outside reads or writes 0 |"
    );
    let _ = writeln!(
        out,
        "| provider faults | OpenAI-compatible client against a misbehaving server | {} faults | hangs 0, half-recorded turns 0, failed resumes 0 |",
        faults.len()
    );
    let _ = writeln!(
        out,
        "| hostile HTTP | schemathesis ({} examples per operation, stateful phase) and hand-written requests against `agent serve` | {:.0} generated requests, {:.0} hand-written | 5xx {:.0}, schema mismatches {:.0} |",
        r.plan.http_examples,
        http_value("schemathesis_requests"),
        http_value("hand_written_cases"),
        http_value("server_errors"),
        http_value("schema_mismatches"),
    );
    let _ = writeln!(
        out,
        "| fuzzing | 4 targets under libFuzzer (`cargo fuzz`), then the stable driver | {fuzz_runs} libFuzzer runs, {smoke_inputs:.0} stable-driver inputs | crashes 0 |\n"
    );

    let _ = writeln!(out, "## Crash matrix\n");
    let _ = writeln!(
        out,
        "`tests/crash_matrix.rs`, {} iterations (seed {}; `CRASH_MATRIX_SEED` replays it). Each runs a scripted task with four \
         goals, file and shell tools and a two-branch exploration, alternately with `agent run` \
         and with `agent serve` (the run started over HTTP), and kills the process with SIGKILL \
         at a random moment of an unkilled run's duration. Then: every trace folder loads, \
         `agent show --json` works, `agent resume` completes the run, every event acknowledged \
         before the kill (complete commits of `events.jsonl`, read just before it) is still \
         there unchanged, every acknowledged message loads, event ids are dense, and every tool \
         call has exactly one result, in the store and in the context. The last three counts \
         below are zero because the test fails on any other value, and a failed test stops the \
         soak.\n",
        number(&crash, "iterations"),
        digits(&crash, "seed"),
    );
    let _ = writeln!(out, "| measure | value |\n|---|---|");
    for (label, key) in [
        ("kills while the run was going", "kills_during_run"),
        ("kills after it had ended", "kills_after_completion"),
        ("resumes that completed the run", "resumed_to_completion"),
        (
            "trace folders checked (main and branches)",
            "traces_checked",
        ),
        (
            "events acknowledged before the kills",
            "events_acknowledged",
        ),
        ("events after the resumes", "events_after"),
        ("acknowledged messages loaded back", "messages_checked"),
        ("tool calls checked for one result", "tool_calls_checked"),
        ("acknowledged events lost", "losses"),
        ("duplicate event ids", "duplicate_event_ids"),
        ("tool calls without a result", "unanswered_calls"),
    ] {
        let _ = writeln!(out, "| {label} | {} |", number(&crash, key));
    }
    let _ = writeln!(out, "\nTook {:.0} s.\n", r.crash.seconds);

    let _ = writeln!(out, "## Hostile model output and tools\n");
    let _ = writeln!(
        out,
        "`crates/agent-runner/tests/it/hostile_output.rs`: {cases} cases (and the runaway-plan and call-id tests) through the real runner \
         (scripted model, in-memory store, built-in tools), each with its outcome asserted: \
         invalid and non-object JSON arguments (truncated, trailing garbage, lone surrogates, \
         100,000 levels of nesting), wrong types, unknown and nameless tools (a 1 MB name \
         among them), empty answers, 5 MB arguments (write, path, pattern, command, edit, \
         garbage), 500 calls in one turn (reads, commands, plan reads, unknown tools), all 127 \
         combinations of invalid goal fields and 11 malformed goal calls, runaway plans, \
         prompt-injected paths (`../../etc/passwd`, `/etc/shadow`, `/proc/self/environ`, \
         symlinks out, encoded and look-alike forms), and empty, repeated or odd call ids. \
         Every case checks that the run ends by itself and that every call gets exactly one \
         result; the cases of `check` (all but the goal combinations) also that results stay \
         under the output cap, requests and memory stay bounded, nothing outside the workspace \
         changes and event ids stay dense.\n"
    );
    let _ = writeln!(
        out,
        "`crates/agent-tools/tests/it/hostile.rs`: a thread swaps a folder of the path \
         for a symlink to outside and back while `read_file`, `grep`, `edit_file` and \
         `write_file` run {} calls each ({race_calls:.0} in all); a named pipe; a timeout with \
         grandchildren, a sub-shell tree and `nohup`; endless output on both streams, without \
         newlines and not UTF-8.\n",
        r.plan.race_calls
    );

    let _ = writeln!(out, "## Provider faults\n");
    let _ = writeln!(
        out,
        "`tests/it/provider_faults.rs`: the runner with the OpenAI-compatible client against the \
         mock model server of `agent-test-support` scripted to misbehave; then a resume against \
         the healthy server, which must complete the trace with every call answered and dense \
         event ids.\n"
    );
    let _ = writeln!(out, "| fault | first run | requests | seconds | resumed |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for line in &faults {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            text(line, "fault"),
            text(line, "first_run"),
            number(line, "requests"),
            number(line, "seconds"),
            if line.contains("\"resumed\":true") {
                "completed"
            } else {
                "not needed"
            }
        );
    }

    let _ = writeln!(out, "\n## Hostile HTTP\n");
    let _ = writeln!(
        out,
        "`tests/it/hostile_http.rs` against a real `agent serve` with a scripted model. \
         schemathesis {} (pinned in `scripts/setup-schemathesis.sh`) ran the examples, \
         coverage, fuzzing and stateful phases with {} examples per operation and the checks \
         `not_a_server_error`, `status_code_conformance`, `content_type_conformance`, \
         `response_headers_conformance` and `response_schema_conformance`: {:.0} requests, no \
         5xx, no response outside the document. The hand-written part sent {:.0} requests: \
         trace ids with `..` (plain, encoded, double encoded, overlong UTF-8), NUL, CR-LF and \
         backslashes on every route; a 2 MiB body with a length and chunked, and a length of \
         10 GB; a 1 MiB header and a 100 KiB URL; bytes that are not HTTP; WebSocket upgrades \
         with bad `since_event_id`; and, on a `0.0.0.0` bind, every route without the token, \
         with a wrong one, a prefix of it, Basic auth and an empty bearer. The server answered \
         every one with a 4xx (or closed the connection where the HTTP layer refuses) and kept \
         serving.\n",
        SCHEMATHESIS_VERSION,
        r.plan.http_examples,
        http_value("schemathesis_requests"),
        http_value("hand_written_cases"),
    );

    let _ = writeln!(out, "## Fuzzing\n");
    let _ = writeln!(
        out,
        "`fuzz/` holds four `cargo fuzz` targets; libFuzzer builds on the stable toolchain with \
         `RUSTC_BOOTSTRAP=1`. Seeds are in `fuzz/corpus/<target>/`, the corpus grown here in \
         `target/fuzz-corpus/`, and every crash found becomes an input in \
         `fuzz/regressions/<target>/`, replayed by `tests/fuzz_smoke.rs` in CI.\n"
    );
    let _ = writeln!(
        out,
        "| target | what it checks | runs | seconds | coverage (edges) | corpus |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for run in r.fuzz {
        let what = match run.target {
            "goal_command" => {
                "goal commands (JSON and generated) on a plan: a refused command changes nothing, the plan stays consistent"
            }
            "events_log" => {
                "an `events.jsonl` opened by the store: loads with dense ids or is reported corrupt, takes an append"
            }
            "sse_stream" => {
                "OpenAI and Anthropic streams in chunks: every stream ends in a response or an error"
            }
            _ => {
                "stored messages and a plan: the view is a valid conversation, keeps the task, is pure"
            }
        };
        let _ = writeln!(
            out,
            "| `{}` | {what} | {} | {:.0} | {} | {} |",
            run.target, run.runs, run.seconds, run.coverage, run.corpus
        );
    }
    let _ = writeln!(
        out,
        "\nThe stable driver (`tests/fuzz_smoke.rs`) then mutated the seeds for {} s per target: \
         {smoke_inputs:.0} inputs.\n",
        r.plan.smoke_seconds
    );

    out.push_str(FINDINGS);
    out
}

/// The schemathesis version of `scripts/setup-schemathesis.sh`.
const SCHEMATHESIS_VERSION: &str = "4.32.5";

/// What the reliability work found and fixed, and what it leaves open: part of every report.
const FINDINGS: &str = "## Found and fixed\n\n\
Each fix has a regression test (named in brackets).\n\n\
- **A symlink swapped in between check and use escaped the workspace.** `read_file` showed, \
and `edit_file`, `write_file` and `grep` read or changed, files outside the workspace when a \
folder of the path was replaced by a symlink after the path was checked. The file tools now \
check the file they opened (by the path the kernel has for it) and refuse, or remove what they \
created, when it is outside. (`agent-tools/tests/it/hostile.rs`: four races.)\n\
- **A named pipe blocked a file tool** until the tool timeout, holding a blocking thread \
forever. Files that are neither regular files nor folders are refused. \
(`a_named_pipe_is_refused_instead_of_blocking_the_call`)\n\
- **500 calls in one turn ran 500 commands.** At most `RunLimits::max_tool_calls_per_turn` \
(64) calls of a turn run; the rest get an error result. (`five_hundred_calls_in_one_turn_stay_bounded`)\n\
- **A call id repeated across turns lost the call on resume.** Servers that send no ids get \
`call_0` on every turn; after a crash, resume took the interrupted call for answered and the \
model was shown a call without a result. The runner now gives every call a trace-unique id \
before recording the turn. (`a_call_id_repeated_across_turns_is_answered_after_a_crash`, \
`call_ids_that_are_empty_or_repeated_are_made_unique`)\n\
- **A misspelt goal field was dropped silently** while the rest of the call applied; the goal \
tool now checks its schema first. Plans are bounded: 50 goals per call, 1000 per plan, 4000 \
characters per text (a runaway call could make the plan, sent on every model call, \
arbitrarily large). (`every_invalid_goal_combination_is_refused_without_changing_the_plan`, \
`plans_from_a_runaway_model_stay_bounded`)\n\
- **An unknown tool's name came back whole** (a 1 MB name made a 1 MB result); it is cut to \
100 characters. **A 5 MB glob pattern panicked** inside the glob library; patterns are capped \
at 4096 bytes. (`unknown_tools_are_named_and_bounded`, `huge_arguments_stay_bounded`)\n\
- **A trace folder holding another trace's log answered for that trace** (found by the \
`events_log` fuzz target): `get_trace` returned a trace with another id while listing showed \
the copy under the original's id. Such a folder is now reported corrupt and left out of \
lists. (`crates/agent-store-fs/tests/it/hostile_log.rs`, `fuzz/regressions/events_log/`)\n\
- **The OpenAPI document and the server disagreed** (found by schemathesis): approvals and \
resume answered 413 and 415 that the document did not list; a resume body of `null`, which \
the document allows, was refused; trace id parameters and the run texts did not say what the \
server refuses. (`crates/agent-api/tests/it/hostile_api.rs`)\n\n\
## Known limits\n\n\
- `bash` is not a sandbox: it runs with the user's rights and can read anything the user can \
(approval mode is the guard). A command that detaches itself with `setsid` leaves the process \
group and is not killed with it.\n\
- The file tools' open-then-check leaves one race: `write_file` may create empty parent \
folders through a swapped symlink before the write itself is refused.\n\
- A huge argument stays in the stored assistant message (the trace records what the model \
said); a full compaction hides it from later model calls.\n\
- Streaming responses are bounded by the idle timeout and by the run's model-call timeout \
(`RunLimits::llm_timeout`, 10 minutes by default), not by the request timeout: a server that \
trickles bytes forever holds a call that long.\n\n\
## Running it\n\n\
`cargo xtask ci` runs the quick forms as ordinary tests: the corpus and tool races \
(`HOSTILE_RACE_CALLS` 1500), the crash matrix with 5 kills, the provider faults, schemathesis \
with 25 examples per operation plus the hand-written requests, and the stable fuzz driver for \
3 s per target. `cargo xtask soak` runs the long forms and writes this file; `--quick` tries \
the pipeline with small numbers, `--kills N`, `--fuzz-seconds N` and `--http-examples N` \
change them.\n";

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
