//! The Frostbite status query as a [`StreamSession`].
//!
//! Writes `serverInfo`, `version` and `listPlayers all` at once (sequence numbers 1, 2 and 3,
//! client-originated requests), then reads packets, however the stream splits them, through
//! the declared [`Header`](query_specs::frostbite::Header) (the size alone says where a packet
//! ends; one over [`MAX_PACKET`] is refused before its bytes are buffered) and the declared
//! [`Packet`]. Once the three answers are in, [`status`](super::status) maps them.
//!
//! - Skipped: packets the server originates (bit 31 set: events, sent to clients that enabled
//!   them), counted in `raw.events_skipped`.
//! - Strict: an answer whose sequence number matches no request sent, a second answer to one
//!   request, a packet that is no response, or a first word other than `OK` to `serverInfo`
//!   or `version` (that word, e.g. `LogInRequired`, is the error).
//! - Lenient: a `listPlayers` refused by the server (some hosts lock it) gives the status
//!   without players, `complete: false`, the server's word in `raw.players_error`.

use std::net::SocketAddr;
use std::time::Instant;

use query_specs::frostbite::{
    Packet, Word, FROM_SERVER, IS_RESPONSE, LIST_PLAYERS, SEQUENCE_MASK, SERVER_INFO, VERSION,
};
use query_wire::{Decode, Encode, Error};

use super::status::{from_answers, Answers};
use super::{frame_len, MAX_PACKET};
use crate::error::QueryError;
use crate::outcome::Outcome;
use crate::status::ServerStatus;
use crate::stream::{FrameBuffer, FrameLen, StreamSession};

type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

/// The requests, in the order they are written; the sequence number of request `i` is `i + 1`.
const REQUESTS: [(&str, &[&[u8]]); 3] = [
    ("serverInfo", SERVER_INFO),
    ("version", VERSION),
    ("listPlayers", LIST_PLAYERS),
];
const SERVER_INFO_AT: usize = 0;
const VERSION_AT: usize = 1;
const LIST_PLAYERS_AT: usize = 2;

/// The bytes of a client request: `words` under `sequence`.
pub fn request(sequence: u32, words: &[&[u8]]) -> Result<Vec<u8>, Error> {
    Packet {
        sequence: sequence & SEQUENCE_MASK,
        words: words.iter().map(|w| Word::new(w)).collect(),
    }
    .to_vec()
}

/// A Frostbite status query; see the [module](self) docs.
#[derive(Debug)]
pub struct FrostbiteSession {
    target: SocketAddr,
    outbox: Vec<u8>,
    send_due: bool,
    /// Answers are told apart by their shape, not their sequence numbers (a recorded stream).
    by_shape: bool,
    started: Option<Instant>,
    first_answer: Option<Instant>,
    frames: FrameBuffer<Framing>,
    answers: [Option<Vec<String>>; 3],
    events_skipped: u64,
    outcome: Outcome<ServerStatus>,
}

impl FrostbiteSession {
    /// A status query of `target`.
    pub fn new(target: SocketAddr) -> Self {
        let mut session = Self::empty(target, false);
        let mut outbox = Vec::new();
        for (i, (_, words)) in REQUESTS.iter().enumerate() {
            match request(i as u32 + 1, words) {
                Ok(bytes) => outbox.extend_from_slice(&bytes),
                Err(error) => session.finish(Err(error.into())),
            }
        }
        session.outbox = outbox;
        session
    }

    /// A session that reads a recorded stream: it sends nothing, and takes each answer for
    /// the request its shape says (`version`: three words; `listPlayers`: a table whose
    /// counts add up; `serverInfo`: anything else).
    pub fn replaying(target: SocketAddr) -> Self {
        let mut session = Self::empty(target, true);
        session.send_due = false;
        session
    }

    fn empty(target: SocketAddr, by_shape: bool) -> Self {
        FrostbiteSession {
            target,
            outbox: Vec::new(),
            send_due: true,
            by_shape,
            started: None,
            first_answer: None,
            frames: FrameBuffer::new(frame_len as Framing, MAX_PACKET),
            answers: [None, None, None],
            events_skipped: 0,
            outcome: Outcome::new(),
        }
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        self.send_due = false;
        self.outcome.finish(result);
    }

    fn read_frames(&mut self, now: Instant) {
        while !self.outcome.is_finished() {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => break,
                Err(error) => return self.finish(Err(error.into())),
            };
            if let Err(error) = self.on_packet(&frame, now) {
                return self.finish(Err(error));
            }
        }
        if self.answers.iter().all(Option::is_some) {
            self.complete();
        }
    }

    fn on_packet(&mut self, frame: &[u8], now: Instant) -> Result<(), QueryError> {
        let packet = Packet::from_bytes(frame)?;
        if packet.sequence & FROM_SERVER != 0 {
            self.events_skipped += 1;
            return Ok(());
        }
        if packet.sequence & IS_RESPONSE == 0 {
            return Err(QueryError::protocol(
                "the server sent a request as if it were the client",
            ));
        }
        let words: Vec<String> = packet
            .words
            .iter()
            .map(|w| String::from_utf8_lossy(w.text.as_bytes()).into_owned())
            .collect();
        let at = if self.by_shape {
            shape_of(&words)
        } else {
            let sequence = (packet.sequence & SEQUENCE_MASK) as usize;
            match sequence.checked_sub(1).filter(|i| *i < REQUESTS.len()) {
                Some(i) => i,
                None => {
                    return Err(QueryError::protocol(format!(
                        "an answer with sequence number {sequence}, which no request had"
                    )))
                }
            }
        };
        if self.answers[at].is_some() {
            return Err(QueryError::protocol(format!(
                "a second answer to {}",
                REQUESTS[at].0
            )));
        }
        self.first_answer.get_or_insert(now);
        self.answers[at] = Some(words);
        Ok(())
    }

    fn complete(&mut self) {
        if self.outcome.is_finished() {
            return;
        }
        let [info, version, players] = std::mem::take(&mut self.answers);
        let (Some(info), Some(version), Some(players)) = (info, version, players) else {
            return;
        };
        let rtt = match (self.started, self.first_answer) {
            (Some(start), Some(end)) => end.saturating_duration_since(start),
            _ => std::time::Duration::ZERO,
        };
        let answers = Answers {
            server_info: info,
            version,
            players,
        };
        let result = from_answers(self.target, &answers, rtt, self.events_skipped);
        self.finish(result);
    }
}

/// Which request an answer of a recorded stream is for, by its shape.
fn shape_of(words: &[String]) -> usize {
    if words.len() == 3 {
        VERSION_AT
    } else if super::status::is_player_table(words) {
        LIST_PLAYERS_AT
    } else {
        SERVER_INFO_AT
    }
}

impl StreamSession for FrostbiteSession {
    type Output = ServerStatus;

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if !self.send_due || self.outcome.is_finished() {
            return None;
        }
        self.send_due = false;
        self.started = Some(now);
        Some(&self.outbox)
    }

    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        if self.outcome.is_finished() {
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
        if let Err(error) = self.frames.finish() {
            return self.finish(Err(error.into()));
        }
        let missing: Vec<&str> = REQUESTS
            .iter()
            .zip(&self.answers)
            .filter(|(_, answer)| answer.is_none())
            .map(|((name, _), _)| *name)
            .collect();
        self.finish(Err(QueryError::protocol(format!(
            "the server closed the connection without answering {}",
            missing.join(", ")
        ))));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.outcome.poll_result()
    }
}
