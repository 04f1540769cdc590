//! Minecraft Java Edition over TCP: the status ping of 1.7 and later ([`java`], the JSON read
//! by [`status`]), and the legacy ping of older servers ([`legacy`]). The
//! [driver](crate::tcp::query_minecraft) tries the first, then the second where a server
//! does not speak it.

pub mod java;
pub mod legacy;
pub mod responder;
pub mod status;
pub mod text;

pub use java::JavaSession;
pub use legacy::{LegacyPing, LegacySession};
pub use responder::JavaResponder;

/// The error a [`JavaSession`] ends with when the server's first byte is `FF`: a pre-1.7
/// server kicked the handshake it does not know.
pub const LEGACY_KICK: &str = "the server answered with a legacy kick (a server before 1.7)";

use std::net::SocketAddr;
use std::time::Instant;

use query_specs::minecraft_java::{RawFrame, StatusClientbound, StatusResponseFrame};
use query_wire::{Decode, Reader};

use crate::error::QueryError;
use crate::options::Options;
use crate::status::ServerStatus;
use crate::stream::replay;

/// The status a client would read from a server that sent `pieces` (its bytes in read order,
/// split anywhere, as a capture of the TCP stream holds them): a legacy reply when the first
/// byte is `FF`, else the status ping's frames, whose pong (if any) is taken as the answer to
/// the ping the client sent. For `gsq decode minecraft --status`.
pub fn status_from_stream(
    target: SocketAddr,
    pieces: &[&[u8]],
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let now = Instant::now();
    let first = pieces.iter().find_map(|p| p.first().copied());
    if first == Some(0xff) {
        let session = LegacySession::with_request(target, LegacyPing::V1_4);
        return replay(session, pieces, now).0;
    }
    let bytes = pieces.concat();
    let mut session = JavaSession::new(target, &target.ip().to_string(), options);
    if let Some(payload) = recorded_pong(&bytes) {
        session = session.with_ping_payload(payload);
    }
    replay(session, pieces, now).0
}

/// The payload of the first pong among the whole frames of `bytes`.
fn recorded_pong(bytes: &[u8]) -> Option<i64> {
    let mut reader = Reader::new(bytes);
    while !reader.is_empty() {
        let start = reader.offset();
        RawFrame::decode(&mut reader, ()).ok()?;
        let frame = &bytes[start..reader.offset()];
        if let Ok(StatusResponseFrame {
            packet: StatusClientbound::Pong { payload },
        }) = StatusResponseFrame::from_bytes(frame)
        {
            return Some(payload);
        }
    }
    None
}
