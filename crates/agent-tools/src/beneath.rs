//! File operations the agent itself makes inside a folder it trusts (a workspace, a writable
//! root), unconfined, that never follow a symlink below it: each folder on the way is opened
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a folder that another process
//! swapped for a symlink fails the operation instead of sending it outside, and the last step
//! is made through the open folder (`/proc/self/fd/N/NAME`), which no swap can redirect.

use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};
use nix::sys::stat::Mode;

/// How a folder below the root is opened: a folder, not followed through any symlink.
fn how() -> OpenHow {
    OpenHow::new()
        .flags(OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS)
}

/// The folder `relative` below `root` (the root itself for an empty path), opened without
/// following any symlink below `root`.
pub(crate) fn open_dir(root: &Path, relative: &Path) -> std::io::Result<OwnedFd> {
    let top = OwnedFd::from(File::open(root)?);
    if relative.as_os_str().is_empty() {
        return Ok(top);
    }
    openat2(&top, relative, how()).map_err(std::io::Error::from)
}

/// The folder `relative` below `root`, made (folder by folder, none through a symlink) where
/// it is missing.
pub(crate) fn create_dir_all(root: &Path, relative: &Path) -> std::io::Result<OwnedFd> {
    let mut dir = open_dir(root, Path::new(""))?;
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", relative.display()),
            ));
        };
        match nix::sys::stat::mkdirat(&dir, name, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(nix::errno::Errno::EEXIST) => {}
            Err(e) => return Err(e.into()),
        }
        dir = openat2(&dir, name, how()).map_err(std::io::Error::from)?;
    }
    Ok(dir)
}

/// The path of `name` in the open folder `dir`, which always means that folder.
pub(crate) fn in_dir(dir: &OwnedFd, name: &OsStr) -> PathBuf {
    Path::new(&format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name)
}

/// Takes `relative` (below `root`) away: moved to `parking` when given and possible, else
/// removed (a folder with everything in it). Returns whether it was taken.
pub(crate) fn take_away(root: &Path, relative: &Path, parking: Option<&Path>) -> bool {
    let (Some(name), parent) = (relative.file_name(), relative.parent()) else {
        return false;
    };
    let Ok(dir) = open_dir(root, parent.unwrap_or(Path::new(""))) else {
        return false;
    };
    let path = in_dir(&dir, name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else {
        return false;
    };
    if parking.is_some_and(|parking| std::fs::rename(&path, parking).is_ok()) {
        return true;
    }
    if meta.is_dir() {
        std::fs::remove_dir_all(&path).is_ok()
    } else {
        std::fs::remove_file(&path).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_reached_through_a_symlink_below_the_root() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        assert!(open_dir(root.path(), Path::new("link")).is_err());
        assert!(!take_away(root.path(), Path::new("link/victim"), None));
        assert!(create_dir_all(root.path(), Path::new("link/sub")).is_err());
        assert!(outside.path().join("victim").exists());
        assert!(!outside.path().join("sub").exists());
        let made = create_dir_all(root.path(), Path::new("a/b")).unwrap();
        std::fs::write(in_dir(&made, OsStr::new("f")), "y").unwrap();
        assert!(take_away(root.path(), Path::new("a/b/f"), None));
        assert!(take_away(root.path(), Path::new("a"), None));
        assert!(!root.path().join("a").exists());
    }
}
