//! GameSpy query protocol v1: backslash-delimited key/value text over UDP.
//!
//! A client sends a [`Request`] such as `\status\`; the server answers with `\key\value` pairs
//! ([`Reply`]) spread over one or more datagrams. Each datagram ends with a [`Trailer`]:
//! `\queryid\X.Y`, the query id `X` and the part number `Y` counting from 1, and, on the last
//! part, `\final\`. Players and teams are indexed keys: `player_0`, `frags_0`, `teamname_1`.
//! [`Reassembly`] puts a reply back together from its datagrams; [`ReplyDatagrams`] splits one
//! into datagrams for a responder.
//!
//! Where this follows the notes (real servers and clients) rather than the document:
//! - The marker is `\queryid\` (the document also spells it `\querid\`), and parts count from 1.
//! - The part count is known only from the part that carries `\final\`, which comes after
//!   `\queryid\` on UT99 and before it on BF1942 (which also drops the trailing backslash):
//!   [`Trailer`] is read wherever its keys are.
//! - Parts arrive out of order or twice, and a part or the `\final\` may never arrive. Known
//!   clients then time out with nothing; [`Reassembly::reply`] returns what arrived, marked
//!   incomplete, with the missing part numbers.
//! - Datagrams may be larger than 1024 bytes (a real BF1942 part is 1361): nothing here assumes
//!   a size on receive; replies are split at [`MAX_DATAGRAM`] (1400) bytes on send.
//! - Requests also include `\basic\`, `\teams\`, `\echo\<text>` and `\status\xserverquery`.
//! - Player keys may be `playername_N` instead of `player_N` and `score_N` instead of
//!   `frags_N`; values may carry leading spaces (`\ping_2\ 152`), which numbers ignore.
//! - Text is Latin-1 / Windows-1252 ([`ENCODING`]): real UT99 names hold bytes `a0` and `b1`,
//!   which strict UTF-8 rejects.
//! - BF1942 keeps stale player entries after players leave: [`Reply::current_players`] keeps
//!   only the first `numplayers` (the stale ones stay available, never dropped). It also
//!   numbers teams from 1 where other games number from 0: [`Reply::team_of`] knows.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use query_wire::kv::{self, FromKeyValues, Pair, PairSpan, ToKeyValues};
use query_wire::parts::{Filed, NumberedParts};
use query_wire::{Encode, Error, ErrorKind, KeyValues, Result, TextEncoding, Wire};
use serde::Serialize;

/// The text encoding GameSpy v1 servers use.
pub const ENCODING: TextEncoding = TextEncoding::Windows1252;

/// The largest datagram [`ReplyDatagrams`] writes.
pub const MAX_DATAGRAM: usize = 1400;

/// The most parts a reply may have; part numbers above it are rejected, which bounds the
/// memory a hostile server can make [`Reassembly`] hold.
pub const MAX_PARTS: u32 = 64;

/// The key of the part marker.
pub const QUERYID_KEY: &[u8] = b"queryid";
/// The key that marks the last part.
pub const FINAL_KEY: &[u8] = b"final";

/// One query, one `\key\value` pair; a datagram may hold several (`\info\\rules\`), see
/// [`Request::decode_all`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub enum Request<'a> {
    /// `\status\xserverquery`: status with the XServerQuery extensions, where supported.
    #[kv(key = "status", value = "xserverquery")]
    StatusXServerQuery,
    /// `\status\`: basic, info, rules and players in one reply.
    Status,
    /// `\basic\`: game name, version, location.
    Basic,
    /// `\info\`: host name, map, player counts.
    Info,
    /// `\rules\`: game settings.
    Rules,
    /// `\players\`: the indexed player keys.
    Players,
    /// `\teams\`: the indexed team keys.
    Teams,
    /// `\echo\<text>`: the server echoes the text back under `echo`.
    Echo(Cow<'a, str>),
    /// Any other query (`\ison\`, `\level_property\`...), kept as it came.
    #[kv(other)]
    Other(Cow<'a, str>, Cow<'a, str>),
}

impl<'a> Request<'a> {
    /// Every query in a request datagram, in order.
    pub fn decode_all(bytes: &'a [u8]) -> Result<Vec<Request<'a>>> {
        kv::decode_each(bytes, ENCODING)
    }

    /// The request datagram for `queries`, in order.
    pub fn encode_all(queries: &[Request<'_>]) -> Result<Vec<u8>> {
        kv::encode_each(queries, ENCODING)
    }
}

/// A reply's content: server information, rules, players and teams. The same type serves
/// `\status\` and its parts (`\info\` leaves players empty, `\players\` leaves the server
/// fields `None`).
///
/// Every key that is not a field here lands in [`rules`](Reply::rules), in order, duplicates
/// included (UT99 sends `gamever` twice).
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Reply<'a> {
    /// `gamename`, e.g. `ut`, `bfield1942`.
    #[kv(key = "gamename")]
    pub game_name: Option<Cow<'a, str>>,
    /// `gamever`.
    #[kv(key = "gamever")]
    pub game_version: Option<Cow<'a, str>>,
    /// `hostname`, the server's name.
    pub hostname: Option<Cow<'a, str>>,
    /// `hostport`, the game port.
    #[kv(key = "hostport")]
    pub host_port: Option<u16>,
    /// `mapname`.
    #[kv(key = "mapname")]
    pub map_name: Option<Cow<'a, str>>,
    /// `gametype`.
    #[kv(key = "gametype")]
    pub game_type: Option<Cow<'a, str>>,
    /// `gamemode`, e.g. `openplaying`.
    #[kv(key = "gamemode")]
    pub game_mode: Option<Cow<'a, str>>,
    /// `numplayers`.
    #[kv(key = "numplayers")]
    pub num_players: Option<u32>,
    /// `maxplayers`.
    #[kv(key = "maxplayers")]
    pub max_players: Option<u32>,
    /// `password`: `0`/`1` or `False`/`True`.
    pub password: Option<bool>,
    /// `echo`, the text of an `\echo\` request.
    pub echo: Option<Cow<'a, str>>,
    /// Every other key, in arrival order.
    #[kv(rest)]
    pub rules: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// `player_N`, `frags_N`, `ping_N`, ... in index order.
    #[kv(indexed)]
    pub players: Vec<Player<'a>>,
    /// `teamname_N` and other `team*_N` keys, in index order.
    #[kv(indexed)]
    pub teams: Vec<Team<'a>>,
}

/// One player, from the keys ending in `_N`.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
pub struct Player<'a> {
    /// The `N` of the keys.
    #[kv(index)]
    pub index: usize,
    /// `player_N` (UT99) or `playername_N` (BF1942).
    #[kv(key = "player", alias = "playername")]
    pub name: Option<Cow<'a, str>>,
    /// `frags_N` (UT99) or `score_N` (BF1942).
    #[kv(key = "frags", alias = "score")]
    pub score: Option<i32>,
    /// `ping_N`, milliseconds.
    pub ping: Option<u32>,
    /// `team_N`: a number on most games, so kept as text; see [`Player::team_number`].
    pub team: Option<Cow<'a, str>>,
    /// `kills_N` (BF1942).
    pub kills: Option<i32>,
    /// `deaths_N` (BF1942).
    pub deaths: Option<i32>,
    /// The player's other keys (`mesh`, `skin`, `keyhash`...), without the `_N`.
    #[kv(rest)]
    pub extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// One team, from `teamname_N` and the other `team*_N` keys.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(unknown_prefix = "team")]
pub struct Team<'a> {
    /// The `N` of the keys.
    #[kv(index)]
    pub index: usize,
    /// `teamname_N`.
    #[kv(key = "teamname")]
    pub name: Option<Cow<'a, str>>,
    /// The team's other keys (`teamscore`...), without the `_N`.
    #[kv(rest)]
    pub extra: Vec<(Cow<'a, str>, Cow<'a, str>)>,
}

/// The pair a responder adds for `\echo\<text>`: the text under `echo`, as the raw bytes it
/// arrived as, whatever their encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Echo<'a> {
    /// `echo`.
    pub echo: Option<&'a [u8]>,
}

/// The part marker every reply datagram carries: `\queryid\X.Y`, and `\final\` on the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(encoding = "windows-1252")]
pub struct Trailer {
    /// `queryid`: the query id and this datagram's part number.
    #[kv(key = "queryid", parse)]
    pub query_id: Option<QueryId>,
    /// `final`: present on the last part.
    #[kv(key = "final", flag)]
    pub is_final: bool,
}

/// The value of `\queryid\`: `X.Y`, query `X`, part `Y` (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct QueryId {
    /// The query id the server chose.
    pub id: u32,
    /// This datagram's part number, from 1.
    pub part: u32,
}

impl FromStr for QueryId {
    type Err = std::num::ParseIntError;

    /// `X.Y`, or a bare `X`, which is part 1.
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s.split_once('.') {
            Some((id, part)) => Ok(QueryId {
                id: id.parse()?,
                part: part.parse()?,
            }),
            None => Ok(QueryId {
                id: s.parse()?,
                part: 1,
            }),
        }
    }
}

impl fmt::Display for QueryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.id, self.part)
    }
}

impl<'a> Reply<'a> {
    /// The first value of a rule.
    pub fn rule(&self, key: &str) -> Option<&str> {
        self.rules
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    /// The players the server counts: those numbered below `numplayers`. BF1942 keeps
    /// entries of players who left after them; without `numplayers` every entry counts.
    pub fn current_players(&self) -> &[Player<'a>] {
        &self.players[..self.current_player_count()]
    }

    /// The entries beyond `numplayers` (stale on BF1942).
    pub fn stale_players(&self) -> &[Player<'a>] {
        &self.players[self.current_player_count()..]
    }

    fn current_player_count(&self) -> usize {
        match self.num_players {
            // Players are in index order, so the current ones are a prefix.
            Some(n) => self
                .players
                .partition_point(|p| u64::try_from(p.index).is_ok_and(|i| i < u64::from(n))),
            None => self.players.len(),
        }
    }

    /// Whether `team_N` values count from 1 (BF1942) rather than from 0 like `teamname_N`.
    pub fn numbers_teams_from_one(&self) -> bool {
        self.game_name.as_deref() == Some("bfield1942")
    }

    /// The team a player is on, matching `team_N` to `teamname_M` the way the game numbers them.
    pub fn team_of(&self, player: &Player<'_>) -> Option<&Team<'a>> {
        let number = usize::try_from(player.team_number()?).ok()?;
        let index = if self.numbers_teams_from_one() {
            number.checked_sub(1)?
        } else {
            number
        };
        self.teams.iter().find(|t| t.index == index)
    }
}

impl Player<'_> {
    /// `team_N` as a number, when it is one.
    pub fn team_number(&self) -> Option<u32> {
        self.team.as_deref()?.trim().parse().ok()
    }
}

/// What [`Reassembly::push`] did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// A new part, kept.
    New,
    /// A part already held; the copy was dropped.
    Duplicate,
    /// A part of a different query id than the parts already held; dropped.
    OtherQuery,
}

/// A reply being put back together from its datagrams: no I/O, no clock.
///
/// Feed datagrams in any order, duplicates included; the reply is complete when parts
/// `1..=N` are all held, `N` being the part that carries `\final\`. Until then (or when the
/// caller gives up waiting) [`reply`](Reassembly::reply) still decodes what arrived.
///
/// A datagram without `\queryid\` counts as part 1. Offsets in errors from
/// [`reply`](Reassembly::reply) count through the held parts joined in part order.
///
/// ```
/// use query_specs::gamespy1::{Pushed, Reassembly};
///
/// let mut parts = Reassembly::new();
/// // BF1942 style: part 2 first, `\final\` before `\queryid\`.
/// assert_eq!(parts.push(b"\\player_0\\Ann\\final\\\\queryid\\7.2")?, Pushed::New);
/// assert!(!parts.is_complete());
/// assert_eq!(parts.missing_parts(), [1]);
/// parts.push(b"\\hostname\\Fort\\numplayers\\1\\queryid\\7.1")?;
/// assert!(parts.is_complete());
/// let assembled = parts.reply()?;
/// assert_eq!(assembled.reply.hostname.as_deref(), Some("Fort"));
/// assert_eq!(assembled.reply.players[0].name.as_deref(), Some("Ann"));
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Reassembly {
    query_id: Option<u32>,
    /// The parts by number from 0 (the wire's part 1).
    parts: NumberedParts<HeldPart>,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly {
            query_id: None,
            parts: NumberedParts::new(MAX_PARTS, usize::MAX),
        }
    }
}

/// A datagram kept by [`Reassembly`], split into pairs once, when it arrived: where its pairs
/// are, without the `queryid` and `final` markers, so that [`Reassembly::reply`] need not split
/// it again.
#[derive(Debug, Clone, Default)]
struct HeldPart {
    datagram: Vec<u8>,
    pairs: Vec<PairSpan>,
}

/// A reply decoded from the parts that arrived.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assembled<'a> {
    /// The decoded content.
    pub reply: Reply<'a>,
    /// Whether every part up to the one carrying `\final\` arrived.
    pub complete: bool,
    /// Part numbers known to be missing (below the highest part seen, or below the final part).
    pub missing_parts: Vec<u32>,
    /// The query id the parts carry.
    pub query_id: Option<u32>,
}

impl Reassembly {
    /// Nothing received yet.
    pub fn new() -> Self {
        Reassembly::default()
    }

    /// Adds one received datagram.
    ///
    /// A datagram that is not key/value text, or whose `\queryid\` is malformed or numbers a
    /// part outside `1..=MAX_PARTS`, or past the part with `\final\` (or a `\final\` on a part
    /// before one held), is an error and changes nothing; so is a first part (or a datagram
    /// without `\queryid\`) with no pair besides the `queryid` and `final` markers: an empty
    /// datagram or a lone `\` is no reply. A copy of a part held is dropped before any cap
    /// counts it.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Pushed> {
        // One pass splits the datagram: the markers are kept for the trailer, the other pairs
        // as spans for `reply`.
        let mut spans = Vec::with_capacity(kv::pair_capacity(datagram));
        let (mut query_id, mut is_final) = (None, None);
        for pair in kv::pairs(datagram) {
            let pair = pair.map_err(|e| e.in_field("Datagram"))?;
            if pair.key == QUERYID_KEY {
                query_id.get_or_insert(pair);
            } else if pair.key == FINAL_KEY {
                is_final.get_or_insert(pair);
            } else {
                spans.push(PairSpan::of(&pair, 0));
            }
        }
        // The first of each marker is all the trailer reads: it has no `rest` field, so a
        // repeated key is ignored (decoding rules 1 and 4 of `query_wire::kv`).
        let trailer = match (query_id, is_final) {
            (Some(q), Some(f)) => Trailer::from_pairs(&[q, f], None, ENCODING),
            (Some(p), None) | (None, Some(p)) => Trailer::from_pairs(&[p], None, ENCODING),
            (None, None) => Trailer::from_pairs(&[], None, ENCODING),
        }
        .map_err(|e| e.in_field(<Trailer as FromKeyValues<'_>>::NAME))?;
        let (id, part) = match trailer.query_id {
            Some(q) => (Some(q.id), q.part),
            None => (None, 1),
        };
        if part == 0 || part > MAX_PARTS {
            let at = query_id.map_or(0, |p| p.value_offset);
            return Err(Error::new(
                ErrorKind::OutOfRange {
                    value: u64::from(part),
                    reason: "part numbers run from 1 to MAX_PARTS",
                },
                at,
            )
            .in_field("query_id")
            .in_field(<Trailer as FromKeyValues<'_>>::NAME));
        }
        if part == 1 && spans.is_empty() {
            // Strict: taking an empty datagram, a lone `\` or a bare trailer for a first part
            // would report a server with no name. A later part may be a bare trailer.
            return Err(Error::new(
                ErrorKind::Invalid("a first part without any key/value pair is no reply"),
                0,
            )
            .in_field("Datagram"));
        }
        if let (Some(held), Some(id)) = (self.query_id, id) {
            if held != id {
                return Ok(Pushed::OtherQuery);
            }
        }
        let total = trailer.is_final.then_some(part);
        let held = HeldPart {
            datagram: datagram.to_vec(),
            pairs: spans,
        };
        let filed = self
            .parts
            .file(part - 1, total, datagram.len(), || held)
            .map_err(|e| e.in_field("Reassembly"))?;
        if filed == Filed::Duplicate {
            return Ok(Pushed::Duplicate);
        }
        if self.query_id.is_none() {
            self.query_id = id;
        }
        Ok(Pushed::New)
    }

    /// The query id of the parts held.
    pub fn query_id(&self) -> Option<u32> {
        self.query_id
    }

    /// How many parts the reply has, once the part with `\final\` arrived.
    pub fn total_parts(&self) -> Option<u32> {
        self.parts.total()
    }

    /// How many distinct parts are held.
    pub fn parts_received(&self) -> usize {
        self.parts.len()
    }

    /// Whether every part up to the one with `\final\` is held.
    pub fn is_complete(&self) -> bool {
        self.parts.is_complete()
    }

    /// Part numbers known to be missing: below the final part when it is known, otherwise
    /// below the highest part held (more may be missing after it).
    pub fn missing_parts(&self) -> Vec<u32> {
        self.parts.missing().into_iter().map(|n| n + 1).collect()
    }

    /// The pairs of the held parts in part order, without the `queryid` and `final` markers.
    /// Offsets count through the held parts joined in part order. Each part was split when it
    /// was pushed, so this cannot fail.
    pub fn pairs(&self) -> Vec<Pair<'_>> {
        let held = || self.parts.in_order();
        let mut out = Vec::with_capacity(held().map(|part| part.pairs.len()).sum());
        let mut origin = 0;
        for part in held() {
            let text = &part.datagram[..];
            out.extend(part.pairs.iter().map(|span| span.pair(text, origin)));
            origin += text.len();
        }
        out
    }

    /// Decodes what arrived, in [`ENCODING`].
    pub fn reply(&self) -> Result<Assembled<'_>> {
        self.reply_with(ENCODING)
    }

    /// Decodes what arrived, in `encoding`.
    pub fn reply_with(&self, encoding: TextEncoding) -> Result<Assembled<'_>> {
        let name = <Reply<'_> as FromKeyValues<'_>>::NAME;
        let pairs = self.pairs();
        let reply = Reply::from_pairs(&pairs, None, encoding).map_err(|e| e.in_field(name))?;
        Ok(Assembled {
            reply,
            complete: self.is_complete(),
            missing_parts: self.missing_parts(),
            query_id: self.query_id,
        })
    }
}

/// One reply datagram as [`ReplyDatagrams`] writes it: whole pairs of the reply, then the
/// part marker `\queryid\X.Y`, then `\final\` on the last part (the order UT99 sends).
///
/// What a responder writes, strictly; servers put the marker's keys in other orders (BF1942
/// sends `\final\` first), which [`Reassembly`] reads through [`Trailer`], wherever they are.
///
/// ```
/// use query_specs::gamespy1::{Final, ReplyPart};
/// use query_wire::{Decode, Encode};
///
/// let part = ReplyPart { pairs: b"\\hostname\\Fort", query_id: 7, part: 2, last: Some(Final) };
/// let bytes = part.to_vec()?;
/// assert_eq!(bytes, b"\\hostname\\Fort\\queryid\\7.2\\final\\");
/// assert_eq!(ReplyPart::from_bytes(&bytes)?, part);
/// // Without `\final\`, the part number ends the datagram.
/// let first = ReplyPart { part: 1, last: None, ..part };
/// assert_eq!(first.to_vec()?, b"\\hostname\\Fort\\queryid\\7.1");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Wire, Serialize)]
pub struct ReplyPart<'a> {
    /// The pairs this datagram carries, up to the marker's key.
    #[wire(bytes(until = b"\\queryid\\"))]
    #[serde(skip)]
    pub pairs: &'a [u8],
    /// `X` of `X.Y`: the query id.
    #[wire(dec(until = b'.', max = 10))]
    pub query_id: u32,
    /// `Y`: this datagram's number, from 1, ended by `\final\` or by the datagram's end.
    #[wire(dec(before = b'\\', or_end, max = 10))]
    pub part: u32,
    /// `\final\` on the last part.
    #[wire(trailing)]
    pub last: Option<Final>,
}

/// `\final\`, which marks the last part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Wire, Serialize)]
#[wire(magic = b"\\final\\")]
pub struct Final;

/// A reply split into datagrams of at most a given size, each a [`ReplyPart`] ending with its
/// marker (`\queryid\X.Y`, and `\final\` on the last): what a responder sends.
///
/// Pairs are never cut; a player's keys may be spread over two datagrams, between pairs.
/// The plan borrows the encoded reply, and each datagram is written into the caller's buffer.
///
/// ```
/// use query_specs::gamespy1::{Reply, ReplyDatagrams, MAX_DATAGRAM};
/// use query_wire::kv::ToKeyValues;
///
/// let reply = Reply { hostname: Some("Fort".into()), ..Reply::default() };
/// let payload = reply.to_vec()?;
/// let datagrams = ReplyDatagrams::new(&payload, 7, MAX_DATAGRAM)?;
/// assert_eq!(datagrams.to_vecs()?, [b"\\hostname\\Fort\\queryid\\7.1\\final\\".to_vec()]);
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct ReplyDatagrams<'p> {
    payload: &'p [u8],
    bodies: Vec<Range<usize>>,
    query_id: u32,
}

impl<'p> ReplyDatagrams<'p> {
    /// Plans the datagrams for `payload`, the encoded pairs of a reply (without markers).
    ///
    /// Fails when `payload` is not key/value text, already carries `queryid` or `final`, or
    /// holds a pair too large for one datagram.
    pub fn new(payload: &'p [u8], query_id: u32, max_datagram: usize) -> Result<Self> {
        Self::new_in(payload, query_id, max_datagram, Vec::new())
    }

    /// [`new`](Self::new), planning into `bodies` (cleared first), so that a responder reuses
    /// one list from reply to reply instead of allocating one each time;
    /// [`into_bodies`](Self::into_bodies) hands it back.
    pub fn new_in(
        payload: &'p [u8],
        query_id: u32,
        max_datagram: usize,
        mut bodies: Vec<Range<usize>>,
    ) -> Result<Self> {
        bodies.clear();
        let mut start = 0;
        let mut end = 0;
        for pair in kv::pairs(payload) {
            let pair = pair?;
            if pair.key == QUERYID_KEY || pair.key == FINAL_KEY {
                return Err(Error::new(
                    ErrorKind::Invalid("the reply already carries a queryid or final marker"),
                    pair.key_offset,
                ));
            }
            let pair_start = pair.key_offset - 1;
            let pair_end = pair.end_offset();
            // Every datagram keeps room for `\final\`, so whichever turns out last fits.
            let part = u32::try_from(bodies.len() + 1).unwrap_or(u32::MAX);
            let budget = max_datagram.saturating_sub(trailer_len(query_id, part, true));
            if pair_end - start > budget {
                if end == start {
                    return Err(Error::new(
                        ErrorKind::TooLong {
                            len: pair_end - pair_start,
                            max: budget,
                        },
                        pair_start,
                    ));
                }
                bodies.push(start..end);
                start = pair_start;
                let part = u32::try_from(bodies.len() + 1).unwrap_or(u32::MAX);
                let budget = max_datagram.saturating_sub(trailer_len(query_id, part, true));
                if pair_end - start > budget {
                    return Err(Error::new(
                        ErrorKind::TooLong {
                            len: pair_end - pair_start,
                            max: budget,
                        },
                        pair_start,
                    ));
                }
            }
            end = pair_end;
        }
        bodies.push(start..end);
        Ok(ReplyDatagrams {
            payload,
            bodies,
            query_id,
        })
    }

    /// How many datagrams the reply takes (at least one).
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// The plan's list, for the next [`new_in`](Self::new_in).
    pub fn into_bodies(self) -> Vec<Range<usize>> {
        self.bodies
    }

    /// Always false: even an empty reply is sent as one datagram with its trailer.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Datagram `i` (from 0): its pairs and its marker.
    pub fn part(&self, i: usize) -> Result<ReplyPart<'p>> {
        Ok(ReplyPart {
            pairs: self.body(i)?,
            query_id: self.query_id,
            part: u32::try_from(i + 1).unwrap_or(u32::MAX),
            last: (i + 1 == self.bodies.len()).then_some(Final),
        })
    }

    /// The size of datagram `i` (from 0).
    pub fn datagram_len(&self, i: usize) -> Result<usize> {
        Ok(self.part(i)?.encoded_len(()))
    }

    fn body(&self, i: usize) -> Result<&'p [u8]> {
        let range = self.bodies.get(i).cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::OutOfRange {
                    value: i as u64,
                    reason: "no datagram with this number",
                },
                0,
            )
        })?;
        Ok(&self.payload[range])
    }

    /// Writes datagram `i` (from 0) into `buf`; returns its length.
    pub fn write(&self, i: usize, buf: &mut [u8]) -> Result<usize> {
        self.part(i)?.encode_into(buf)
    }

    /// Every datagram as its own `Vec`.
    pub fn to_vecs(&self) -> Result<Vec<Vec<u8>>> {
        (0..self.len())
            .map(|i| {
                let mut buf = vec![0; self.datagram_len(i)?];
                let n = self.write(i, &mut buf)?;
                buf.truncate(n);
                Ok(buf)
            })
            .collect()
    }
}

/// The bytes a datagram's marker takes: [`ReplyPart`] without pairs.
fn trailer_len(query_id: u32, part: u32, is_final: bool) -> usize {
    ReplyPart {
        pairs: b"",
        query_id,
        part,
        last: is_final.then_some(Final),
    }
    .encoded_len(())
}

/// Encodes `reply` and splits it into datagrams of at most `max_datagram` bytes.
pub fn reply_datagrams(
    reply: &Reply<'_>,
    query_id: u32,
    max_datagram: usize,
) -> Result<Vec<Vec<u8>>> {
    let payload = reply.to_vec()?;
    ReplyDatagrams::new(&payload, query_id, max_datagram)?.to_vecs()
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Decode;

    #[test]
    fn requests_round_trip() {
        let bytes = b"\\status\\xserverquery";
        assert_eq!(
            Request::from_bytes(bytes).unwrap(),
            Request::StatusXServerQuery
        );
        assert_eq!(Request::StatusXServerQuery.to_vec().unwrap(), bytes);
        assert_eq!(Request::from_bytes(b"\\status\\").unwrap(), Request::Status);
        assert_eq!(Request::Status.to_vec().unwrap(), b"\\status\\");
        assert_eq!(
            Request::from_bytes(b"\\echo\\hello there").unwrap(),
            Request::Echo("hello there".into())
        );
        assert_eq!(
            Request::from_bytes(b"\\ison\\x").unwrap(),
            Request::Other("ison".into(), "x".into())
        );
        let all = Request::decode_all(b"\\info\\\\rules\\\\players\\").unwrap();
        assert_eq!(all, [Request::Info, Request::Rules, Request::Players]);
        assert_eq!(
            Request::encode_all(&all).unwrap(),
            b"\\info\\\\rules\\\\players\\"
        );
    }

    #[test]
    fn request_errors() {
        let err = Request::from_bytes(b"\\info\\\\rules\\").unwrap_err();
        assert_eq!(err.offset(), 6);
        assert_eq!(err.path_string(), "Request");
        let err = Request::from_bytes(b"").unwrap_err();
        assert_eq!(err.offset(), 0);
        let err = Request::Echo("a\\b".into()).to_vec().unwrap_err();
        assert_eq!(err.offset(), 7);
        assert_eq!(err.path_string(), "Request.Echo");
    }

    #[test]
    fn query_id_text() {
        assert_eq!(
            "1142.3".parse::<QueryId>().unwrap(),
            QueryId { id: 1142, part: 3 }
        );
        assert_eq!(
            "57".parse::<QueryId>().unwrap(),
            QueryId { id: 57, part: 1 }
        );
        assert!("5.x".parse::<QueryId>().is_err());
        assert_eq!(QueryId { id: 20, part: 1 }.to_string(), "20.1");
    }

    #[test]
    fn bad_queryid_is_an_error_that_changes_nothing() {
        let mut parts = Reassembly::new();
        let err = parts.push(b"\\a\\1\\queryid\\x.1").unwrap_err();
        assert_eq!(err.path_string(), "Trailer.query_id");
        assert_eq!(err.offset(), 13);
        let err = parts.push(b"\\a\\1\\queryid\\3.0").unwrap_err();
        assert_eq!(err.offset(), 13);
        let err = parts.push(b"\\a\\1\\queryid\\3.65").unwrap_err();
        assert!(matches!(
            err.kind(),
            ErrorKind::OutOfRange { value: 65, .. }
        ));
        assert!(parts.push(b"no backslash").is_err());
        assert_eq!(parts.parts_received(), 0);
    }

    #[test]
    fn the_first_marker_counts_and_later_ones_are_left_out() {
        let mut parts = Reassembly::new();
        let part = b"\\a\\1\\queryid\\7.2\\final\\\\queryid\\bad\\final\\\\b\\2";
        assert_eq!(parts.push(part).unwrap(), Pushed::New);
        assert_eq!((parts.query_id(), parts.total_parts()), (Some(7), Some(2)));
        assert_eq!(parts.push(b"\\c\\3\\queryid\\7.1").unwrap(), Pushed::New);
        let pairs = parts.pairs();
        let keys: Vec<&[u8]> = pairs.iter().map(|p| p.key).collect();
        assert_eq!(keys, [&b"c"[..], b"a", b"b"]);
        // Offsets count through part 1 (16 bytes), then part 2.
        assert_eq!(pairs[1].key_offset, 16 + 1);
        assert_eq!(pairs[2].value_offset, 16 + part.len() - 1);
    }

    #[test]
    fn a_first_part_without_pairs_is_no_reply_but_a_bare_last_part_is_kept() {
        let mut parts = Reassembly::new();
        for junk in [&b""[..], b"\\", b"\\final\\", b"\\queryid\\4.1\\final\\"] {
            let err = parts.push(junk).unwrap_err();
            assert_eq!(err.path_string(), "Datagram", "{junk:?}");
            assert_eq!(err.offset(), 0);
        }
        assert_eq!(parts.parts_received(), 0);
        assert_eq!(parts.push(b"\\a\\1\\queryid\\4.1").unwrap(), Pushed::New);
        assert_eq!(parts.push(b"\\queryid\\4.2\\final\\").unwrap(), Pushed::New);
        assert!(parts.is_complete());
    }

    #[test]
    fn other_query_ids_and_duplicates_are_dropped() {
        let mut parts = Reassembly::new();
        assert_eq!(parts.push(b"\\a\\1\\queryid\\5.1").unwrap(), Pushed::New);
        assert_eq!(
            parts.push(b"\\a\\1\\queryid\\5.1").unwrap(),
            Pushed::Duplicate
        );
        assert_eq!(
            parts.push(b"\\b\\1\\queryid\\6.2\\final\\").unwrap(),
            Pushed::OtherQuery
        );
        assert_eq!(parts.total_parts(), None);
        assert_eq!(parts.query_id(), Some(5));
    }

    #[test]
    fn split_respects_the_size_and_never_cuts_a_pair() {
        let reply = Reply {
            hostname: Some("x".repeat(50).into()),
            rules: (0..40)
                .map(|i| (format!("rule{i}").into(), "v".repeat(i).into()))
                .collect(),
            ..Reply::default()
        };
        let datagrams = reply_datagrams(&reply, 9, 200).unwrap();
        assert!(datagrams.len() > 1);
        let mut parts = Reassembly::new();
        for (i, d) in datagrams.iter().enumerate() {
            assert!(d.len() <= 200, "datagram {i} is {} bytes", d.len());
            parts.push(d).unwrap();
        }
        assert!(parts.is_complete());
        assert_eq!(parts.reply().unwrap().reply, reply);
    }

    #[test]
    fn each_datagram_is_a_declared_part_and_their_pairs_are_the_reply() {
        let reply = Reply {
            hostname: Some("x".repeat(50).into()),
            rules: (0..40)
                .map(|i| (format!("rule{i}").into(), "v".repeat(i).into()))
                .collect(),
            ..Reply::default()
        };
        let payload = reply.to_vec().unwrap();
        let plan = ReplyDatagrams::new(&payload, 4_000_000_000, 200).unwrap();
        let mut pairs = Vec::new();
        for (i, datagram) in plan.to_vecs().unwrap().iter().enumerate() {
            let part = ReplyPart::from_bytes(datagram).unwrap();
            assert_eq!(part, plan.part(i).unwrap());
            assert_eq!((part.query_id, part.part as usize), (4_000_000_000, i + 1));
            assert_eq!(part.last.is_some(), i + 1 == plan.len());
            pairs.extend_from_slice(part.pairs);
        }
        assert_eq!(pairs, payload);
        // The layout it writes: BF1942's `\final\` before the marker is one of the pairs here
        // (`Reassembly` finds it). A number cut short or a stray byte after the part number is
        // refused where it is.
        let bf1942 = ReplyPart::from_bytes(b"\\a\\b\\final\\queryid\\1.1").unwrap();
        assert_eq!((bf1942.pairs, bf1942.last), (&b"\\a\\b\\final"[..], None));
        let err = ReplyPart::from_bytes(b"\\a\\b\\queryid\\1.1\\x").unwrap_err();
        assert_eq!(
            (err.offset(), err.path_string()),
            (16, "ReplyPart.last".to_owned())
        );
        let err = ReplyPart::from_bytes(b"\\queryid\\1.").unwrap_err();
        assert_eq!(err.path_string(), "ReplyPart.part");
        // A run of pairs holding the marker cannot be written.
        let forged = ReplyPart {
            pairs: b"\\queryid\\2",
            query_id: 1,
            part: 1,
            last: None,
        };
        assert!(forged.to_vec().is_err());
    }

    #[test]
    fn split_refuses_a_pair_that_cannot_fit() {
        let reply = Reply {
            hostname: Some("x".repeat(300).into()),
            ..Reply::default()
        };
        let err = reply_datagrams(&reply, 1, 200).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::TooLong { .. }));
        let err = ReplyDatagrams::new(b"\\queryid\\1.1", 1, 200).unwrap_err();
        assert_eq!(err.offset(), 1);
    }
}
