//! The soak's report: `docs/reliability.md` rendered from the outputs of its steps.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use super::fuzz::{FUZZ_TARGETS, FuzzRun};
use super::{Plan, Step, digits, number, passed, tagged, text};
use crate::workspace_root;

pub(super) struct Report<'a> {
    pub(super) plan: &'a Plan,
    pub(super) crash: &'a Step,
    pub(super) hostile: &'a Step,
    pub(super) faults: &'a Step,
    pub(super) http: &'a Step,
    pub(super) fuzz: &'a [FuzzRun],
    pub(super) smoke: &'a Step,
    pub(super) minutes: f64,
}

/// The commit the report names: `SOAK_COMMIT` when set (a tree exported without its history),
/// else the checkout's HEAD.
pub(super) fn commit() -> String {
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

pub(super) fn today() -> String {
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

pub(super) fn render(r: &Report<'_>) -> String {
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
        "`tests/it/crash_matrix.rs`, {} iterations (seed {}; `CRASH_MATRIX_SEED` replays it). Each runs a scripted task with four \
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
        "`tests/it/hostile_http.rs` against a real `agent serve`, with a scripted model and \
         read-only, over a folder holding a damaged trace. \
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
         `fuzz/regressions/<target>/`, replayed by `tests/it/fuzz_smoke.rs` in CI.\n"
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
        "\nThe stable driver (`tests/it/fuzz_smoke.rs`) then mutated the seeds for {} s per target: \
         {smoke_inputs:.0} inputs.\n",
        r.plan.smoke_seconds
    );

    out.push_str(FINDINGS);
    out
}

/// The schemathesis version of `scripts/setup-schemathesis.sh`.
pub(super) const SCHEMATHESIS_VERSION: &str = "4.32.5";

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
## Confinement\n\
\n\
The model's commands run in a kernel sandbox (`--sandbox workspace-write`, the default; `read-only`; `off`), tested with real commands under the real kernel (Linux, Landlock ABI 7, seccomp) and each check run again with `--sandbox off`, where it must fail, so a missing sandbox cannot pass:\n\
\n\
| check | sandboxed | with `--sandbox off` |\n\
|---|---|---|\n\
| 12 writes from `bash` (`crates/agent-tools/tests/it/sandbox.rs`): 4 inside the workspace and its `$TMPDIR`, 8 at `.git/config`, `agent.toml` (written, removed and rewritten, moved away, reached through a `src/up -> ..` symlink), `.agent/` and a new top-level entry | the 4 land, the 8 are refused, each refusal's result names the sandbox | all 12 land |\n\
| a write outside the workspace (`workspace-write`, `read-only`) | refused | lands |\n\
| `agent run --yes` whose command, in a workspace with `.git/` and `.agent/` but no `agent.toml`, makes `new.txt`, `newdir/sub/f.txt` and `newdir.txt` at the top, then writes `agent.toml`, `.git/config`, `.git/hooks-planted`, `.agent/x`, the trace folder and a folder outside (`commands_create_entries_at_the_top_but_no_protected_path`); the same as the unprivileged user `nobody` by hand | the 3 top-level entries land; `.git` and `.agent` writes fail with \"Read-only file system\", the trace folder and outside with \"Permission denied\", `agent.toml` is taken away after the command and the result says so | all land |\n\
| a TCP connection to a loopback server the test runs | refused, the server counts 0 connections (an `AF_UNIX` socket pair still works) | 1 connection |\n\
| `env` in a command run by `agent run --yes` with `OPENAI_API_KEY`, `AGENT_TOKEN` and `MY_DB_PASSWORD` set (`crates/agent-cli/tests/it/confinement.rs`) | none of the 3 values shown | all 3 shown, and stderr says the sandbox is off |\n\
| `write_file` / `edit_file` on `agent.toml`, `.git/config`, `.agent/notes.md`, `src/../.git/hooks/pre-commit`, `src/up/agent.toml` | refused as protected, whatever the mode or the rules | (same: the file tools never write them) |\n\
| 56 spellings of `rm -rf target` (`rm -fr`, `rm -r -f`, `\"rm\"`, `r\\m`, `$'rm'`, `sh -c`, `bash -c`, `eval`, `$(echo rm)`, `xargs`, `timeout`, `nice`, `env`, `sudo`, `{ …; }`, `if`, `for`, `case`, a function, `find -delete`, `find -exec`, a command substitution, a script piped to `bash`, ...), each run by `agent run --yes --sandbox off` with `deny = [\"bash(rm -rf)\"]` against a real folder (`a_deny_rule_holds_against_every_spelling_under_yes`) | 0 of 56 deleted it (a script whose program cannot be known is refused by the rule) | without the rule, `rm -rf target` deletes it |\n\
| `read_file`, `write_file`, `edit_file` and `grep` on `.env` through `sub/../.env`, `./sub/deeper/../../.env`, a symlink to it and `src/cfg/.env` with `src/cfg -> ..`, under `deny = [\"read_file(.env)\", ...]` | all 20 refused; `grep` of the folder holding it refused; an allow rule `write_file(src/**)` does not cover `src/cfg/agent.toml` | |\n\
| SIGKILL of `agent run` while its command runs `sleep 30` with two background children | the 3 processes gone within 1 s | |\n\
| 60 rounds of SIGKILL of the agent in a command, then `agent resume` at once | 60 resumes took the trace's lock and ran their command, 0 refused (219 s on 2 busy cores) | |\n\
\n\
How: each command is started from a fresh thread that first restricts itself (Landlock for writes, a seccomp filter refusing `AF_INET`/`AF_INET6` sockets and `io_uring_setup`); the child inherits both and no other thread of the agent is confined. Landlock cannot take rights away below a granted tree, so the `agent` binary starts each `workspace-write` command through its own helper mode: in a new user and mount namespace (the user mapped onto itself) every protected path that exists is bound read-only onto itself, Landlock grants the writable roots whole (and forbids any later mount change), seccomp closes the network, and the helper `exec`s the command, which can so create entries at the top of the workspace. A protected path that does not exist cannot carry a mount without creating an entry in the workspace, which is never done: it is taken out of the workspace (into the run's `$TMPDIR`) as soon as the command's process group is dead, before the agent or the model act again, and the result says so. Where user namespaces cannot be had, stderr says so once and a writable root is granted entry by entry as before (`.git`, `agent.toml`, `.agent` and the trace folder never granted; no new entry at the top); a program embedding the tools without the helper gets the same. Without Landlock (or seccomp, when the network is closed) `workspace-write` and `read-only` refuse to start rather than run unconfined. The process group of a command dies with the agent because its first shell watches a pipe only the agent holds open. The lock of a trace is opened close-on-exec (std's `File`), so no command inherits it.\n\
\n\
## Known limits\n\n\
- The sandbox confines writes and the network, not reads: a command can read anything the user can (secrets in files included; only the environment is cleaned). A command that detaches itself with `setsid` leaves the process group and is not killed with it. A protected path that did not exist when a command started (`agent.toml`, `.agent/` in most projects) can be created while the command runs and is only taken away when it ends, so another program reading it during the command (a second agent in the same folder) could see it; without user namespaces a sandboxed command cannot create a new entry at the top of a writable root.\n\
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
