//! The status ping of Minecraft Java Edition 1.7 and later, as a [`StreamSession`].
//!
//! Writes the handshake (protocol version [`PROTOCOL_UNKNOWN`], the host name the user gave,
//! the port, next state "status") and the status request in one write; reads the status
//! response, however the stream splits it, through the declared [`RawFrame`] (the size from
//! the VarInt length alone, refused over [`MAX_FRAME`] before its bytes are buffered); then
//! pings with a random number and reads the pong, whose round trip is `ping_ms`.
//!
//! - Lenient: a server that closes the connection after the status, or does not answer the
//!   ping within the attempt's timeout, still gives its status, with the status round trip as
//!   `ping_ms` (`raw.pong: false`).
//! - Without [`Options::minecraft_ping`], the session ends at the status (`raw.pong: false`,
//!   the status round trip as `ping_ms`): one round trip, the exchange of mcstatus's
//!   `status()` and gamedig.
//! - Strict: a pong that does not echo the number, a packet of another id, or bytes after the
//!   pong are errors; so is a first byte `FF`, a pre-1.7 server's kick
//!   ([`LEGACY_KICK`](super::LEGACY_KICK)), which the [driver](crate::tcp::query_minecraft)
//!   answers by trying the legacy ping.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::minecraft_java::{
    Handshake, HandshakeFrame, Handshaking, RawFrame, StatusClientbound, StatusRequestFrame,
    StatusResponseFrame, StatusServerbound, MAX_ADDRESS_BYTES, MAX_FRAME, NEXT_STATE_STATUS,
};
use query_wire::{Decode, Encode, Error};

use super::status::from_json;
use crate::engines::fit::cut_utf8;
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::Outcome;
use crate::status::ServerStatus;
use crate::stream::{declared_frame_len, FrameBuffer, FrameLen, StreamSession};

/// The protocol version sent: `-1`, "not known", which servers answer with their own.
pub const PROTOCOL_UNKNOWN: i32 = -1;

type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

fn frame_len(buf: &[u8]) -> Result<FrameLen, Error> {
    declared_frame_len::<RawFrame<'_>>(buf)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Status,
    Pong,
}

/// A Java status query; see the [module](self) docs.
#[derive(Debug)]
pub struct JavaSession {
    target: SocketAddr,
    outbox: Vec<u8>,
    send_due: bool,
    step: Step,
    started: Option<Instant>,
    ping_sent: Option<Instant>,
    payload: i64,
    /// Whether the status is followed by a ping.
    ping: bool,
    pong_wait: Duration,
    pong_deadline: Option<Instant>,
    frames: FrameBuffer<Framing>,
    status: Option<ServerStatus>,
    outcome: Outcome<ServerStatus>,
}

impl JavaSession {
    /// A status query of `target`, telling the server it was reached as `host` (the name a
    /// proxy routes by); waits [`Options::timeout`] for the pong.
    pub fn new(target: SocketAddr, host: &str, options: &Options) -> Self {
        let handshake = HandshakeFrame {
            packet: Handshaking::Handshake(Handshake {
                protocol_version: PROTOCOL_UNKNOWN,
                server_address: cut_utf8(host, MAX_ADDRESS_BYTES),
                server_port: target.port(),
                next_state: NEXT_STATE_STATUS,
            }),
        };
        let request = StatusRequestFrame {
            packet: StatusServerbound::Request,
        };
        let mut session = JavaSession {
            target,
            outbox: Vec::new(),
            send_due: true,
            step: Step::Status,
            started: None,
            ping_sent: None,
            payload: rand::random::<i64>(),
            ping: options.minecraft_ping,
            pong_wait: options.timeout,
            pong_deadline: None,
            frames: FrameBuffer::new(frame_len as Framing, MAX_FRAME),
            status: None,
            outcome: Outcome::new(),
        };
        match (handshake.to_vec(), request.to_vec()) {
            (Ok(mut bytes), Ok(request)) => {
                bytes.extend_from_slice(&request);
                session.outbox = bytes;
            }
            (Err(error), _) | (_, Err(error)) => session.finish(Err(error.into())),
        }
        session
    }

    /// The number the ping carries (random unless set here), for a caller that replays a
    /// recorded exchange.
    #[must_use]
    pub fn with_ping_payload(mut self, payload: i64) -> Self {
        self.payload = payload;
        self
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        self.send_due = false;
        self.outcome.finish(result);
    }

    /// Ends with the status read, `pong` telling whether the ping was answered.
    fn finish_with_status(&mut self, pong: bool) {
        match self.status.take() {
            Some(mut status) => {
                if let serde_json::Value::Object(raw) = &mut status.raw {
                    raw.insert("pong".to_owned(), pong.into());
                }
                self.finish(Ok(status));
            }
            None => self.finish(Err(QueryError::protocol("no status arrived"))),
        }
    }

    /// Handles the whole frames buffered, but none while the ping waits to be written: a
    /// pong is an answer only once its ping went out.
    fn read_frames(&mut self, now: Instant) {
        while !self.outcome.is_finished() && !self.send_due {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => return,
                Err(error) => return self.finish(Err(error.into())),
            };
            if let Err(error) = self.on_frame(&frame, now) {
                self.finish(Err(error));
            }
        }
    }

    fn on_frame(&mut self, frame: &[u8], now: Instant) -> Result<(), QueryError> {
        let packet = StatusResponseFrame::from_bytes(frame)?.packet;
        match (self.step, packet) {
            (Step::Status, StatusClientbound::Response { json }) => {
                let rtt = now.saturating_duration_since(self.started.unwrap_or(now));
                self.status = Some(from_json(self.target, json, rtt)?);
                if !self.ping {
                    self.finish_with_status(false);
                    return Ok(());
                }
                let ping = StatusRequestFrame {
                    packet: StatusServerbound::Ping {
                        payload: self.payload,
                    },
                };
                self.outbox = ping.to_vec()?;
                self.send_due = true;
                self.step = Step::Pong;
                self.pong_deadline = Some(now + self.pong_wait);
                Ok(())
            }
            (Step::Pong, StatusClientbound::Pong { payload }) if payload == self.payload => {
                if self.frames.buffered() > 0 {
                    return Err(QueryError::protocol("bytes after the pong"));
                }
                let rtt = now.saturating_duration_since(self.ping_sent.unwrap_or(now));
                if let Some(status) = &mut self.status {
                    status.ping_ms = rtt.as_secs_f64() * 1000.0;
                }
                self.finish_with_status(true);
                Ok(())
            }
            (Step::Pong, StatusClientbound::Pong { .. }) => Err(QueryError::protocol(
                "the pong does not echo the ping's number",
            )),
            (Step::Status, StatusClientbound::Pong { .. }) => {
                Err(QueryError::protocol("a pong before the status"))
            }
            (Step::Pong, StatusClientbound::Response { .. }) => {
                Err(QueryError::protocol("a second status instead of the pong"))
            }
        }
    }
}

impl StreamSession for JavaSession {
    type Output = ServerStatus;

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if !self.send_due || self.outcome.is_finished() {
            return None;
        }
        self.send_due = false;
        match self.step {
            Step::Status => self.started = Some(now),
            Step::Pong => self.ping_sent = Some(now),
        }
        Some(&self.outbox)
    }

    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if self.step == Step::Status && self.frames.buffered() == 0 && bytes.first() == Some(&0xff)
        {
            self.finish(Err(QueryError::protocol(super::LEGACY_KICK)));
            return;
        }
        self.frames.push(bytes);
        self.read_frames(now);
    }

    fn handle_eof(&mut self, now: Instant) {
        self.read_frames(now);
        if self.outcome.is_finished() {
            return;
        }
        match (self.step, self.frames.finish()) {
            (_, Err(error)) => self.finish(Err(error.into())),
            (Step::Pong, Ok(())) => self.finish_with_status(false),
            (Step::Status, Ok(())) => self.finish(Err(QueryError::protocol(
                "the server closed the connection without a status",
            ))),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() {
            None
        } else {
            self.pong_deadline
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if !self.outcome.is_finished() && self.pong_deadline.is_some_and(|at| now >= at) {
            self.finish_with_status(false);
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{replay, splits};
    use query_specs::minecraft_java::StatusRequestFrame;

    const JSON: &str = r#"{"version":{"name":"1.21.4","protocol":769},"enforcesSecureChat":true,"description":{"text":"A Minecraft Server"},"players":{"max":20,"online":1,"sample":[{"name":"Alice","id":"4566e69f-c907-48ee-8d71-d7ba5aa00d20"}]}}"#;
    const PAYLOAD: i64 = 0x0102_0304_0506_0708;

    fn target() -> SocketAddr {
        "127.0.0.1:25565".parse().unwrap()
    }

    fn session() -> JavaSession {
        JavaSession::new(target(), "mc.example.org", &Options::default()).with_ping_payload(PAYLOAD)
    }

    /// What a vanilla server sends: the status response, then the pong.
    fn server_bytes(pong: i64) -> Vec<u8> {
        let mut bytes = StatusResponseFrame {
            packet: StatusClientbound::Response { json: JSON },
        }
        .to_vec()
        .unwrap();
        let pong = StatusResponseFrame {
            packet: StatusClientbound::Pong { payload: pong },
        };
        bytes.extend(pong.to_vec().unwrap());
        bytes
    }

    #[test]
    fn writes_the_handshake_the_request_and_the_ping() {
        let (result, written) = replay(session(), &[&server_bytes(PAYLOAD)], Instant::now());
        result.unwrap();
        let mut expected =
            hex::decode("1800ffffffff0f0e6d632e6578616d706c652e6f726763dd010100").unwrap();
        expected.extend(
            StatusRequestFrame {
                packet: StatusServerbound::Ping { payload: PAYLOAD },
            }
            .to_vec()
            .unwrap(),
        );
        assert_eq!(hex::encode(written), hex::encode(expected));
    }

    #[test]
    fn every_split_of_a_real_exchange_gives_the_status() {
        let bytes = server_bytes(PAYLOAD);
        for pieces in splits(&bytes, 0) {
            let (result, _) = replay(session(), &pieces, Instant::now());
            let status = result.unwrap_or_else(|e| panic!("{e} for {} pieces", pieces.len()));
            assert_eq!(status.name, "A Minecraft Server");
            assert_eq!((status.num_players, status.max_players), (1, 20));
            assert_eq!(status.players[0].name, "Alice");
            assert_eq!(status.raw["pong"], true);
        }
    }

    #[test]
    fn a_server_that_closes_after_the_status_still_gives_it() {
        let bytes = server_bytes(PAYLOAD);
        let status_only = &bytes[..bytes.len() - 10];
        let (result, _) = replay(session(), &[status_only], Instant::now());
        let status = result.unwrap();
        assert_eq!(status.raw["pong"], false);
    }

    #[test]
    fn broken_servers_fail_with_a_reason() {
        let (result, _) = replay(session(), &[&server_bytes(PAYLOAD + 1)], Instant::now());
        assert!(result.unwrap_err().to_string().contains("echo"));

        let (result, _) = replay(session(), &[b"\xff\x00\x03"], Instant::now());
        assert!(result.unwrap_err().to_string().contains("legacy kick"));

        // A length of 2^28 is refused from the five bytes of its VarInt.
        let (result, _) = replay(session(), &[b"\x80\x80\x80\x80\x01"], Instant::now());
        let error = result.unwrap_err().to_string();
        assert!(error.contains("exceeds the cap"), "{error}");

        let bytes = server_bytes(PAYLOAD);
        let (result, _) = replay(session(), &[&bytes[..40]], Instant::now());
        let error = result.unwrap_err().to_string();
        assert!(error.contains("short of a whole frame"), "{error}");

        let (result, _) = replay(session(), &[], Instant::now());
        assert!(result.unwrap_err().to_string().contains("without a status"));

        let not_json = StatusResponseFrame {
            packet: StatusClientbound::Response { json: "{not json" },
        }
        .to_vec()
        .unwrap();
        let (result, _) = replay(session(), &[&not_json], Instant::now());
        assert!(result.unwrap_err().to_string().contains("status JSON"));
    }

    #[test]
    fn without_the_ping_the_status_ends_the_session() {
        let options = Options {
            minecraft_ping: false,
            ..Options::default()
        };
        let bytes = server_bytes(PAYLOAD);
        let status_only = &bytes[..bytes.len() - 10];
        for pieces in splits(status_only, 0) {
            let session = JavaSession::new(target(), "mc.example.org", &options);
            let (result, written) = replay(session, &pieces, Instant::now());
            let status = result.unwrap_or_else(|e| panic!("{e} for {} pieces", pieces.len()));
            assert_eq!(status.name, "A Minecraft Server");
            assert_eq!(status.raw["pong"], false);
            // The handshake and the status request, and no ping.
            assert_eq!(
                hex::encode(written),
                "1800ffffffff0f0e6d632e6578616d706c652e6f726763dd010100"
            );
        }
    }

    #[test]
    fn an_unanswered_ping_ends_at_the_timeout_with_the_status() {
        let bytes = server_bytes(PAYLOAD);
        let t0 = Instant::now();
        let mut session = session();
        assert!(session.poll_transmit(t0).is_some());
        session.handle_bytes(&bytes[..bytes.len() - 10], t0);
        assert!(session.poll_transmit(t0).is_some(), "the ping");
        let wake = session.poll_timeout().unwrap();
        assert_eq!(wake, t0 + Options::default().timeout);
        session.handle_timeout(wake);
        let status = session.poll_result().unwrap().unwrap();
        assert_eq!(status.raw["pong"], false);
    }
}
