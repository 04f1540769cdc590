//! The Minecraft Java responder: one connection's status ping, legacy ping included, answered
//! from the server state, as a sans-I/O [`StreamResponder`].
//!
//! - 1.7 and later: the handshake (next state "status"; anything else closes the connection),
//!   then one status request, answered with the JSON built from the state, then a ping,
//!   answered with its pong, after which the connection closes, as vanilla servers do.
//! - Legacy: a first byte `FE`. `FE 01 FA` and a whole `MC|PingHost` message (1.6) or `FE 01`
//!   followed by nothing for [`LEGACY_WAIT`] (1.4-1.5), and `FE 01 FA` whose message stops
//!   short for that long (mcstatus sends the prefix alone) get the `§1` form; `FE` alone for that
//!   long (Beta 1.8) gets the `motd§online§max` form. The connection closes after the reply.
//! - Anything else (a frame that does not decode, a request out of order, a frame over
//!   [`MAX_REQUEST_FRAME`]) closes the connection without a reply.
//!
//! JSON: `version` {state version, or `gsq`; `protocol_version`}, `players` {max, online,
//! `sample` of the first [`MAX_SAMPLE`] players with their UUIDs, the nil UUID where the
//! state has none}, `description` {text: the name}, `enforcesSecureChat: false`. It is built
//! once per state snapshot.

use std::time::{Duration, Instant};

use query_specs::minecraft_java::{
    HandshakeFrame, Handshaking, RawFrame, StatusClientbound, StatusRequestFrame,
    StatusResponseFrame, StatusServerbound, NEXT_STATE_STATUS,
};
use query_specs::minecraft_legacy::{Kick, LegacyStatus, PingHost, PING_1_6_PREFIX};
use query_wire::{Decode, Encode, Error};
use serde_json::json;

use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};
use crate::stream::{declared_frame_len, FrameBuffer, FrameLen, StreamResponder};

/// The largest request frame read: a handshake with the longest host name is under 800 bytes.
pub const MAX_REQUEST_FRAME: usize = 1024;
/// How long a legacy ping's first bytes wait for the rest before they are answered as sent.
pub const LEGACY_WAIT: Duration = Duration::from_millis(150);
/// The most players in the status sample (vanilla sends 12).
pub const MAX_SAMPLE: usize = 12;
/// The longest legacy request read (a 1.6 `MC|PingHost` with a 255-character host).
const MAX_LEGACY_REQUEST: usize = 3 + 2 + 22 + 2 + 1 + 2 + 510 + 4;

type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

fn frame_len(buf: &[u8]) -> Result<FrameLen, Error> {
    declared_frame_len::<RawFrame<'_>>(buf)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Handshake,
    Status,
    Ping,
    Legacy { since: Instant },
    Closed,
}

/// One connection of a Minecraft Java server; see the [module](self) docs.
#[derive(Debug)]
pub struct JavaResponder {
    state: SharedState,
    /// The status JSON and the legacy status text of the current snapshot.
    documents: SnapshotCache<(String, String)>,
    step: Step,
    frames: FrameBuffer<Framing>,
    legacy: Vec<u8>,
    outbox: Vec<u8>,
    close_after_write: bool,
}

impl JavaResponder {
    /// A connection answered from `state`.
    pub fn new(state: SharedState) -> Self {
        JavaResponder {
            state,
            documents: SnapshotCache::new(),
            step: Step::Handshake,
            frames: FrameBuffer::new(frame_len as Framing, MAX_REQUEST_FRAME),
            legacy: Vec::new(),
            outbox: Vec::new(),
            close_after_write: false,
        }
    }

    /// The status JSON and the legacy status text of the current state.
    fn documents(&mut self) -> (&str, &str) {
        let (_, (json, legacy)) = self
            .documents
            .get_infallible(&self.state, (), |state, _| documents(state));
        (json, legacy)
    }

    fn close(&mut self) {
        self.step = Step::Closed;
        self.outbox.clear();
    }

    fn reply(&mut self, bytes: Result<Vec<u8>, Error>, then_close: bool) {
        match bytes {
            Ok(bytes) => {
                self.outbox.extend_from_slice(&bytes);
                self.close_after_write = then_close;
            }
            Err(_) => self.close(),
        }
    }

    fn on_frame(&mut self, frame: &[u8]) {
        match self.step {
            Step::Handshake => match HandshakeFrame::from_bytes(frame) {
                Ok(HandshakeFrame {
                    packet: Handshaking::Handshake(h),
                }) if h.next_state == NEXT_STATE_STATUS => self.step = Step::Status,
                _ => self.close(),
            },
            Step::Status => match StatusRequestFrame::from_bytes(frame) {
                Ok(StatusRequestFrame {
                    packet: StatusServerbound::Request,
                }) => {
                    let json = self.documents().0.to_owned();
                    let response = StatusResponseFrame {
                        packet: StatusClientbound::Response { json: &json },
                    };
                    self.reply(response.to_vec(), false);
                    self.step = Step::Ping;
                }
                _ => self.close(),
            },
            Step::Ping => match StatusRequestFrame::from_bytes(frame) {
                Ok(StatusRequestFrame {
                    packet: StatusServerbound::Ping { payload },
                }) => {
                    let pong = StatusResponseFrame {
                        packet: StatusClientbound::Pong { payload },
                    };
                    self.reply(pong.to_vec(), true);
                }
                _ => self.close(),
            },
            Step::Legacy { .. } | Step::Closed => {}
        }
    }

    /// Answers the legacy ping buffered: `modern` for 1.4 and later.
    fn legacy_reply(&mut self, modern: bool) {
        let text = self.documents().1.to_owned();
        let text = if modern {
            text
        } else {
            // The stored text is the modern form; rebuild the old one from it.
            match LegacyStatus::parse(&text) {
                Ok(status) => status.to_text(false),
                Err(_) => return self.close(),
            }
        };
        self.reply(Kick::new(&text).to_vec(), true);
        self.step = Step::Closed;
    }

    fn on_legacy_bytes(&mut self) {
        if self.legacy.len() > MAX_LEGACY_REQUEST {
            return self.close();
        }
        if self.legacy.starts_with(PING_1_6_PREFIX) {
            match PingHost::from_bytes(&self.legacy) {
                Ok(_) => self.legacy_reply(true),
                Err(e) if is_cut(&e, self.legacy.len()) => {}
                Err(_) => self.close(),
            }
        } else if !matches!(self.legacy.as_slice(), [0xfe] | [0xfe, 0x01]) {
            // Neither Beta's `FE` nor 1.4's `FE 01` (still waiting to be answered), and no 1.6
            // request: no legacy ping.
            self.close();
        }
    }
}

/// Whether `error` only says the input ended early.
fn is_cut(error: &Error, len: usize) -> bool {
    matches!(error.kind(), query_wire::ErrorKind::UnexpectedEnd { have, .. } if error.offset() + have == len)
}

/// The status JSON and the modern legacy text for `state`.
fn documents(state: &ServerState) -> (String, String) {
    let version = if state.version.is_empty() {
        "gsq"
    } else {
        state.version.as_str()
    };
    let sample: Vec<_> = state
        .players
        .iter()
        .take(MAX_SAMPLE)
        .map(|p| {
            json!({
                "name": p.name,
                "id": p.uuid.unwrap_or_default().hyphenated().to_string(),
            })
        })
        .collect();
    let document = json!({
        "version": { "name": version, "protocol": state.protocol_version },
        "players": { "max": state.max_players, "online": state.num_players(), "sample": sample },
        "description": { "text": state.name },
        "enforcesSecureChat": false,
    });
    let legacy = LegacyStatus {
        protocol: Some(i32::try_from(state.protocol_version).unwrap_or(i32::MAX)),
        version: Some(version.to_owned()),
        motd: state.name.replace('\0', " "),
        online: state.num_players(),
        max: state.max_players,
    };
    (document.to_string(), legacy.to_text(true))
}

impl StreamResponder for JavaResponder {
    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.step == Step::Closed || self.close_after_write {
            return;
        }
        if self.step == Step::Handshake
            && self.frames.buffered() == 0
            && bytes.first() == Some(&0xfe)
        {
            self.step = Step::Legacy { since: now };
        }
        if let Step::Legacy { .. } = self.step {
            self.legacy.extend_from_slice(bytes);
            return self.on_legacy_bytes();
        }
        self.frames.push(bytes);
        while !matches!(self.step, Step::Closed) && !self.close_after_write {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => return,
                Err(_) => return self.close(),
            };
            self.on_frame(&frame);
        }
    }

    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.outbox.is_empty() {
            return None;
        }
        if self.close_after_write {
            self.step = Step::Closed;
        }
        Some(std::mem::take(&mut self.outbox))
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match self.step {
            Step::Legacy { since } => Some(since + LEGACY_WAIT),
            _ => None,
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if let Step::Legacy { since } = self.step {
            if now >= since + LEGACY_WAIT {
                match self.legacy.as_slice() {
                    [0xfe] => self.legacy_reply(false),
                    [0xfe, 0x01] => self.legacy_reply(true),
                    // `FE 01 FA` with its `MC|PingHost` message cut short, or without one, as
                    // mcstatus sends it: vanilla servers answer it, so this does too.
                    cut if cut.starts_with(PING_1_6_PREFIX) => self.legacy_reply(true),
                    _ => self.close(),
                }
            }
        }
    }

    fn is_closed(&self) -> bool {
        self.step == Step::Closed && self.outbox.is_empty()
    }
}
