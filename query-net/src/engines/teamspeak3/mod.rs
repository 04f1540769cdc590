//! TeamSpeak 3's ServerQuery over TCP: [`client`] selects a virtual server and asks
//! `serverinfo`, `clientlist` and `channellist` (after a `login` when given an account),
//! [`status`] maps the answers, [`responder`] answers them from a server state.

pub mod client;
pub mod responder;
pub mod status;

pub use client::{QueryLogin, Ts3Session, VirtualServer};
pub use responder::Ts3Responder;

use std::cell::Cell;
use std::net::SocketAddr;
use std::time::Instant;

use query_wire::Error;

use crate::error::QueryError;
use crate::status::ServerStatus;
use crate::stream::{replay, FrameLen, Framing};

/// The longest line a client reads: a `clientlist` of a full 1,024-slot server is about
/// 120 KiB, a `channellist` of thousands of channels more.
pub const MAX_LINE: usize = 512 * 1024;

/// Lines ended by `\n`. It remembers how far it looked, so a line that arrives in many pieces
/// is scanned once, not once per piece.
#[derive(Debug, Default)]
pub struct LineFraming {
    scanned: Cell<usize>,
}

impl Framing for LineFraming {
    fn frame_len(&self, buf: &[u8]) -> Result<FrameLen, Error> {
        let from = self.scanned.get().min(buf.len());
        match buf[from..]
            .iter()
            .position(|&b| b == query_specs::teamspeak3::LINE_END)
        {
            Some(at) => {
                self.scanned.set(0);
                Ok(FrameLen::Whole(from + at + 1))
            }
            None => {
                self.scanned.set(buf.len());
                Ok(FrameLen::Need(buf.len() + 1))
            }
        }
    }
}

/// The status a client would read from a server that sent `pieces` (its bytes in read order,
/// split anywhere, as a capture holds them): the answers are told apart by their first field
/// ([`Ts3Session::replaying`]). For `gsq decode teamspeak3 --status`.
pub fn status_from_stream(
    target: SocketAddr,
    pieces: &[&[u8]],
) -> Result<ServerStatus, QueryError> {
    replay(Ts3Session::replaying(target), pieces, Instant::now()).0
}
