//! The legacy server list ping (before 1.7), as a [`StreamSession`].
//!
//! Sends one of the three requests of [`query_specs::minecraft_legacy`] and reads the kick
//! packet (`FF`, a u16 count of UTF-16 units, the text) however the stream splits it. The
//! reply is capped at [`MAX_FRAME`] bytes from its count alone; a server that closes the
//! connection without a whole reply, or kicks with a text that is no status, fails the query.
//!
//! Mapping: the MOTD without its `§` codes → name (as sent in `raw.legacy.motd`), the version
//! name → version, online/max → players; `raw.legacy.protocol` is the server's protocol
//! version (1.4 and later). `ping_ms` is the time from the request to the whole reply.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::minecraft_legacy::{
    Kick, KickHeader, LegacyStatus, PingHost, MAX_REPLY_UNITS, PING_1_4, PING_BETA,
};
use query_wire::{Decode, Encode, Error};
use serde_json::json;

use super::text::strip_codes;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;
use crate::stream::{header_frame_len, FrameBuffer, FrameLen, StreamSession};

/// The largest reply accepted: `FF`, the count, and [`MAX_REPLY_UNITS`] units.
pub const MAX_FRAME: usize = 3 + 2 * MAX_REPLY_UNITS;

/// Which legacy request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LegacyPing {
    /// 1.6's `FE 01 FA` with the host name and port the client connected to: what 1.6
    /// servers (and proxies that route by host name) need; older servers read its first two
    /// bytes and answer as 1.4 servers do.
    V1_6 {
        /// The host name as the user gave it.
        host: String,
        /// The port connected to.
        port: u16,
    },
    /// 1.4-1.5's `FE 01`.
    V1_4,
    /// Beta 1.8-1.3's `FE`.
    Beta,
}

type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

/// The reply's size from its declared header: the whole size once three bytes are in,
/// rather than one unit more at a time, as decoding the unit list would say.
fn kick_frame_len(buf: &[u8]) -> Result<FrameLen, Error> {
    header_frame_len(buf, KickHeader::frame_len)
}

/// A legacy status query; see the [module](self) docs.
#[derive(Debug)]
pub struct LegacySession {
    target: SocketAddr,
    request: Vec<u8>,
    sent_at: Option<Instant>,
    frames: FrameBuffer<Framing>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
}

impl LegacySession {
    /// The 1.6 request to `target`, naming its IP address as the host.
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let _ = options;
        let host = target.ip().to_string();
        Self::build(target, PingHost::new(&host, target.port()).to_vec())
    }

    /// A query of `target` with the given request.
    pub fn with_request(target: SocketAddr, ping: LegacyPing) -> Self {
        let request = match ping {
            LegacyPing::V1_6 { host, port } => PingHost::new(&host, port).to_vec(),
            LegacyPing::V1_4 => Ok(PING_1_4.to_vec()),
            LegacyPing::Beta => Ok(PING_BETA.to_vec()),
        };
        Self::build(target, request)
    }

    fn build(target: SocketAddr, request: Result<Vec<u8>, Error>) -> Self {
        let mut session = LegacySession {
            target,
            request: Vec::new(),
            sent_at: None,
            frames: FrameBuffer::new(kick_frame_len as Framing, MAX_FRAME),
            result: None,
            finished: false,
        };
        match request {
            Ok(request) => session.request = request,
            // `PingHost::new` keeps within the declared maximums: not reached, but reported.
            Err(error) => session.finish(Err(error.into())),
        }
        session
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        if !self.finished {
            self.finished = true;
            self.result = Some(result);
        }
    }

    fn read_frames(&mut self, now: Instant) {
        let rtt = self
            .sent_at
            .map_or(Duration::ZERO, |at| now.saturating_duration_since(at));
        let target = self.target;
        match self.frames.next_frame() {
            Ok(None) => {}
            Ok(Some(frame)) => {
                let result = Kick::from_bytes(frame)
                    .map_err(QueryError::from)
                    .and_then(|kick| from_kick(target, &kick, rtt));
                self.finish(result);
            }
            Err(error) => self.finish(Err(error.into())),
        }
    }
}

/// The status a legacy reply gives.
pub(crate) fn from_kick(
    target: SocketAddr,
    kick: &Kick,
    rtt: Duration,
) -> Result<ServerStatus, QueryError> {
    let text = kick.text();
    let status = LegacyStatus::parse(&text).map_err(|e| QueryError::protocol(e.to_string()))?;
    Ok(ServerStatus {
        protocol: Protocol::Minecraft,
        address: target,
        name: strip_codes(&status.motd),
        map: None,
        game_type: None,
        version: status.version.clone(),
        num_players: status.online,
        max_players: status.max,
        password: None,
        players: Vec::new(),
        teams: Vec::new(),
        rules: IndexMap::new(),
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: json!({ "legacy": status }),
    })
}

impl StreamSession for LegacySession {
    type Output = ServerStatus;

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.sent_at.is_none() && !self.finished {
            self.sent_at = Some(now);
            return Some(&self.request);
        }
        None
    }

    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.finished {
            return;
        }
        self.frames.push(bytes);
        self.read_frames(now);
    }

    fn handle_eof(&mut self, _now: Instant) {
        let error = match self.frames.finish() {
            Err(error) => error.into(),
            Ok(()) => QueryError::protocol("the server closed the connection without a reply"),
        };
        self.finish(Err(error));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{replay, splits};

    fn target() -> SocketAddr {
        "127.0.0.1:25565".parse().unwrap()
    }

    /// The 1.4 reply of the protocol's public description: protocol 47, version 1.4.2,
    /// "A Minecraft Server", 0 of 20 players.
    const REPLY_1_4: &str = "ff0023\
        00a7003100000034003700000031002e0034002e0032000000410020004d0069006e0065\
        00630072006100660074002000530065007200760065007200000030000000320030";

    fn reply_1_4() -> Vec<u8> {
        hex::decode(REPLY_1_4).unwrap()
    }

    /// The 1.6 request of the same description, to `localhost:25565` with protocol 74.
    const REQUEST_1_6: &str = "fe01fa000b004d0043007c00500069006e00670048006f00730074\
        00194a0009006c006f00630061006c0068006f00730074000063dd";

    #[test]
    fn the_1_6_request_is_the_documented_bytes() {
        let mut request = PingHost::new("localhost", 25565);
        request.data.protocol = 74;
        assert_eq!(hex::encode(request.to_vec().unwrap()), REQUEST_1_6);
    }

    #[test]
    fn every_split_of_the_reply_gives_the_status() {
        let reply = reply_1_4();
        for pieces in splits(&reply, 40) {
            let session = LegacySession::with_request(target(), LegacyPing::V1_4);
            let (result, written) = replay(session, &pieces, Instant::now());
            assert_eq!(written, PING_1_4);
            let status = result.unwrap_or_else(|e| panic!("{e} for {pieces:?}"));
            assert_eq!(status.name, "A Minecraft Server");
            assert_eq!(status.version.as_deref(), Some("1.4.2"));
            assert_eq!((status.num_players, status.max_players), (0, 20));
            assert_eq!(status.raw["legacy"]["protocol"], 47);
        }
    }

    #[test]
    fn a_beta_reply_and_formatting_codes() {
        let kick = Kick::new("\u{a7}aA \u{a7}lBeta\u{a7}r server\u{a7}3\u{a7}16");
        let reply = kick.to_vec().unwrap();
        let session = LegacySession::with_request(target(), LegacyPing::Beta);
        let (result, written) = replay(session, &[&reply], Instant::now());
        assert_eq!(written, PING_BETA);
        let status = result.unwrap();
        assert_eq!(status.name, "A Beta server");
        assert_eq!((status.num_players, status.max_players), (3, 16));
        assert_eq!(status.version, None);
    }

    #[test]
    fn a_cut_reply_a_kick_that_is_no_status_and_an_oversized_count_fail() {
        let reply = reply_1_4();
        let session = LegacySession::with_request(target(), LegacyPing::V1_4);
        let (result, _) = replay(session, &[&reply[..20]], Instant::now());
        let error = result.unwrap_err().to_string();
        assert!(error.contains("ended 53 byte(s) short"), "{error}");

        let kick = Kick::new("Outdated server!").to_vec().unwrap();
        let session = LegacySession::with_request(target(), LegacyPing::V1_4);
        let error = replay(session, &[&kick], Instant::now()).0.unwrap_err();
        assert!(error.to_string().contains("legacy status"), "{error}");

        // A count of 65,535 units is refused from the count alone, before any text arrives.
        let session = LegacySession::with_request(target(), LegacyPing::V1_4);
        let error = replay(session, &[b"\xff\xff\xff"], Instant::now())
            .0
            .unwrap_err();
        assert!(error.to_string().contains("exceed"), "{error}");

        let session = LegacySession::with_request(target(), LegacyPing::V1_4);
        let error = replay(session, &[], Instant::now()).0.unwrap_err();
        assert!(error.to_string().contains("without a reply"), "{error}");
    }
}
