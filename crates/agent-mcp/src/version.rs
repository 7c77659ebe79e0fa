//! The protocol version the client offers and the ones it accepts, as the specification's
//! lifecycle describes: offer the newest version with an `initialize` handshake, accept an older
//! one the server answers with.

use rmcp::model::ProtocolVersion;

/// The protocol version the client offers in `initialize`. A server answering with an older
/// version it supports is accepted (see [`supported`]); versions from 2026-07-28 on have no
/// `initialize` handshake, so the newest one with it is what an `initialize` can offer.
pub(crate) const OFFERED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Whether the client speaks `version`, a server's answer to `initialize`.
pub(crate) fn supported(version: &ProtocolVersion) -> bool {
    ProtocolVersion::known_up_to(&OFFERED_VERSION).contains(version)
}
