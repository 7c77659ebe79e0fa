//! What every request handler of a connection shares.

use std::sync::Arc;

use crate::Host;
use crate::permission::Permissions;
use crate::session::Sessions;

/// What every handler shares.
pub(crate) struct State {
    pub(crate) host: Arc<dyn Host>,
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) permissions: Arc<Permissions>,
    /// What the client's file system offers: reading, writing text files.
    pub(crate) client_fs: std::sync::Mutex<(bool, bool)>,
}
