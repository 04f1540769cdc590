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
//! Everything but the challenge is encoded through the specs' types once per state snapshot;
//! a reply then copies those bytes into the datagrams and allocates nothing.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;

use query_specs::quake3::{write, Info, Player, Request, INFO_HEADER, MAX_DATAGRAM, STATUS_HEADER};
use query_wire::kv::{FromKeyValues, KvSink, ToKeyValues};
use query_wire::{Text, TextEncoding, Writer};

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{RuleValue, ServerState, SharedState};

/// Names are cut to this many bytes (Quake 3 allows 36).
pub const MAX_NAME: usize = 64;
/// Player lines stop once they take this many bytes: at most a dozen datagrams.
pub const MAX_PLAYERS_BYTES: usize = 12 * 1024;
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
            Sections::build(state, config, stale.map(|s| (s.bytes, s.line_ends)))
        });
        let Ok((_, sections)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let max = self.config.max_datagram.min(replies.max_datagram());
        let sent = match request {
            Request::Info(_) => replies.push_with(|buf| {
                let cap = max.min(buf.len());
                let mut w = Writer::new(&mut buf[..cap]);
                w.put_bytes(INFO_HEADER)?;
                sections.head(&mut w, challenge, &sections.info_pairs)?;
                Ok::<usize, query_wire::Error>(w.position())
            }),
            Request::Status(_) => sections.status(challenge, max, replies),
        };
        match sent {
            Ok(()) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

/// The encoded pairs and player lines of one state snapshot.
#[derive(Debug)]
struct Sections {
    bytes: Vec<u8>,
    /// The pairs of `statusResponse`, without header or newline.
    status_pairs: Range<usize>,
    /// The pairs of `infoResponse`.
    info_pairs: Range<usize>,
    /// The player lines, newlines included; `line_ends` holds where each ends.
    players: Range<usize>,
    line_ends: Vec<usize>,
}

impl Sections {
    fn build(
        state: &ServerState,
        config: &Quake3Config,
        reuse: Option<(Vec<u8>, Vec<usize>)>,
    ) -> Result<Self, query_wire::Error> {
        let (mut bytes, mut line_ends) = reuse.unwrap_or_default();
        bytes.clear();
        line_ends.clear();
        let encoding = config.encoding;
        let text = |s| pair_text(s, encoding);
        let non_empty = |s| (!str::is_empty(s)).then(|| pair_text(s, encoding));

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

        let start = bytes.len();
        let mut rules = Vec::with_capacity(state.rules.len());
        let mut len = server.encoded_len_with(encoding)?;
        for (key, value) in &state.rules {
            let key = text(key);
            if key.is_empty() || <Info<'_> as FromKeyValues<'_>>::declares_key(key.as_bytes()) {
                continue;
            }
            let value = match value {
                RuleValue::Text(t) => text(t),
                other => Cow::Owned(pair_text(&other.to_string(), encoding).into_owned()),
            };
            // Counted as sent: in the wire encoding, not in UTF-8.
            len += 2 + encoding.encoded_len(&key) + encoding.encoded_len(&value);
            if len > MAX_INFO_BYTES {
                break;
            }
            rules.push((key, value));
        }
        Info {
            rules,
            ..server.clone()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let status_pairs = start..bytes.len();

        let start = bytes.len();
        Info {
            clients: Some(state.num_players()),
            ..server
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let info_pairs = start..bytes.len();

        let start = bytes.len();
        for p in &state.players {
            let name = name_bytes(&p.name, encoding);
            let player = Player {
                score: p.score,
                ping: i64::from(p.ping),
                name: Text::from_bytes(&name),
                extra: Text::from_bytes(b""),
            };
            let line_len = write::player_len(&player);
            if bytes.len() - start + line_len > MAX_PLAYERS_BYTES {
                break;
            }
            let at = bytes.len();
            bytes.resize(at + line_len, 0);
            let mut w = Writer::new(&mut bytes[at..]);
            write::player(&mut w, &player)?;
            line_ends.push(bytes.len());
        }
        let players = start..bytes.len();
        Ok(Sections {
            bytes,
            status_pairs,
            info_pairs,
            players,
            line_ends,
        })
    }

    /// Writes the challenge pair, the cached `pairs` and the newline.
    fn head(
        &self,
        w: &mut Writer<'_>,
        challenge: Option<&[u8]>,
        pairs: &Range<usize>,
    ) -> Result<(), query_wire::Error> {
        if let Some(challenge) = challenge {
            w.put_pair(b"challenge", None, challenge)?;
        }
        w.put_bytes(&self.bytes[pairs.clone()])?;
        w.put_u8(b'\n')
    }

    /// Pushes the `statusResponse` datagrams: the first with the pairs and the player lines
    /// that fit, then continuations of whole lines.
    fn status(
        &self,
        challenge: Option<&[u8]>,
        max: usize,
        replies: &mut ReplySink,
    ) -> Result<(), query_wire::Error> {
        let mut line = 0;
        let mut first = true;
        while first || line < self.line_ends.len() {
            replies.push_with(|buf| {
                let cap = max.min(buf.len());
                let mut w = Writer::new(&mut buf[..cap]);
                w.put_bytes(STATUS_HEADER)?;
                if first {
                    self.head(&mut w, challenge, &self.status_pairs)?;
                }
                let from = match line {
                    0 => self.players.start,
                    n => self.line_ends[n - 1],
                };
                let mut to = from;
                let room = w.position();
                while line < self.line_ends.len() && room + self.line_ends[line] - from <= max {
                    to = self.line_ends[line];
                    line += 1;
                }
                if to == from && !first && line < self.line_ends.len() {
                    // A line longer than a whole datagram: the cap is too small to go on.
                    return Err(query_wire::Error::new(
                        query_wire::ErrorKind::TooLong {
                            len: self.line_ends[line] - from,
                            max: max - room,
                        },
                        from,
                    ));
                }
                w.put_bytes(&self.bytes[from..to])?;
                Ok(w.position())
            })?;
            first = false;
        }
        Ok(())
    }
}

/// `text` as it can go into a pair in `encoding`: the backslash and the newline, and
/// characters the encoding cannot represent, become `?`; cut to 255 bytes.
fn pair_text(text: &str, encoding: TextEncoding) -> Cow<'_, str> {
    fit::replace_unsendable(fit::cut(text, encoding, MAX_TEXT), encoding, &['\\', '\n'])
}

/// A player's name in `encoding`, cut to [`MAX_NAME`] bytes, without `"` or newlines.
fn name_bytes(name: &str, encoding: TextEncoding) -> Vec<u8> {
    let name = fit::replace_unsendable(fit::cut(name, encoding, MAX_NAME), encoding, &['"', '\n']);
    encoding.encode_lossy(&name).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_loses_what_the_format_cannot_carry() {
        assert_eq!(pair_text("a\\b\nc", DEFAULT_ENCODING), "a?b?c");
        assert_eq!(name_bytes("\"Ж\"", DEFAULT_ENCODING), b"???");
        assert_eq!(name_bytes("é", DEFAULT_ENCODING), b"\xe9");
        assert_eq!(
            name_bytes(&"x".repeat(100), DEFAULT_ENCODING).len(),
            MAX_NAME
        );
    }
}
