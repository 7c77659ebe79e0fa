//! Removing files of the workspace without following a symlink below it: the folder a file is
//! in is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` and the file removed
//! through it, so a folder another process swapped for a symlink (a command left running with the
//! sandbox off) makes a restore fail instead of deleting a file outside the workspace.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{OFlag, OpenHow, ResolveFlag, openat2};

/// The folder `relative` below `root`, opened without following any symlink below `root`.
fn open_dir(root: &Path, relative: &Path) -> io::Result<OwnedFd> {
    let top = OwnedFd::from(File::open(root)?);
    if relative.as_os_str().is_empty() {
        return Ok(top);
    }
    let how = OpenHow::new()
        .flags(OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
    openat2(&top, relative, how).map_err(io::Error::from)
}

/// `relative`'s path through its open folder, which no swap can redirect, with the folder.
fn through_parent(root: &Path, relative: &Path) -> io::Result<(OwnedFd, PathBuf)> {
    let name = relative
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let dir = open_dir(root, relative.parent().unwrap_or(Path::new("")))?;
    let path = Path::new(&format!("/proc/self/fd/{}", dir.as_raw_fd())).join(name);
    Ok((dir, path))
}

/// Removes the file (or symlink) `relative` below `root`.
pub(crate) fn remove_file(root: &Path, relative: &Path) -> io::Result<()> {
    let (_dir, path) = through_parent(root, relative)?;
    std::fs::remove_file(path)
}

/// Removes the folder `relative` below `root` with everything in it.
pub(crate) fn remove_dir_all(root: &Path, relative: &Path) -> io::Result<()> {
    let (_dir, path) = through_parent(root, relative)?;
    std::fs::remove_dir_all(path)
}

/// Removes the empty folder `relative` below `root`.
pub(crate) fn remove_dir(root: &Path, relative: &Path) -> io::Result<()> {
    let (_dir, path) = through_parent(root, relative)?;
    std::fs::remove_dir(path)
}
