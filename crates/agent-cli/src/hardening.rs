//! The agent process's own secrets, kept from the commands it runs and other processes of the
//! user: `--api-key KEY` leaves the command line (which any local user can read in
//! `/proc/PID/cmdline` or `ps`) by starting this program again without it, the key passed in
//! `AGENT_API_KEY` instead; and the process is made not dumpable, so its memory, environment and
//! open files cannot be read through `/proc` or `ptrace` by a process of the same user without
//! the right to trace any process.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;

/// The variable `--api-key` is moved to (the flag reads it too).
const KEY_VAR: &str = "AGENT_API_KEY";

/// Moves `--api-key` out of the command line (never returns when it does), then makes this
/// process not dumpable.
pub(crate) fn harden() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if let Some((kept, key)) = without_key(args) {
        let (first, rest) = kept.split_first().unzip();
        let mut again = std::process::Command::new("/proc/self/exe");
        if let Some(first) = first {
            again.arg0(first);
        }
        let error = again
            .args(rest.unwrap_or_default())
            .env(KEY_VAR, key)
            .exec();
        // Starting again failed: the run goes on with the key where it was.
        crate::output::note(&format!(
            "agent: cannot take the API key off the command line ({error})"
        ));
    }
    if let Err(error) = nix::sys::prctl::set_dumpable(false) {
        tracing::debug!("cannot make the process not dumpable: {error}");
    }
}

/// The arguments without `--api-key KEY` (or `--api-key=KEY`) before a `--`, and the key; `None`
/// when there is none.
fn without_key(args: Vec<OsString>) -> Option<(Vec<OsString>, OsString)> {
    let mut kept = Vec::with_capacity(args.len());
    let mut key = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            kept.push(arg);
            kept.extend(args.by_ref());
            break;
        }
        if arg == "--api-key"
            && let Some(value) = args.next()
        {
            key = Some(value);
            continue;
        }
        if let Some(value) = arg.to_str().and_then(|a| a.strip_prefix("--api-key=")) {
            key = Some(value.into());
            continue;
        }
        kept.push(arg);
    }
    key.map(|key| (kept, key))
}

#[cfg(test)]
mod tests {
    use super::without_key;

    fn args(words: &[&str]) -> Vec<std::ffi::OsString> {
        words.iter().map(Into::into).collect()
    }

    #[test]
    fn the_key_leaves_the_arguments_and_nothing_else_does() {
        let (kept, key) =
            without_key(args(&["agent", "run", "--api-key", "sk-1", "-p", "x"])).unwrap();
        assert_eq!(kept, args(&["agent", "run", "-p", "x"]));
        assert_eq!(key, "sk-1");
        let (kept, key) = without_key(args(&["agent", "--api-key=sk-2", "chat"])).unwrap();
        assert_eq!(kept, args(&["agent", "chat"]));
        assert_eq!(key, "sk-2");
        assert!(without_key(args(&["agent", "run", "--", "--api-key", "x"])).is_none());
        assert!(without_key(args(&["agent", "run", "hello"])).is_none());
    }
}
