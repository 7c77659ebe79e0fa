//! Starting a `bash` command as the sandbox says: through the sandbox helper when there is one
//! (out of this terminal's session, with namespaces where the kernel gives them), else as the
//! leader of a process group confined from a thread of its own, whose first shell watches a
//! pipe only the agent holds open. Both the `bash` tool and background shells start commands
//! here, so a background shell is confined exactly as any other command.

use std::path::Path;
use std::process::Stdio;

use nix::unistd::Pid;

use super::ToolError;
use super::guard::GroupGuard;
use super::sandbox::Confinement;

/// The group's first shell: starts the watcher that kills the group when the agent's end of
/// stdin closes, gives the command an empty stdin, and becomes `bash -c <command>`.
const GROUP_SHELL: &str = "exec 3<&0 </dev/null
{ while read -r -u 3 _; do :; done; kill -KILL 0; } >/dev/null 2>&1 &
exec 3<&-
exec bash -c \"$1\"";

/// Starts `bash -c <command_text>` in `root` as `confinement` says, with its stdout and stderr
/// piped and, without the helper, its stdin the lifeline pipe (the caller keeps it open, never
/// writing, for as long as the command may run). The guard kills everything the command started.
pub(crate) async fn spawn(
    confinement: &Confinement,
    command_text: &str,
    root: &Path,
) -> Result<(tokio::process::Child, GroupGuard), ToolError> {
    let (child, group) = match confinement.helper_command() {
        Some((program, args)) => {
            // The helper starts the command out of this terminal's session, and everything it
            // starts ends with it (see `sandbox/helper.rs`).
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .args(["bash", "-c", command_text])
                .current_dir(root)
                .env_clear()
                .envs(confinement.env.iter().map(|(name, value)| (name, value)))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
            let child = command
                .spawn()
                .map_err(|e| ToolError::failed(format!("cannot start the sandbox helper: {e}")))?;
            let pid = child.id().and_then(|pid| i32::try_from(pid).ok());
            let guard = pid.map(|pid| GroupGuard::Helper(Pid::from_raw(pid)));
            (child, guard)
        }
        None => {
            let mut command = tokio::process::Command::new("bash");
            command
                .arg("-c")
                .arg(GROUP_SHELL)
                .arg("bash")
                .arg(command_text)
                .current_dir(root)
                .env_clear()
                .envs(confinement.env.iter().map(|(name, value)| (name, value)))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0)
                .kill_on_drop(true);
            let child = spawn_confined(command, confinement.clone()).await?;
            let pid = child.id().and_then(|pid| i32::try_from(pid).ok());
            (child, pid.map(|pid| GroupGuard::Group(Pid::from_raw(pid))))
        }
    };
    let group = group.ok_or_else(|| ToolError::failed("bash exited before it could be watched"))?;
    Ok((child, group))
}

/// Starts `command` on a thread of its own that first takes on `confinement`, so the child
/// inherits the sandbox and no other thread of the process is confined.
async fn spawn_confined(
    mut command: tokio::process::Command,
    confinement: Confinement,
) -> Result<tokio::process::Child, ToolError> {
    let runtime = tokio::runtime::Handle::current();
    let (sender, receiver) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("bash-sandbox".to_owned())
        .spawn(move || {
            let _runtime = runtime.enter();
            let child = match confinement.apply_to_current_thread() {
                Ok(()) => command
                    .spawn()
                    .map_err(|e| ToolError::failed(format!("cannot start bash: {e}"))),
                Err(e) => Err(ToolError::failed(e.to_string())),
            };
            // The caller may have given up waiting; the child then dies with its handle.
            let _ = sender.send(child);
        })
        .map_err(|e| ToolError::failed(format!("cannot start bash: {e}")))?;
    receiver
        .await
        .map_err(|_| ToolError::failed("the thread starting bash ended without an answer"))?
}
