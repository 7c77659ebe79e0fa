//! Rewinds: the workspace's files put back as they were when a goal (or a turn of a
//! conversation) started, and the trace forked there — what `agent rewind`, `/rewind` in a
//! chat and in the full-screen UI all do, through [`rewind`]; the points a trace can go back
//! to ([`points`]); and a goal's file changes as a unified diff ([`goal_diff`]).
//!
//! The restore runs `git`, so it runs away from the async workers. Before anything is written
//! the restore is tried dry, so files changed since the run's last checkpoint by someone else
//! refuse the rewind (unless forced) before the fork is made.

use std::sync::Arc;

/// The store a trace's checkpoints are read from, as [`checkpoints_of`] opens it.
pub use agent_checkpoint::CheckpointStore;
use agent_checkpoint::{
    Changes, CheckpointError, DiffTarget, EntriesExt, Entry, Point, RestoreOptions, SnapshotId,
};
use agent_execution::fork::{self, ForkError, ForkPoint, Forked};
use agent_execution::{Role, StoreError, TraceStore};

use agent_runner::RunnerOptions;

/// Where to go back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewindTarget {
    /// The start of the goal with this display number (e.g. `"2.1"`).
    Goal(String),
    /// The start of the conversation's turn with this number (from 1: the run's start); the
    /// fork keeps the turns before it (the first turn has none: only its files go back).
    Turn(usize),
}

impl RewindTarget {
    /// Reads `2.1` as a goal and `t3` as a turn; `None` for anything else.
    pub fn parse(text: &str) -> Option<Self> {
        if let Some(turn) = text.strip_prefix('t') {
            return turn.parse().ok().filter(|n| *n > 0).map(Self::Turn);
        }
        let number = text.split('.').all(|part| part.parse::<u32>().is_ok());
        number.then(|| Self::Goal(text.to_owned()))
    }
}

impl std::fmt::Display for RewindTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Goal(number) => write!(f, "goal {number}"),
            Self::Turn(number) => write!(f, "turn {number}"),
        }
    }
}

/// How to rewind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RewindOptions {
    /// Put the files back without forking the trace.
    pub files_only: bool,
    /// Overwrite files changed since the run's last checkpoint too.
    pub force: bool,
    /// Change nothing: say which files would change.
    pub dry_run: bool,
}

/// What a rewind did (or, dry, would do).
#[derive(Debug, Clone, PartialEq)]
pub struct Rewound {
    /// The files put back (or that would be).
    pub changes: Changes,
    /// The fork the conversation goes on in; `None` with `files_only` or `dry_run`.
    pub forked: Option<Forked>,
}

/// Why a rewind (or a listing, or a diff) could not be made; nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RewindError {
    /// The trace's plan has no goal with this number.
    #[error("trace {trace_id} has no goal {number}")]
    UnknownGoal {
        /// The trace.
        trace_id: String,
        /// The number given.
        number: String,
    },
    /// The point was never snapshotted (the goal or turn never started, or its snapshot could
    /// not be taken).
    #[error("{target} of {trace_id} has no checkpoint of its start")]
    NoCheckpoint {
        /// The trace.
        trace_id: String,
        /// The point asked for.
        target: RewindTarget,
    },
    /// Files changed since the last checkpoint would be overwritten: rewind with `force`.
    #[error(transparent)]
    Conflicts(CheckpointError),
    /// The trace could not be forked.
    #[error(transparent)]
    Fork(ForkError),
    /// The checkpoints could not be read or written.
    #[error("checkpoints: {0}")]
    Checkpoint(CheckpointError),
    /// The trace store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl RewindError {
    /// True when the request is the user's to change (an unknown point, files changed since
    /// the run), as opposed to a store or `git` failure.
    pub fn is_user_error(&self) -> bool {
        match self {
            Self::UnknownGoal { .. } | Self::NoCheckpoint { .. } | Self::Conflicts(_) => true,
            Self::Fork(error) => {
                error.is_bad_request() || matches!(error, ForkError::NotFound { .. })
            }
            Self::Checkpoint(_) | Self::Store(_) => false,
        }
    }
}

impl From<CheckpointError> for RewindError {
    fn from(error: CheckpointError) -> Self {
        match error {
            CheckpointError::Conflicts { .. } => Self::Conflicts(error),
            other => Self::Checkpoint(other),
        }
    }
}

/// A point a trace can be rewound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindPoint {
    /// The point, as `/rewind` takes it.
    pub target: RewindTarget,
    /// What it is: the goal's description, or the turn's first words.
    pub about: String,
}

/// The checkpoints of `trace_id` kept by the runner with these options; `None` when the runner
/// takes none or the trace has none.
pub fn checkpoints_of(
    options: &RunnerOptions,
    trace_id: &str,
) -> Result<Option<Arc<CheckpointStore>>, RewindError> {
    match &options.checkpoints {
        Some(checkpoints) => Ok(checkpoints.checkpointer.open(trace_id)?),
        None => Ok(None),
    }
}

/// The goals and turns of `trace_id` whose start was snapshotted, goals first (in the plan's
/// order), then turns.
pub async fn points(
    store: &dyn TraceStore,
    checkpoints: &Arc<CheckpointStore>,
    trace_id: &str,
) -> Result<Vec<RewindPoint>, RewindError> {
    let entries = entries(checkpoints).await?;
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    let mut points: Vec<RewindPoint> = tree
        .goals()
        .iter()
        .filter(|goal| entries.goal_start(&goal.id).is_some())
        .filter_map(|goal| {
            let number = tree.display_number(&goal.id)?;
            Some(RewindPoint {
                target: RewindTarget::Goal(number),
                about: goal.description.clone(),
            })
        })
        .collect();
    let asked = user_turns(store, trace_id).await?;
    let snapshots = turn_starts(&entries).len();
    if asked.len() > 1 && snapshots > 0 {
        // The newest snapshots are the newest turns' (a fork's store starts at the fork).
        let first = asked.len().saturating_sub(snapshots);
        for (index, (_, about)) in asked.iter().enumerate().skip(first) {
            points.push(RewindPoint {
                target: RewindTarget::Turn(index + 1),
                about: about.clone(),
            });
        }
    }
    Ok(points)
}

/// Puts the workspace's files back as they were at `target`'s start, then (unless
/// `files_only` or `dry_run`) forks the trace there. The restore is tried dry first, so a
/// refusal (files changed since the run's last checkpoint, without `force`) changes nothing
/// and forks nothing.
pub async fn rewind(
    store: &dyn TraceStore,
    checkpoints: &Arc<CheckpointStore>,
    trace_id: &str,
    target: &RewindTarget,
    options: RewindOptions,
) -> Result<Rewound, RewindError> {
    let (start, point) = start_of(store, checkpoints, trace_id, target).await?;
    let check = RestoreOptions {
        force: options.force,
        dry_run: true,
    };
    let changes = restore(checkpoints, &start, check).await?;
    if options.dry_run {
        return Ok(Rewound {
            changes,
            forked: None,
        });
    }
    let forked = match (options.files_only, point) {
        (true, _) | (false, None) => None,
        (false, Some(point)) => Some(
            fork::fork(store, trace_id, &point)
                .await
                .map_err(RewindError::Fork)?,
        ),
    };
    let apply = RestoreOptions {
        force: options.force,
        dry_run: false,
    };
    let changes = restore(checkpoints, &start, apply).await?;
    Ok(Rewound { changes, forked })
}

/// The unified diff of goal `number`'s files: from its start to its end, or to the workspace
/// now while it has not ended. Empty when nothing changed.
pub async fn goal_diff(
    store: &dyn TraceStore,
    checkpoints: &Arc<CheckpointStore>,
    trace_id: &str,
    number: &str,
) -> Result<String, RewindError> {
    let target = RewindTarget::Goal(number.to_owned());
    let (from, _) = start_of(store, checkpoints, trace_id, &target).await?;
    let goal_id = goal_id(store, trace_id, number).await?;
    let entries = entries(checkpoints).await?;
    let to = entries
        .goal_end(&goal_id)
        .map_or(DiffTarget::Workspace, DiffTarget::Snapshot);
    blocking(checkpoints, move |store| store.diff(&from, &to)).await
}

/// The snapshot of `target`'s start, and where the trace forks for it (`None` for the first
/// turn: there is nothing before it to keep).
async fn start_of(
    store: &dyn TraceStore,
    checkpoints: &Arc<CheckpointStore>,
    trace_id: &str,
    target: &RewindTarget,
) -> Result<(SnapshotId, Option<ForkPoint>), RewindError> {
    let entries = entries(checkpoints).await?;
    let missing = || RewindError::NoCheckpoint {
        trace_id: trace_id.to_owned(),
        target: target.clone(),
    };
    match target {
        RewindTarget::Goal(number) => {
            let id = goal_id(store, trace_id, number).await?;
            let start = entries.goal_start(&id).ok_or_else(missing)?;
            Ok((start, Some(ForkPoint::Goal(number.clone()))))
        }
        RewindTarget::Turn(number) => {
            let starts = turn_starts(&entries);
            let asked = user_turns(store, trace_id).await?;
            // The newest snapshots are the newest turns' (a fork's store starts at the fork).
            let index = (number - 1 + starts.len())
                .checked_sub(asked.len())
                .ok_or_else(missing)?;
            let start = starts.get(index).cloned().ok_or_else(missing)?;
            let sequence = asked.get(number - 1).map(|(sequence, _)| *sequence);
            // The first turn has nothing before it to fork: the files alone go back.
            let fork = sequence
                .filter(|s| *s > 1 && *number > 1)
                .map(|s| ForkPoint::Message(s - 1));
            Ok((start, fork))
        }
    }
}

async fn goal_id(
    store: &dyn TraceStore,
    trace_id: &str,
    number: &str,
) -> Result<String, RewindError> {
    let tree = store.get_goal_tree(trace_id).await?.unwrap_or_default();
    tree.find_by_display(number)
        .map(|goal| goal.id.clone())
        .ok_or_else(|| RewindError::UnknownGoal {
            trace_id: trace_id.to_owned(),
            number: number.to_owned(),
        })
}

/// The snapshots taken as each turn started: the run's start, then each next turn.
fn turn_starts(entries: &[Entry]) -> Vec<SnapshotId> {
    entries
        .iter()
        .filter(|e| matches!(e.point, Point::RunStart | Point::Turn))
        .filter_map(|e| e.id.clone())
        .collect()
}

/// The user messages of the trace's main line, each with its sequence and first line: one per
/// turn of a conversation (a message sent to a running turn would count as one too).
async fn user_turns(
    store: &dyn TraceStore,
    trace_id: &str,
) -> Result<Vec<(u64, String)>, RewindError> {
    let messages = store.get_trace_messages_shared(trace_id).await?;
    let turns = messages
        .iter()
        .filter(|m| m.role == Role::User && m.branch_id.is_none())
        .map(|m| {
            let text = m.content.text().lines().next().unwrap_or_default();
            (m.sequence, text.to_owned())
        })
        .collect();
    Ok(turns)
}

async fn entries(checkpoints: &Arc<CheckpointStore>) -> Result<Vec<Entry>, RewindError> {
    blocking(checkpoints, |store| store.entries()).await
}

async fn restore(
    checkpoints: &Arc<CheckpointStore>,
    id: &SnapshotId,
    options: RestoreOptions,
) -> Result<Changes, RewindError> {
    let id = id.clone();
    blocking(checkpoints, move |store| store.restore(&id, options)).await
}

/// Runs `work` on the store away from the async workers (it runs `git` and reads files).
async fn blocking<T: Send + 'static>(
    checkpoints: &Arc<CheckpointStore>,
    work: impl FnOnce(&CheckpointStore) -> Result<T, CheckpointError> + Send + 'static,
) -> Result<T, RewindError> {
    let store = checkpoints.clone();
    match tokio::task::spawn_blocking(move || work(&store)).await {
        Ok(done) => done.map_err(RewindError::from),
        Err(error) => Err(RewindError::Checkpoint(CheckpointError::Git {
            command: "checkpoint task".to_owned(),
            message: error.to_string(),
        })),
    }
}

/// What a `/rewind` command asks, in a chat or the full-screen UI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/rewind`: list the points the conversation can go back to.
    List,
    /// `/rewind N [--force] [--files-only]` (or `tK` for turn K).
    Rewind(RewindTarget, RewindOptions),
}

/// How `/rewind` is written, for its mistakes.
pub const COMMAND_USAGE: &str = "/rewind lists the points to go back to; /rewind N puts the \
files back as at goal N's start and goes on in a fork (/rewind tK: turn K); add --force to \
overwrite files changed since, --files-only to keep the conversation";

/// Reads the words after `/rewind`.
///
/// # Errors
///
/// The words are not a point and flags: the message says what would work.
pub fn parse_command(words: &[&str]) -> Result<Command, String> {
    let mut target = None;
    let mut options = RewindOptions::default();
    for word in words {
        match *word {
            "--force" | "-f" => options.force = true,
            "--files-only" => options.files_only = true,
            "--dry-run" | "-n" => options.dry_run = true,
            point if target.is_none() => match RewindTarget::parse(point) {
                Some(point) => target = Some(point),
                None => {
                    return Err(format!(
                        "{point:?} is not a goal number or tK; {COMMAND_USAGE}"
                    ));
                }
            },
            extra => return Err(format!("unexpected {extra:?}; {COMMAND_USAGE}")),
        }
    }
    match target {
        Some(target) => Ok(Command::Rewind(target, options)),
        None if options == RewindOptions::default() => Ok(Command::List),
        None => Err(format!("which point? {COMMAND_USAGE}")),
    }
}

/// The answer to `/rewind` without a point: the points, one a line.
pub fn list_text(trace_id: &str, points: &[RewindPoint]) -> String {
    if points.is_empty() {
        return format!("{trace_id} has no checkpoint to go back to yet");
    }
    let mut lines = vec![format!("/rewind N goes back to the start of one of these:")];
    for point in points {
        let name = match &point.target {
            RewindTarget::Goal(number) => number.clone(),
            RewindTarget::Turn(number) => format!("t{number}"),
        };
        let about = point.about.lines().next().unwrap_or_default();
        let about: String = about.chars().take(70).collect();
        let kind = match point.target {
            RewindTarget::Goal(_) => "goal",
            RewindTarget::Turn(_) => "turn",
        };
        lines.push(format!("  {name:<6} {kind}  {about}"));
    }
    lines.join("\n")
}

/// The answer to a rewind: what changed in the files, and the trace the session goes on in.
pub fn done_text(
    trace_id: &str,
    target: &RewindTarget,
    options: RewindOptions,
    rewound: &Rewound,
) -> String {
    let changes = &rewound.changes;
    let counts = format!(
        "{} added, {} modified, {} deleted",
        changes.added.len(),
        changes.modified.len(),
        changes.deleted.len()
    );
    if options.dry_run {
        let mut lines = vec![format!(
            "rewinding to the start of {target} would change: {counts}"
        )];
        for (mark, paths) in [
            ("A", &changes.added),
            ("M", &changes.modified),
            ("D", &changes.deleted),
        ] {
            lines.extend(paths.iter().map(|path| format!("  {mark} {path}")));
        }
        return lines.join("\n");
    }
    let mut text = format!("files put back as at the start of {target}: {counts}");
    match &rewound.forked {
        Some(forked) => text.push_str(&format!(
            "; this conversation goes on in {} (forked from {trace_id}, which keeps its history)",
            forked.trace_id
        )),
        None => text.push_str(&format!("; the conversation goes on in {trace_id}")),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(words: &str, expected: Result<Command, &str>) {
        let words: Vec<&str> = words.split_whitespace().collect();
        match (parse_command(&words), expected) {
            (Ok(got), Ok(want)) => assert_eq!(got, want, "{words:?}"),
            (Err(got), Err(want)) => assert!(got.contains(want), "{words:?}: {got}"),
            (got, want) => panic!("{words:?}: got {got:?}, wanted {want:?}"),
        }
    }

    #[test]
    fn the_words_of_rewind() {
        let goal = |n: &str| RewindTarget::Goal(n.to_owned());
        let plain = RewindOptions::default();
        check("", Ok(Command::List));
        check("2", Ok(Command::Rewind(goal("2"), plain)));
        check(
            "2.1 --force",
            Ok(Command::Rewind(
                goal("2.1"),
                RewindOptions {
                    force: true,
                    ..plain
                },
            )),
        );
        check(
            "--files-only t3",
            Ok(Command::Rewind(
                RewindTarget::Turn(3),
                RewindOptions {
                    files_only: true,
                    ..plain
                },
            )),
        );
        check(
            "-n 1",
            Ok(Command::Rewind(
                goal("1"),
                RewindOptions {
                    dry_run: true,
                    ..plain
                },
            )),
        );
        check("two", Err("\"two\" is not a goal number or tK"));
        check("t0", Err("is not a goal number"));
        check("2 3", Err("unexpected \"3\""));
        check("--force", Err("which point?"));
    }

    #[test]
    fn the_answers_name_the_points_and_the_changes() {
        let points = [
            RewindPoint {
                target: RewindTarget::Goal("1".into()),
                about: "Draft\nmore".into(),
            },
            RewindPoint {
                target: RewindTarget::Turn(2),
                about: "Go on".into(),
            },
        ];
        assert_eq!(
            list_text("t", &points),
            "/rewind N goes back to the start of one of these:\n  1      goal  Draft\n  t2     turn  Go on"
        );
        assert_eq!(list_text("t", &[]), "t has no checkpoint to go back to yet");
        let rewound = Rewound {
            changes: Changes {
                added: vec!["a".into()],
                modified: vec![],
                deleted: vec!["b".into(), "c".into()],
            },
            forked: None,
        };
        let goal = RewindTarget::Goal("2".into());
        assert_eq!(
            done_text("t", &goal, RewindOptions::default(), &rewound),
            "files put back as at the start of goal 2: 1 added, 0 modified, 2 deleted; the \
             conversation goes on in t"
        );
        let dry = RewindOptions {
            dry_run: true,
            ..RewindOptions::default()
        };
        assert_eq!(
            done_text("t", &goal, dry, &rewound),
            "rewinding to the start of goal 2 would change: 1 added, 0 modified, 2 deleted\n  \
             A a\n  D b\n  D c"
        );
    }
}
