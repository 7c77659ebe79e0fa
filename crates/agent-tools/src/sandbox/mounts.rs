//! The mounts of a command's own mount namespace: its writable roots bound onto themselves, every
//! other mount made read-only (so `chmod`, `touch` and `setxattr` fail outside them too, which
//! Landlock does not cover), the protected paths bound read-only, a private `/dev/shm`, and the
//! Unix sockets of services outside covered, so that a command with the network off cannot talk
//! to docker, D-Bus or an ssh agent.
//!
//! All of it happens in the namespace only, which dies with the command; nothing is created or
//! changed outside it.

use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::mount::{MsFlags, mount};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::helper::Request;

/// The shared-memory folder each command gets a private, empty one of.
pub(super) const SHM: &str = "/dev/shm";

/// Sets up the mounts of the new mount namespace; returns whether a private [`SHM`] was mounted.
///
/// # Errors
///
/// A mount that should be read-only and cannot be made so.
pub(super) fn prepare(request: &Request, covered: &[PathBuf]) -> Result<bool, String> {
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| format!("cannot make the mounts private: {e}"))?;
    let cwd = std::env::current_dir().ok();
    let roots: Vec<&PathBuf> = request
        .writable
        .iter()
        .filter(|path| {
            std::fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir() || meta.is_file())
        })
        .collect();
    for root in &roots {
        mount(
            Some(root.as_path()),
            root.as_path(),
            None::<&str>,
            MsFlags::MS_BIND | MsFlags::MS_REC,
            None::<&str>,
        )
        .map_err(|e| format!("cannot bind {}: {e}", root.display()))?;
    }
    let mounted = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read the mounts: {e}"))?;
    let mut points: Vec<PathBuf> = mounted.lines().filter_map(mount_point).collect();
    points.sort();
    points.dedup();
    for point in points {
        if roots.iter().any(|root| point.starts_with(root)) {
            continue;
        }
        remount_read_only(&point)
            .map_err(|e| format!("cannot make {} read-only: {e}", point.display()))?;
    }
    for path in &request.read_only {
        bind_read_only(path).map_err(|e| format!("cannot protect {}: {e}", path.display()))?;
    }
    let shm = Path::new(SHM).is_dir()
        && mount(
            Some("tmpfs"),
            SHM,
            Some("tmpfs"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
            Some("mode=1777"),
        )
        .is_ok();
    for socket in covered {
        // A socket that went away since it was listed needs no cover.
        let _ = mount(
            Some("/dev/null"),
            socket.as_path(),
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        );
    }
    // The current folder was entered before its writable mount existed: enter it again.
    if let Some(cwd) = cwd {
        std::env::set_current_dir(&cwd)
            .map_err(|e| format!("cannot enter {}: {e}", cwd.display()))?;
    }
    Ok(shm)
}

/// The mount point of a `/proc/self/mountinfo` line, with its octal escapes read.
fn mount_point(line: &str) -> Option<PathBuf> {
    let field = line.split(' ').nth(4)?;
    let mut bytes = Vec::with_capacity(field.len());
    let raw = field.as_bytes();
    let mut index = 0;
    while index < raw.len() {
        let escaped = raw.get(index + 1..index + 4).and_then(|digits| {
            let text = std::str::from_utf8(digits).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (raw[index], escaped) {
            (b'\\', Some(byte)) => {
                bytes.push(byte);
                index += 4;
            }
            (byte, _) => {
                bytes.push(byte);
                index += 1;
            }
        }
    }
    use std::os::unix::ffi::OsStringExt;
    Some(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
}

/// The flags a mount keeps when it is remounted (a user namespace may not clear them).
fn kept_flags(path: &Path) -> nix::Result<(MsFlags, bool)> {
    let now = statvfs(path)?.flags();
    let mut flags = MsFlags::empty();
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if now.contains(fs) {
            flags |= ms;
        }
    }
    Ok((flags, now.contains(FsFlags::ST_RDONLY)))
}

/// Makes the mount at `path` read-only; a mount that cannot be reached (hidden under another,
/// or closed to this user) is left, as the command cannot reach it either.
fn remount_read_only(path: &Path) -> nix::Result<()> {
    let (flags, read_only) = match kept_flags(path) {
        Ok(kept) => kept,
        Err(Errno::ENOENT | Errno::EACCES | Errno::ENOTDIR | Errno::ENOTCONN) => return Ok(()),
        Err(e) => return Err(e),
    };
    if read_only {
        return Ok(());
    }
    let flags = flags | MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
}

/// Binds `path` read-only onto itself, keeping the flags of the mount it is on.
fn bind_read_only(path: &Path) -> nix::Result<()> {
    mount(
        Some(path),
        path,
        None::<&str>,
        MsFlags::MS_BIND | MsFlags::MS_REC,
        None::<&str>,
    )?;
    let (flags, _) = kept_flags(path)?;
    let flags = flags | MsFlags::MS_BIND | MsFlags::MS_REMOUNT | MsFlags::MS_RDONLY;
    mount(None::<&str>, path, None::<&str>, flags, None::<&str>)
}

/// The path of every Unix socket listening outside the writable roots and not let through by
/// name, from `/proc/net/unix` (the sockets of this network namespace, by the path they were
/// bound at).
pub(super) fn outside_sockets(writable: &[PathBuf], allowed: &[String]) -> Vec<PathBuf> {
    let Ok(listing) = std::fs::read_to_string("/proc/net/unix") else {
        return Vec::new();
    };
    let mut sockets: Vec<PathBuf> = listing
        .lines()
        .skip(1)
        .filter_map(socket_path)
        .filter(|path| {
            !writable.iter().any(|root| path.starts_with(root))
                && !allowed.iter().any(|name| Path::new(name) == path)
        })
        .collect();
    sockets.sort();
    sockets.dedup();
    sockets
}

/// The absolute path of a `/proc/net/unix` line's socket, if it has one.
fn socket_path(line: &str) -> Option<PathBuf> {
    // Seven fields, then the path (which may hold spaces).
    let mut rest = line.trim_start();
    for _ in 0..7 {
        let (_, after) = rest.split_once(char::is_whitespace)?;
        rest = after.trim_start();
    }
    rest.starts_with('/').then(|| PathBuf::from(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_and_socket_paths_are_read_as_the_kernel_writes_them() {
        let line = "36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 - ext3 /dev/root rw";
        assert_eq!(mount_point(line), Some(PathBuf::from("/mnt/my disk")));
        assert_eq!(
            socket_path("0000000000000000: 00000002 00000000 00010000 0001 01 42901 /run/a b.sock"),
            Some(PathBuf::from("/run/a b.sock"))
        );
        assert_eq!(
            socket_path("0000000000000000: 00000002 00000000 00010000 0001 01 42902 @abstract"),
            None
        );
        assert_eq!(
            socket_path("0000000000000000: 00000003 00000000 00000000 0001 03  1234"),
            None
        );
    }
}
