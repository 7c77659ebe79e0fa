//! Small file helpers: whole-file writes through a temporary file and a rename, and folder syncs.

use std::fs;
use std::path::{Path, PathBuf};

use agent_execution::StoreError;

/// Writes a whole file so that readers see either the old or the new content, never a mix: the
/// bytes go to `<path>.tmp`, which is then renamed over `path`. Nothing is synced; the store's
/// durability comes from `events.jsonl`, from which these files are rebuilt.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    write_replacing(path, bytes, false)
}

/// [`write_atomic`], the bytes synced before the rename when `sync` (the caller syncs the
/// folder): a file something durable will name.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8], sync: bool) -> Result<(), StoreError> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = fs::File::create(&tmp).and_then(|mut file| {
        std::io::Write::write_all(&mut file, bytes)?;
        if sync { file.sync_data() } else { Ok(()) }
    });
    written.map_err(|e| StoreError::io(&tmp, e))?;
    fs::rename(&tmp, path).map_err(|e| StoreError::io(path, e))
}

/// Makes a folder's entries (files created or renamed in it) durable.
pub(crate) fn sync_dir(path: &Path) -> Result<(), StoreError> {
    fs::File::open(path)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| StoreError::io(path, e))
}

/// Pretty JSON of a mirror file, with a final newline.
pub(crate) fn pretty<T: serde::Serialize>(value: &T, path: &Path) -> Result<Vec<u8>, StoreError> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(|e| StoreError::Corrupt {
        path: path.to_owned(),
        detail: format!("cannot serialise: {e}"),
    })?;
    bytes.push(b'\n');
    Ok(bytes)
}
