//! Exit codes, and the error kind that maps to the usage code.

/// How the process ends (Contract: scripts rely on these numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExitCode {
    /// The run completed, or the command did what was asked.
    Completed = 0,
    /// The run failed, or the command could not do what was asked.
    Failed = 1,
    /// The command line or the configuration is wrong.
    Usage = 2,
    /// The run hit a limit (iterations or cost).
    Limit = 3,
    /// The model's answer stayed cut off at its length limit (`max_tokens`) after the run asked
    /// it to go on; the partial answer is printed and the trace can be resumed.
    Truncated = 4,
    /// The run ended with goals of its plan left open (`incomplete`): the model stopped working
    /// on them after being sent back to them; the trace can be resumed.
    Incomplete = 5,
    /// The run was cancelled (Ctrl-C); the trace can be resumed.
    Cancelled = 130,
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

/// A usage or configuration error: reported as it is, with exit code 2.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code of an outcome: 0 completed, 1 failed, 3 limit hit, 4 answer truncated, 5
/// goals left open, 130 cancelled.
pub(crate) fn exit_code(outcome: &agent_runner::RunOutcome) -> ExitCode {
    match outcome.stop {
        agent_runner::StopReason::Completed => ExitCode::Completed,
        agent_runner::StopReason::Cancelled => ExitCode::Cancelled,
        agent_runner::StopReason::Truncated => ExitCode::Truncated,
        agent_runner::StopReason::Incomplete => ExitCode::Incomplete,
        stop if stop.is_limit() => ExitCode::Limit,
        _ => ExitCode::Failed,
    }
}
