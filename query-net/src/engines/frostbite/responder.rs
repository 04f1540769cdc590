//! The Frostbite responder: one connection's requests answered from the server state, as a
//! sans-I/O [`StreamResponder`], the way a Battlefield 4 server answers a client that has not
//! logged in.
//!
//! - `serverInfo`: BF4's words ([`BF4_TAIL`]): the state's
//!   name, counts, mode and map, one round of one, a score per team of the state (two teams at
//!   0 without teams), no password unless the state has one.
//! - `version`: `BF4` and the state's version (`0` without one).
//! - `listPlayers` with a subset (`all`): the columns `name guid teamId squadId kills deaths
//!   score rank ping type`.
//! - `login.plainText`, `login.hashed`, `admin.*` and the like: `LogInRequired`; any other
//!   word: `UnknownCommand`, as the games answer. The connection stays open for more requests
//!   (clients keep it), under the listener's caps.
//! - Garbage (a packet that does not decode, a response or a server packet sent to us, one
//!   over [`MAX_REQUEST`]) closes the connection without an answer.

use std::time::Instant;

use query_specs::frostbite::{Packet, Word, BF4_TAIL, FROM_SERVER, IS_RESPONSE, SEQUENCE_MASK};
use query_wire::{Decode, Encode, Error};

use super::frame_len;
use crate::state::{ServerState, SharedState};
use crate::stream::{FrameBuffer, FrameLen, StreamResponder};

/// The largest request read: commands are a few words.
pub const MAX_REQUEST: usize = 4096;

type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

/// One connection of a Frostbite server; see the [module](self) docs.
#[derive(Debug)]
pub struct FrostbiteResponder {
    state: SharedState,
    frames: FrameBuffer<Framing>,
    outbox: Vec<u8>,
    closed: bool,
}

impl FrostbiteResponder {
    /// A connection answered from `state`.
    pub fn new(state: SharedState) -> Self {
        FrostbiteResponder {
            state,
            frames: FrameBuffer::new(frame_len as Framing, MAX_REQUEST),
            outbox: Vec::new(),
            closed: false,
        }
    }

    fn close(&mut self) {
        self.closed = true;
    }

    fn on_frame(&mut self, frame: &[u8]) -> Result<(), ()> {
        let packet = Packet::from_bytes(frame).map_err(|_| ())?;
        if packet.sequence & (FROM_SERVER | IS_RESPONSE) != 0 || packet.words.is_empty() {
            return Err(());
        }
        let words: Vec<&[u8]> = packet.words.iter().map(|w| w.text.as_bytes()).collect();
        let answer = answer(&self.state.load(), &words);
        let reply = Packet {
            sequence: IS_RESPONSE | (packet.sequence & SEQUENCE_MASK),
            words: answer.iter().map(|w| Word::new(w.as_bytes())).collect(),
        };
        let bytes = reply.to_vec().map_err(|_| ())?;
        self.outbox.extend_from_slice(&bytes);
        Ok(())
    }
}

/// The words answering the request `words`.
pub fn answer(state: &ServerState, words: &[&[u8]]) -> Vec<String> {
    let ok = |mut rest: Vec<String>| {
        rest.insert(0, "OK".to_owned());
        rest
    };
    match words {
        [b"serverInfo"] => ok(server_info(state)),
        [b"version"] => ok(vec!["BF4".to_owned(), build(state)]),
        [b"listPlayers", _subset, ..] => ok(player_table(state)),
        [command, ..] if is_admin(command) => vec!["LogInRequired".to_owned()],
        _ => vec!["UnknownCommand".to_owned()],
    }
}

fn is_admin(command: &[u8]) -> bool {
    command.starts_with(b"admin.")
        || command.starts_with(b"login.")
        || command.starts_with(b"vars.")
        || command.starts_with(b"mapList.")
        || command.starts_with(b"banList.")
}

fn build(state: &ServerState) -> String {
    if state.version.is_empty() {
        "0".to_owned()
    } else {
        state.version.clone()
    }
}

/// A word without NULs, which end words on the wire.
fn word(text: &str) -> String {
    text.replace('\0', " ")
}

fn server_info(state: &ServerState) -> Vec<String> {
    let mut words = vec![
        word(&state.name),
        state.num_players().to_string(),
        state.max_players.to_string(),
        word(&state.game_type),
        word(&state.map),
        "0".to_owned(),
        "1".to_owned(),
    ];
    let scores: Vec<String> = if state.teams.is_empty() {
        vec!["0".to_owned(), "0".to_owned()]
    } else {
        state.teams.iter().map(|t| t.score.to_string()).collect()
    };
    words.push(scores.len().to_string());
    words.extend(scores);
    words.push("0".to_owned());
    for name in BF4_TAIL {
        words.push(match *name {
            "ranked" | "punkBuster" | "joinQueueEnabled" => "false".to_owned(),
            "hasGamePassword" => state.password.to_string(),
            "serverUpTime" | "roundTime" | "blazePlayerCount" => "0".to_owned(),
            "gameIpAndPort" => format!(
                "{}:{}",
                state.host.as_deref().unwrap_or("0.0.0.0"),
                state.port
            ),
            "blazeGameState" => "IN_GAME".to_owned(),
            _ => String::new(),
        });
    }
    words
}

/// The columns `listPlayers` answers with.
const COLUMNS: [&str; 10] = [
    "name", "guid", "teamId", "squadId", "kills", "deaths", "score", "rank", "ping", "type",
];

fn player_table(state: &ServerState) -> Vec<String> {
    let mut words = vec![COLUMNS.len().to_string()];
    words.extend(COLUMNS.iter().map(|c| (*c).to_owned()));
    words.push(state.players.len().to_string());
    for player in &state.players {
        let team = match &player.team {
            Some(team) => state
                .teams
                .iter()
                .position(|t| &t.name == team)
                .map_or_else(|| team.clone(), |i| (i + 1).to_string()),
            None => "0".to_owned(),
        };
        words.extend([
            word(&player.name),
            String::new(),
            team,
            "0".to_owned(),
            "0".to_owned(),
            "0".to_owned(),
            player.score.to_string(),
            "0".to_owned(),
            player.ping.to_string(),
            "0".to_owned(),
        ]);
    }
    words
}

impl StreamResponder for FrostbiteResponder {
    fn handle_bytes(&mut self, bytes: &[u8], _now: Instant) {
        if self.closed {
            return;
        }
        self.frames.push(bytes);
        while !self.closed {
            let frame = match self.frames.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => return,
                Err(_) => return self.close(),
            };
            if self.on_frame(&frame).is_err() {
                self.outbox.clear();
                self.close();
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.outbox.is_empty() {
            None
        } else {
            Some(std::mem::take(&mut self.outbox))
        }
    }

    fn is_closed(&self) -> bool {
        self.closed && self.outbox.is_empty()
    }
}
