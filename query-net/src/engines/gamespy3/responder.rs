//! The GameSpy 3/4 responder: challenges issued and checked, the full query answered from the
//! server state.
//!
//! - `FE FD 09` + session id → `09`, the session id, the challenge in signed decimal (as
//!   Minecraft writes it). Challenges are a keyed MAC of the source address and the time window
//!   (as A2S's): nothing is kept per client, a challenge serves every query of its window and
//!   the one after. Like real servers' they are any 32-bit number (but the 199,999 under
//!   100,000 in magnitude: qstat refuses a challenge reply shorter than 12 bytes, so the digits
//!   are never fewer than 6), so a forged query guesses one with a chance of about 1 in 2³².
//!   A forged query without a valid challenge gets at most the challenge back:
//!   [`MAX_CHALLENGE_REPLY`] bytes, 1.5 times the 11 bytes of a query without one.
//! - `FE FD 00` + session id + challenge + `FF FF FF 01` → the reply parts: section 0 the
//!   server's key/values (`hostname`, `gamename`, `gamever`, `version`, `mapname`, `map`,
//!   `gametype`, `numplayers`, `maxplayers`, `password`, `hostport`, then the state's rules),
//!   section 1 the players (`player_`, `score_`, `ping_`, `team_`), section 2 the teams
//!   (`team_t`, `score_t`), cut by the specs' [`split_reply`] at 1400 bytes the way real
//!   servers cut them (key/values whole, columns continued with the count of values sent).
//! - With [`GameSpy3Config::require_challenge`] off (Battlefield 2 style), a query without a
//!   challenge is answered too; a challenge request still gets one (`0` is never given).
//! - Text goes out in [`GameSpy3Config::encoding`], NULs as `?`, cut to 255 bytes; a column
//!   value cannot be empty (it would end the column), so an empty name or team is sent as `?`.
//!   At most [`MAX_ROWS`] players and teams, 24 KiB of player values and 8 KiB of
//!   key/values (rules past it are left out), so that a reply stays within the parts a
//!   client holds.
//!
//! Everything is encoded once per state snapshot with session id 0; a reply copies the parts
//! and writes the request's session id into them, allocating nothing.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime};

use query_specs::gamespy3::{
    split_reply, ChallengeReply, JoinedColumn, KeyValue, Part, ReplyContent, Request, Table,
    FLAGS_SPLIT, MAX_DATAGRAM, SECTION_PLAYERS, SECTION_TEAMS,
};
use query_wire::{Decode, Encode, Text, TextEncoding};

use super::DEFAULT_ENCODING;
use crate::challenge::KeyedChallenge;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// Players (and teams) past this many are left out: a continued column counts at most 255.
pub const MAX_ROWS: usize = 255;
/// Rules stop once the key/values take this many bytes (they are never cut across parts).
const MAX_DETAILS_BYTES: usize = 8 * 1024;
/// Players stop once their values take this many bytes: the parts stay under MAX_PARTS.
const MAX_TABLE_BYTES: usize = 24 * 1024;
/// Keys and values are cut to this many bytes.
const MAX_TEXT: usize = 255;
/// Challenges are at least this in magnitude: 6 characters of text or more.
const MIN_CHALLENGE: u32 = 100_000;
/// The longest challenge reply: `09`, the session id, `-2147483648` and its NUL.
pub const MAX_CHALLENGE_REPLY: usize = 1 + 4 + 11 + 1;

/// The challenge of a MAC's 32 bits: the MAC itself, or for the 199,999 values under
/// [`MIN_CHALLENGE`] in magnitude (`0`, "no challenge", among them) the same with bit 30
/// flipped, which is over 2³⁰ in magnitude.
fn gamespy_challenge(mac: i32) -> i32 {
    if mac.unsigned_abs() < MIN_CHALLENGE {
        mac ^ 0x4000_0000
    } else {
        mac
    }
}

/// How a [`GameSpy3Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSpy3Config {
    /// `gamename` (`battlefield2`, `MINECRAFT`...); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire.
    pub encoding: TextEncoding,
    /// The largest reply part (the service's own cap applies too).
    pub max_datagram: usize,
    /// Answer the query only with a valid challenge (GameSpy 4, Minecraft); off, a query
    /// without one is answered too (GameSpy 3, Battlefield 2).
    pub require_challenge: bool,
    /// How long a challenge stays valid: between this and twice this.
    pub challenge_window: Duration,
}

impl Default for GameSpy3Config {
    /// No game name, Windows-1252, 1400-byte parts, challenge required, 30-second windows.
    fn default() -> Self {
        GameSpy3Config {
            game_name: String::new(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
            require_challenge: true,
            challenge_window: Duration::from_secs(30),
        }
    }
}

/// Answers GameSpy 3/4 queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::gamespy3::{GameSpy3Config, GameSpy3Responder, MAX_CHALLENGE_REPLY};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
/// use query_specs::gamespy3::{ChallengeReply, QueryRequest, Request, FLAGS_SPLIT};
/// use query_wire::{Decode, Encode};
///
/// let state = SharedState::new(ServerState { name: "Fort".into(), max_players: 8, ..ServerState::default() });
/// let mut service = Service::new(GameSpy3Responder::new(state, GameSpy3Config::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// // A query without the challenge gets the challenge: any 32-bit number, 6 to 11 characters.
/// let query = b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff\x01";
/// let challenge = service.handle(from, query).next().unwrap().to_vec();
/// assert!(challenge.starts_with(b"\x09\x01\x02\x03\x04"));
/// assert!((12..=MAX_CHALLENGE_REPLY).contains(&challenge.len()));
/// let digits = ChallengeReply::from_bytes(&challenge).unwrap().challenge().unwrap();
/// let again = Request::Query(QueryRequest::new(0x0102_0304, digits, FLAGS_SPLIT)).to_vec().unwrap();
/// let parts: Vec<Vec<u8>> = service.handle(from, &again).map(<[u8]>::to_vec).collect();
/// assert_eq!(parts.len(), 1);
/// assert!(parts[0].starts_with(b"\x00\x01\x02\x03\x04splitnum\x00\x80\x00hostname\x00Fort\x00"));
/// ```
#[derive(Debug)]
pub struct GameSpy3Responder {
    state: SharedState,
    config: GameSpy3Config,
    challenges: KeyedChallenge,
    encoded: SnapshotCache<Encoded>,
}

impl GameSpy3Responder {
    /// Answers from `state` as `config` says, with a random challenge key.
    pub fn new(state: SharedState, config: GameSpy3Config) -> Self {
        GameSpy3Responder {
            challenges: KeyedChallenge::new(config.challenge_window).shaped(gamespy_challenge),
            state,
            config,
            encoded: SnapshotCache::new(),
        }
    }

    /// Derives challenges from `secret` instead of a random one.
    pub fn with_secret(mut self, secret: &[u8; 32]) -> Self {
        self.challenges = self.challenges.rekeyed(secret);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &GameSpy3Config {
        &self.config
    }

    /// The challenge `client` is given at `wall`.
    pub fn challenge(&self, client: SocketAddr, wall: SystemTime) -> i32 {
        self.challenges.issue(client, wall)
    }

    fn refresh(&mut self) -> Result<&Encoded, query_wire::Error> {
        let config = &self.config;
        let (_, encoded) = self.encoded.get(&self.state, (), |state, stale| {
            Encoded::build(state, config, stale.map(|e| (e.bytes, e.ends)))
        })?;
        Ok(encoded)
    }

    fn push_challenge(
        &self,
        from: SocketAddr,
        session_id: u32,
        wall: SystemTime,
        replies: &mut ReplySink,
    ) -> Result<usize, query_wire::Error> {
        let mut digits = [0u8; 11];
        let digits = decimal(self.challenge(from, wall), &mut digits);
        let reply = ChallengeReply { session_id, digits };
        replies.push_encoded(&reply, ())?;
        Ok(reply.encoded_len(()))
    }

    fn answer(&mut self, session_id: u32, replies: &mut ReplySink) -> Verdict {
        let max = replies.max_datagram();
        let Ok(encoded) = self.refresh() else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let mut start = 0;
        for &end in &encoded.ends {
            let part = &encoded.bytes[start..end];
            start = end;
            if part.len() > max {
                return Verdict::Dropped(DropReason::Unsupported);
            }
            let pushed = replies.push_with(|buf| {
                buf[..part.len()].copy_from_slice(part);
                // Every part echoes the query's session id, patched into the cached bytes.
                buf[Part::SESSION_ID_RANGE].copy_from_slice(&session_id.to_be_bytes());
                Ok::<usize, query_wire::Error>(part.len())
            });
            if pushed.is_err() {
                return Verdict::Dropped(DropReason::Unsupported);
            }
        }
        Verdict::Answered
    }
}

impl Responder for GameSpy3Responder {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let query = match request {
            Request::Challenge(c) => {
                return Verdict::pushed(self.push_challenge(from, c.session_id, now.wall, replies));
            }
            Request::Query(q) => q,
        };
        if query.payload() != FLAGS_SPLIT {
            // Minecraft's basic stat, Just Cause 2's own format: not served.
            return Verdict::Dropped(DropReason::Unsupported);
        }
        let proven = query
            .challenge()
            .is_some_and(|c| self.challenges.accepts(from, c, now.wall));
        if proven {
            // Only `from` was given this challenge: the source is not spoofed.
            replies.mark_proven();
            return self.answer(query.session_id, replies);
        }
        if !self.config.require_challenge {
            return self.answer(query.session_id, replies);
        }
        let pushed = self.push_challenge(from, query.session_id, now.wall, replies);
        debug_assert!(pushed
            .as_ref()
            .map_or(true, |&len| len <= MAX_CHALLENGE_REPLY));
        Verdict::pushed(pushed)
    }
}

/// `value` in signed decimal, written at the end of `buf`.
fn decimal(value: i32, buf: &mut [u8; 11]) -> &str {
    let mut n = value.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if value < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    // Only ASCII digits and a sign were written.
    std::str::from_utf8(&buf[at..]).unwrap_or("0")
}

/// The reply parts of one state snapshot, with session id 0.
#[derive(Debug)]
struct Encoded {
    bytes: Vec<u8>,
    /// Where each part ends in `bytes`.
    ends: Vec<usize>,
}

impl Encoded {
    fn build(
        state: &ServerState,
        config: &GameSpy3Config,
        reuse: Option<(Vec<u8>, Vec<usize>)>,
    ) -> Result<Self, query_wire::Error> {
        let (mut bytes, mut ends) = reuse.unwrap_or_default();
        bytes.clear();
        ends.clear();
        let content = content(state, config);
        let parts = match split_reply(&content, 0, config.max_datagram) {
            Ok(parts) => parts,
            // Tables that cannot be cut (a value longer than a part): the key/values alone.
            Err(_) => {
                let details = ReplyContent {
                    details: content.details.clone(),
                    tables: Vec::new(),
                };
                let parts = split_reply(&details, 0, config.max_datagram)?;
                parts.into_iter().map(owned_part).collect()
            }
        };
        for part in &parts {
            let at = bytes.len();
            bytes.resize(at + part.encoded_len(()), 0);
            let written = part.encode_into_with(&mut bytes[at..], ())?;
            bytes.truncate(at + written);
            ends.push(bytes.len());
        }
        Ok(Encoded { bytes, ends })
    }
}

fn owned_part(part: Part<'_>) -> Part<'static> {
    Part {
        session_id: part.session_id,
        splitnum: part.splitnum,
        last: part.last,
        number: part.number,
        section: part.section,
        details: part.details.map(|d| {
            d.into_iter()
                .map(|kv| KeyValue {
                    key: kv.key.into_owned(),
                    value: kv.value.into_owned(),
                })
                .collect()
        }),
        continued: part
            .continued
            .map(|cs| cs.into_iter().map(owned_column).collect()),
        sections: part
            .sections
            .into_iter()
            .map(|s| query_specs::gamespy3::Section {
                kind: s.kind,
                columns: s.columns.into_iter().map(owned_column).collect(),
            })
            .collect(),
    }
}

fn owned_column(c: query_specs::gamespy3::Column<'_>) -> query_specs::gamespy3::Column<'static> {
    query_specs::gamespy3::Column {
        name: c.name.into_owned(),
        offset: c.offset,
        values: c.values.into_iter().map(Text::into_owned).collect(),
    }
}

/// The key/values and tables the state says, as the wire carries them.
fn content(state: &ServerState, config: &GameSpy3Config) -> ReplyContent<'static> {
    let encoding = config.encoding;
    let text = |s: &str| -> Text<'static> {
        let cut = fit::cut(s, encoding, MAX_TEXT);
        let cut: Cow<'_, str> = if cut.contains('\0') {
            Cow::Owned(cut.replace('\0', "?"))
        } else {
            Cow::Borrowed(cut)
        };
        Text::from_bytes(&encoding.encode_lossy(&cut)).into_owned()
    };
    let value = |s: &str| -> Text<'static> {
        if s.is_empty() {
            text("?")
        } else {
            text(s)
        }
    };
    let mut details = Vec::new();
    let mut pair = |key: &str, v: &str| {
        details.push(KeyValue {
            key: Text::from_bytes(key.as_bytes()).into_owned(),
            value: text(v),
        });
    };
    pair("hostname", &state.name);
    if !config.game_name.is_empty() {
        pair("gamename", &config.game_name);
    }
    if !state.version.is_empty() {
        pair("gamever", &state.version);
        pair("version", &state.version);
    }
    if !state.map.is_empty() {
        pair("mapname", &state.map);
        pair("map", &state.map);
    }
    if !state.game_type.is_empty() {
        pair("gametype", &state.game_type);
    }
    pair("numplayers", &state.num_players().to_string());
    pair("maxplayers", &state.max_players.to_string());
    pair("password", if state.password { "1" } else { "0" });
    if state.port != 0 {
        pair("hostport", &state.port.to_string());
    }
    let declared: Vec<Vec<u8>> = details
        .iter()
        .map(|kv| kv.key.as_bytes().to_vec())
        .collect();
    let mut details_bytes: usize = details
        .iter()
        .map(|kv| kv.key.as_bytes().len() + kv.value.as_bytes().len() + 2)
        .sum();
    for (key, rule) in &state.rules {
        let key = text(key);
        if key.as_bytes().is_empty() || declared.iter().any(|d| d == key.as_bytes()) {
            continue;
        }
        let rule = text(&rule.as_text());
        details_bytes += key.as_bytes().len() + rule.as_bytes().len() + 2;
        if details_bytes > MAX_DETAILS_BYTES {
            break;
        }
        details.push(KeyValue { key, value: rule });
    }

    let mut table_bytes = 0;
    let rows = state
        .players
        .iter()
        .take(MAX_ROWS)
        .take_while(|p| {
            // The name, score, ping and team, each ended by a NUL.
            table_bytes += p.name.len() + p.team.as_deref().map_or(0, str::len) + 4 + 24;
            table_bytes <= MAX_TABLE_BYTES
        })
        .count();
    let players = &state.players[..rows];
    let mut tables = Vec::new();
    let column = |name: &str, values: Vec<Text<'static>>| JoinedColumn {
        name: Text::from_bytes(name.as_bytes()).into_owned(),
        values,
    };
    if !players.is_empty() {
        let mut columns = vec![
            column("player_", players.iter().map(|p| value(&p.name)).collect()),
            column(
                "score_",
                players.iter().map(|p| text(&p.score.to_string())).collect(),
            ),
            column(
                "ping_",
                players.iter().map(|p| text(&p.ping.to_string())).collect(),
            ),
        ];
        if players.iter().any(|p| p.team.is_some()) {
            columns.push(column(
                "team_",
                players
                    .iter()
                    .map(|p| value(p.team.as_deref().unwrap_or_default()))
                    .collect(),
            ));
        }
        tables.push(Table {
            kind: SECTION_PLAYERS,
            columns,
        });
    }
    let teams = &state.teams[..state.teams.len().min(MAX_ROWS)];
    if !teams.is_empty() {
        tables.push(Table {
            kind: SECTION_TEAMS,
            columns: vec![
                column("team_t", teams.iter().map(|t| value(&t.name)).collect()),
                column(
                    "score_t",
                    teams.iter().map(|t| text(&t.score.to_string())).collect(),
                ),
            ],
        });
    }
    ReplyContent { details, tables }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_any_32_bit_number_of_6_characters_or_more() {
        assert_eq!(gamespy_challenge(-2_000_000_000), -2_000_000_000);
        assert_eq!(gamespy_challenge(100_000), 100_000);
        assert_eq!(gamespy_challenge(-100_000), -100_000);
        for small in [0, 1, -1, 99_999, -99_999] {
            let shaped = gamespy_challenge(small);
            assert!(shaped.unsigned_abs() >= 1 << 30, "{small} → {shaped}");
        }
        let mut buf = [0; 11];
        assert_eq!(decimal(i32::MIN, &mut buf), "-2147483648");
        assert_eq!(decimal(i32::MAX, &mut buf), "2147483647");
        assert_eq!(decimal(-100_000, &mut buf), "-100000");
        assert_eq!(decimal(0, &mut buf), "0");
    }

    #[test]
    fn the_challenge_reply_reads_back_as_the_challenge_issued_and_fits_its_bound() {
        let responder = GameSpy3Responder::new(
            SharedState::new(ServerState::default()),
            GameSpy3Config::default(),
        )
        .with_secret(&[3; 32]);
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut negative = 0;
        for port in 1..400 {
            let from = SocketAddr::from(([192, 0, 2, 1], port));
            let issued = responder.challenge(from, wall);
            negative += usize::from(issued < 0);
            let mut buf = [0; 11];
            let reply = ChallengeReply {
                session_id: 7,
                digits: decimal(issued, &mut buf),
            };
            let bytes = reply.to_vec().unwrap();
            assert!(
                (12..=MAX_CHALLENGE_REPLY).contains(&bytes.len()),
                "{bytes:?}"
            );
            let read = ChallengeReply::from_bytes(&bytes).unwrap();
            assert_eq!(read.challenge().unwrap(), Some(issued));
        }
        // The sign bit is the MAC's: about half are negative.
        assert!((100..300).contains(&negative), "{negative}");
    }
}
