//! The Quake 3 responder: `getstatus` and `getinfo` answered from the server state.
//!
//! - `getstatus` → `statusResponse`: the pair line (`sv_hostname`, `mapname`, `g_gametype`,
//!   `version`, `sv_maxclients`, `g_needpass`, `gamename` when configured, then the state's
//!   rules), then a `score ping "name"` line per player. A reply above the datagram cap
//!   (1400 bytes) is split between player lines the way the client joins it: every datagram
//!   carries the header, the first the pair line, the others player lines only; every datagram
//!   but the last is filled past [`SPLIT_HINT`](super::SPLIT_HINT), as long as the cap leaves
//!   room for it.
//! - `getinfo` → `infoResponse`: the same server keys and `clients`, no rules or players.
//! - A challenge in the request (`getstatus 123`) is echoed first as `\challenge\123`.
//! - Text goes out in [`Quake3Config::encoding`]; the bytes the format cannot carry (the
//!   backslash in pairs, the quote and newline in names, the newline anywhere) and characters
//!   the encoding lacks become `?`. Names are cut to [`MAX_NAME`] bytes and other text to 255,
//!   players stop at [`MAX_PLAYERS_BYTES`] of lines.
//!
//! The settings and player lines are built as the specs' declared values once per state
//! snapshot; each reply encodes them through those declarations (header, settings line with
//! the challenge first, player lines), sized by their `encoded_len`, and allocates nothing.

use std::net::SocketAddr;

use query_specs::quake3::{
    Challenge, Info, InfoHeader, Player, Request, StatusHeader, MAX_DATAGRAM,
};
use query_wire::kv::KvLine;
use query_wire::{Encode, TextEncoding, Writer};

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::quake_family;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// Names are cut to this many bytes (Quake 3 allows 36).
pub const MAX_NAME: usize = 64;
/// Player lines stop once they take this many bytes (about fifty 1400-byte datagrams, some
/// 2,000 players): a state holding more is answered with the players that fit. The service's
/// byte budgets bound what unproven sources receive.
pub const MAX_PLAYERS_BYTES: usize = 64 * 1024;
/// Rules stop once the pair line is this long, so that it fits one datagram.
const MAX_INFO_BYTES: usize = 1024;
/// Keys and values are cut to this many bytes.
const MAX_TEXT: usize = 255;

/// How a [`Quake3Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quake3Config {
    /// `gamename` (`baseq3`, `Call of Duty 2`...); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for Quake3Config {
    /// No game name, Windows-1252, 1400-byte datagrams.
    fn default() -> Self {
        Quake3Config {
            game_name: String::new(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Answers Quake 3 queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::quake3::{Quake3Config, Quake3Responder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "^1Arena".into(), max_players: 8, ..ServerState::default() });
/// let mut service = Service::new(Quake3Responder::new(state, Quake3Config::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\xff\xff\xff\xffgetstatus\n").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\xff\xff\xff\xffstatusResponse\n\\sv_hostname\\^1Arena\\sv_maxclients\\8\\g_needpass\\0\n".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct Quake3Responder {
    state: SharedState,
    config: Quake3Config,
    sections: SnapshotCache<Sections>,
}

impl Quake3Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: Quake3Config) -> Self {
        Quake3Responder {
            state,
            config,
            sections: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Quake3Config {
        &self.config
    }
}

impl Responder for Quake3Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::decode(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let challenge = request.challenge();
        if challenge.is_some_and(|c| c.contains(&b'\\')) {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let config = &self.config;
        let built = self.sections.get(&self.state, (), |state, stale| {
            Sections::build(state, config, stale.map(|s| (s.players, s.line_lens)))
        });
        let Ok((_, sections)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let max = self.config.max_datagram.min(replies.max_datagram());
        let sent = match request {
            Request::Info(_) => sections.info(challenge, max, replies),
            Request::Status(_) => sections.status(challenge, max, replies),
        };
        Verdict::pushed(sent)
    }
}

/// What one state snapshot is answered with: the declared settings and player lines, built
/// once; each reply encodes them with the request's challenge.
#[derive(Debug)]
struct Sections {
    encoding: TextEncoding,
    /// The pairs of `statusResponse`: the server keys and the rules.
    status_info: Info<'static>,
    /// The pairs of `infoResponse`: the server keys and `clients`.
    info_info: Info<'static>,
    /// The player lines, as many as [`MAX_PLAYERS_BYTES`] allows, and each one's encoded size.
    players: Vec<Player<'static>>,
    line_lens: Vec<usize>,
}

impl Sections {
    fn build(
        state: &ServerState,
        config: &Quake3Config,
        reuse: Option<(Vec<Player<'static>>, Vec<usize>)>,
    ) -> Result<Self, query_wire::Error> {
        let (mut players, mut line_lens) = reuse.unwrap_or_default();
        players.clear();
        line_lens.clear();
        let encoding = config.encoding;
        let text = |s: &str| quake_family::pair_text(s, encoding, MAX_TEXT);
        let non_empty = |s: &str| (!s.is_empty()).then(|| text(s));

        let server = Info {
            hostname: Some(text(&state.name)),
            map: non_empty(&state.map),
            game_type: non_empty(&state.game_type),
            game_name: non_empty(&config.game_name),
            version: non_empty(&state.version),
            max_clients: Some(state.max_players),
            need_pass: Some(state.password),
            ..Info::default()
        };
        let mut status_info = server.clone();
        quake_family::add_rules(
            &mut status_info,
            &state.rules,
            encoding,
            MAX_TEXT,
            MAX_INFO_BYTES,
        )?;
        let info_info = Info {
            clients: Some(state.num_players()),
            ..server
        };

        let mut total = 0;
        for p in &state.players {
            let player = quake_family::player_line(p, encoding, MAX_NAME);
            let line_len = player.encoded_len(());
            if total + line_len > MAX_PLAYERS_BYTES {
                break;
            }
            total += line_len;
            players.push(player);
            line_lens.push(line_len);
        }
        Ok(Sections {
            encoding,
            status_info,
            info_info,
            players,
            line_lens,
        })
    }

    /// The settings line of a reply: the echoed challenge, then `info`'s pairs.
    fn head<'s>(
        challenge: Option<&'s [u8]>,
        info: &'s Info<'static>,
    ) -> KvLine<(Challenge<'s>, &'s Info<'static>)> {
        KvLine((Challenge { challenge }, info))
    }

    /// Pushes the `infoResponse`.
    fn info(
        &self,
        challenge: Option<&[u8]>,
        max: usize,
        replies: &mut ReplySink,
    ) -> Result<(), query_wire::Error> {
        replies.push_with(|buf| {
            let cap = max.min(buf.len());
            let mut w = Writer::new(&mut buf[..cap]);
            InfoHeader {}.encode(&mut w, ())?;
            Self::head(challenge, &self.info_info).encode(&mut w, self.encoding)?;
            Ok(w.position())
        })
    }

    /// Pushes the `statusResponse` datagrams: the first with the pairs and the player lines
    /// that fit, then continuations of whole lines.
    fn status(
        &self,
        challenge: Option<&[u8]>,
        max: usize,
        replies: &mut ReplySink,
    ) -> Result<(), query_wire::Error> {
        let header = StatusHeader {};
        let head = Self::head(challenge, &self.status_info);
        let mut line = 0;
        let mut first = true;
        while first || line < self.players.len() {
            replies.push_with(|buf| {
                let cap = max.min(buf.len());
                let mut w = Writer::new(&mut buf[..cap]);
                header.encode(&mut w, ())?;
                if first {
                    head.encode(&mut w, self.encoding)?;
                }
                let room = max.saturating_sub(w.position());
                let from = line;
                let mut used = 0;
                while line < self.players.len() && used + self.line_lens[line] <= room {
                    used += self.line_lens[line];
                    line += 1;
                }
                if line == from && !first && line < self.players.len() {
                    // A line longer than a whole datagram: the cap is too small to go on.
                    return Err(query_wire::Error::new(
                        query_wire::ErrorKind::TooLong {
                            len: self.line_lens[line],
                            max: room,
                        },
                        w.position(),
                    ));
                }
                for player in &self.players[from..line] {
                    player.encode(&mut w, ())?;
                }
                Ok(w.position())
            })?;
            first = false;
        }
        Ok(())
    }
}
