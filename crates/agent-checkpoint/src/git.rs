//! The `git` program, run against the shadow store only: every variable that could point it at
//! the user's repository is cleared, the store, work tree and index are set explicitly, and no
//! configuration that could run a program (hooks, filters, fsmonitor, external diff) is read.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::CheckpointError;

/// One shadow store seen through `git`: its git directory, the work tree it snapshots, the index
/// it uses and the user's global excludes file (read, never written).
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) git_dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    pub(crate) index: PathBuf,
    pub(crate) excludes_file: Option<PathBuf>,
}

impl Git {
    /// A command with the isolated environment and `args`.
    pub(crate) fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                command.env_remove(key);
            }
        }
        command
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_AUTHOR_NAME", "agent")
            .env("GIT_AUTHOR_EMAIL", "agent@localhost")
            .env("GIT_COMMITTER_NAME", "agent")
            .env("GIT_COMMITTER_EMAIL", "agent@localhost")
            .env("LC_ALL", "C")
            .current_dir(&self.work_tree)
            .stdin(Stdio::null());
        for setting in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.untrackedCache=false",
            "core.autocrlf=false",
            "core.safecrlf=false",
            "core.symlinks=true",
            "core.quotePath=false",
            "gc.auto=0",
            "maintenance.auto=false",
            "diff.external=",
            "commit.gpgSign=false",
        ] {
            command.arg("-c").arg(setting);
        }
        if let Some(file) = &self.excludes_file {
            command
                .arg("-c")
                .arg(format!("core.excludesFile={}", file.display()));
        }
        command.args(args);
        command
    }

    /// Runs `git args`, feeding `input` on standard input, and returns standard output.
    pub(crate) fn run<I, S>(
        &self,
        args: I,
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command(args);
        let name = command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .find(|a| !a.contains('=') && a != "-c")
            .unwrap_or_default();
        let failed = |message: String| CheckpointError::Git {
            command: name.clone(),
            message,
        };
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // Written on a thread so a large output cannot block a large input.
            let input = input.to_vec();
            let writer = std::thread::spawn(move || stdin.write_all(&input));
            let output = child
                .wait_with_output()
                .map_err(|e| failed(e.to_string()))?;
            let _ = writer.join();
            return checked(output, failed);
        }
        let output = child
            .wait_with_output()
            .map_err(|e| failed(e.to_string()))?;
        checked(output, failed)
    }

    /// Runs `git args` and returns standard output as text, trimmed.
    pub(crate) fn text<I, S>(&self, args: I) -> Result<String, CheckpointError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.run(args, None)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }
}

fn checked(
    output: std::process::Output,
    failed: impl Fn(String) -> CheckpointError,
) -> Result<Vec<u8>, CheckpointError> {
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(failed(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ))
    }
}

/// The user's global excludes file: `core.excludesFile` of the user's own configuration (read
/// with `git config`, which runs nothing), else git's default `$XDG_CONFIG_HOME/git/ignore`,
/// which git reads by itself.
pub(crate) fn user_excludes_file(work_tree: &Path) -> Option<PathBuf> {
    if !has_global_config() {
        // Nothing to read: no process to start.
        return None;
    }
    let mut command = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            command.env_remove(key);
        }
    }
    let output = command
        .args(["config", "--global", "--path", "--get", "core.excludesFile"])
        .current_dir(work_tree)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
}

/// Whether the user has a global git configuration file (`$XDG_CONFIG_HOME/git/config`, else
/// `~/.config/git/config`, or `~/.gitconfig`), the only places `git config --global` reads
/// (`GIT_CONFIG_GLOBAL` is cleared for it like every `GIT_*` variable).
fn has_global_config() -> bool {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|x| !x.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    let candidates = [
        xdg.map(|x| x.join("git").join("config")),
        home.map(|h| h.join(".gitconfig")),
    ];
    // A file that cannot be looked at is left to git to judge.
    candidates
        .into_iter()
        .flatten()
        .any(|path| !matches!(path.try_exists(), Ok(false)))
}

/// Splits NUL-separated git output into paths.
pub(crate) fn nul_paths(out: &[u8]) -> Vec<String> {
    out.split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}
