//! Frostbite (Battlefield: Bad Company 2, 3, 4 and Hardline, Venice Unleashed) over TCP: the
//! remote-administration port answers `serverInfo`, `version` and `listPlayers all` without
//! a login. [`client`] asks all three, [`status`] maps the answers by the game the server
//! names, [`responder`] answers them from a server state.

pub mod client;
pub mod responder;
pub mod status;

pub use client::FrostbiteSession;
pub use responder::FrostbiteResponder;

use std::net::SocketAddr;
use std::time::Instant;

use query_specs::frostbite::Header;
use query_wire::Error;

use crate::error::QueryError;
use crate::status::ServerStatus;
use crate::stream::{header_frame_len, replay, FrameLen};

/// The largest packet read: four times the 16,384 bytes the servers' documentation allows,
/// since a full BF4 server's player list comes near it.
pub const MAX_PACKET: usize = 64 * 1024;

/// Where a packet ends: its header's size, which counts the header.
pub(crate) fn frame_len(buf: &[u8]) -> Result<FrameLen, Error> {
    header_frame_len(buf, |h: &Header| h.size as usize)
}

/// The status a client would read from a server that sent `pieces` (its bytes in read order,
/// split anywhere, as a capture holds them). The answers are told apart by their shape rather
/// than their sequence numbers, which were those of the client that recorded them. For
/// `gsq decode frostbite --status`.
pub fn status_from_stream(
    target: SocketAddr,
    pieces: &[&[u8]],
) -> Result<ServerStatus, QueryError> {
    replay(FrostbiteSession::replaying(target), pieces, Instant::now()).0
}
