//! Unity / Multiplay SQP: the client session ([`SqpClient`]) and the responder
//! ([`SqpResponder`]).
//!
//! A query is two exchanges: a 5-byte challenge request answered by a 5-byte challenge, then a
//! query request proving the challenge and naming the chunks wanted. Challenges are single use
//! on the server side, so a lost query request cannot simply be resent: the client starts a
//! new *round* (a fresh challenge, then the query) after each timeout. `Options::attempts()`
//! counts rounds.

use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
pub use query_specs::sqp::ChunkSet;
use query_specs::sqp::{
    ChallengeRequest, ChallengeResponse, Chunks, FieldHeader, QueryRequest, QueryResponse,
    QueryResponseFragment, QueryResponseHead, Request, Response, Rule, ServerInfo, Table, Value,
    MAX_STRING, VERSION, VERSION_UNSET,
};
use query_wire::{Decode, Encode, Endian, Writer};

use super::StatusSession;
use crate::clock::Now;
use crate::engine::{ClientSession, DropReason, ReplySink, Responder, Retry, Verdict};
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};
use crate::status::{Player, ServerStatus, Team};

mod chunks;
pub use chunks::{chunk_names, find_chunks, ChunkSearchError, FoundChunks, CHUNK_NAMES};

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(SqpClient::new(target, options)))
}

/// The chunks a query with `options` asks for: [`Options::sqp_chunks`], ServerInfo alone by
/// default. `Options::players` and `Options::rules` do not add chunks: a server that lacks a
/// chunk asked for cannot answer at all, so SQP asks for more only when told exactly what.
pub fn requested_chunks(options: &Options) -> ChunkSet {
    options.sqp_chunks & ChunkSet::all()
}

/// The most bytes a split reply may add up to. No known server splits at all; the cap keeps a
/// hostile one from making the client hold 256 parts of 64 KiB.
const MAX_SPLIT_REPLY: usize = 1 << 20;

/// Which exchange of the current round is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Challenge,
    Query { challenge: u32 },
}

impl Step {
    fn waiting_for(self) -> &'static str {
        match self {
            Step::Challenge => "challenge request",
            Step::Query { .. } => "query request",
        }
    }
}

/// One SQP status query, as a sans-I/O state machine.
///
/// Replies that do not fit the current step (a late challenge, a query response echoing another
/// challenge, a duplicate part) are ignored. A datagram too short to show whose reply it is is
/// ignored too, since anyone can forge one from the target's address: the genuine reply may
/// still come. If the attempts then run out and such a datagram was seen, the error is
/// [`QueryError::Malformed`] rather than a timeout, because a server that answers garbage is
/// worth reporting as such.
///
/// A query response that echoes this round's challenge is the server's own: a spoofer off the
/// path cannot know the challenge. When it cannot be decoded, the query ends at once with
/// [`QueryError::ServerReply`]: no better reply is coming.
///
/// Lenient where real servers differ harmlessly: a reply with fewer chunks than asked decodes
/// as the chunks it holds ([`find_chunks`]), and `raw.missing_chunks` names the others; version
/// 0 (Unity's FPSSample) is read as version 1 and shown as `raw.version`. Any other version is
/// an error.
///
/// ```
/// use std::time::Instant;
/// use query_net::engine::ClientSession;
/// use query_net::engines::sqp::SqpClient;
/// use query_net::Options;
///
/// let mut session = SqpClient::new("127.0.0.1:7779".parse().unwrap(), &Options::default());
/// // The first datagram is the 5-byte challenge request.
/// assert_eq!(session.poll_transmit(Instant::now()), Some(&[0u8, 0, 0, 0, 0][..]));
/// ```
#[derive(Debug)]
pub struct SqpClient {
    target: SocketAddr,
    requested: ChunkSet,
    max_rounds: u32,
    rounds: u32,
    retry: Retry,
    step: Step,
    parts: Parts,
    first_sent: Option<Instant>,
    best_rtt: Option<Duration>,
    last_bad: Option<QueryError>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
}

impl SqpClient {
    /// A query of `target` for the chunks `options` asks for ([`requested_chunks`]: ServerInfo
    /// alone unless [`Options::sqp_chunks`] says more).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        Self::with_chunks(target, options, requested_chunks(options))
    }

    /// A query of `target` for exactly `chunks` (unknown bits are not asked for: the reply
    /// carries chunks without tags, so a client must know every chunk it asks for).
    pub fn with_chunks(target: SocketAddr, options: &Options, chunks: ChunkSet) -> Self {
        let mut session = SqpClient {
            target,
            requested: chunks & ChunkSet::all(),
            max_rounds: options.attempts(),
            rounds: 0,
            retry: Retry::new(options.timeout, 1),
            step: Step::Challenge,
            parts: Parts::default(),
            first_sent: None,
            best_rtt: None,
            last_bad: None,
            result: None,
            finished: false,
        };
        session.start_round();
        session
    }

    /// The chunks this session asks for.
    pub fn requested(&self) -> ChunkSet {
        self.requested
    }

    fn start_round(&mut self) {
        self.rounds += 1;
        self.step = Step::Challenge;
        self.parts.clear();
        let request = Request::Challenge(ChallengeRequest::default());
        if let Err(e) = self
            .retry
            .start_encoded(Step::Challenge.waiting_for(), &request, ())
        {
            self.finish(Err(QueryError::protocol(format!(
                "cannot encode the challenge request: {e}"
            ))));
        }
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        self.finished = true;
        self.result = Some(result);
    }

    fn note_rtt(&mut self, now: Instant) {
        if let Some(rtt) = self.retry.finish(now) {
            self.best_rtt = Some(self.best_rtt.map_or(rtt, |best| best.min(rtt)));
        }
    }

    fn on_challenge_step(&mut self, datagram: &[u8], now: Instant) {
        if datagram.first() == Some(&1) {
            // A late reply to an earlier round's query: nothing to judge it against any more.
            return;
        }
        match Response::from_bytes_with(datagram, ChunkSet::empty()) {
            Ok(Response::Challenge(ChallengeResponse { challenge })) => {
                self.note_rtt(now);
                self.step = Step::Query { challenge };
                let request = Request::Query(QueryRequest {
                    challenge,
                    version: VERSION,
                    requested: self.requested,
                });
                if let Err(e) = self
                    .retry
                    .start_encoded(self.step.waiting_for(), &request, ())
                {
                    self.finish(Err(QueryError::protocol(format!(
                        "cannot encode the query request: {e}"
                    ))));
                }
            }
            Ok(Response::Query(_)) => {}
            Err(e) => self.last_bad = Some(e.into()),
        }
    }

    fn on_query_step(&mut self, challenge: u32, datagram: &[u8], now: Instant) {
        if datagram.first() == Some(&0) {
            // A duplicate or late challenge response: this round already has its challenge.
            if let Err(e) = Response::from_bytes_with(datagram, ChunkSet::empty()) {
                self.last_bad = Some(e.into());
            }
            return;
        }
        let head = match QueryResponseHead::from_prefix(datagram, ()) {
            Ok((head, _)) => head,
            Err(e) => {
                self.last_bad = Some(e.into());
                return;
            }
        };
        if head.challenge != challenge {
            // Meant for another round, or forged by someone who does not know the challenge.
            return;
        }
        // From here on the reply is the server's own.
        if head.version != VERSION && head.version != VERSION_UNSET {
            self.finish(Err(QueryError::server_reply(QueryError::protocol(
                format!(
                    "query response has version {}; this client reads versions {VERSION} and \
                 {VERSION_UNSET}",
                    head.version
                ),
            ))));
            return;
        }
        let fragment = match QueryResponseFragment::from_bytes(datagram) {
            Ok(fragment) => fragment,
            Err(e) => {
                self.finish(Err(QueryError::server_reply(e)));
                return;
            }
        };
        if fragment.last_packet == 0 && fragment.current_packet == 0 {
            self.accept_payload(fragment.payload, head.version, now);
            return;
        }
        match self.parts.insert(&fragment) {
            Ok(Some(joined)) => self.accept_payload(&joined, head.version, now),
            Ok(None) => {}
            Err(message) => {
                self.finish(Err(QueryError::server_reply(QueryError::protocol(message))));
            }
        }
    }

    fn accept_payload(&mut self, payload: &[u8], version: u16, now: Instant) {
        match find_chunks(payload, self.requested) {
            Ok(found) => {
                self.note_rtt(now);
                let mut status = status_from_reply(self.target, &found, self.requested, version);
                status.ping_ms = self.best_rtt.unwrap_or_default().as_secs_f64() * 1000.0;
                self.finish(Ok(status));
            }
            Err(ChunkSearchError::NoFit { error, .. }) => {
                self.finish(Err(QueryError::server_reply(error)));
            }
            Err(ambiguous) => self.finish(Err(QueryError::server_reply(QueryError::protocol(
                ambiguous.to_string(),
            )))),
        }
    }
}

impl ClientSession for SqpClient {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.finished {
            return None;
        }
        let sent = self.retry.poll_transmit(now);
        if sent.is_some() {
            self.first_sent.get_or_insert(now);
        }
        sent
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.finished {
            return;
        }
        match self.step {
            Step::Challenge => self.on_challenge_step(datagram, now),
            Step::Query { challenge } => self.on_query_step(challenge, datagram, now),
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        self.retry.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished || self.retry.handle_timeout(now).is_ok() {
            return;
        }
        if self.rounds < self.max_rounds {
            self.start_round();
            return;
        }
        let error = self.last_bad.take().unwrap_or_else(|| QueryError::Timeout {
            waiting_for: self.step.waiting_for(),
            attempts: self.rounds,
            after: now.saturating_duration_since(self.first_sent.unwrap_or(now)),
        });
        self.finish(Err(error));
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }
}

/// The parts of a split reply, kept until all have arrived.
#[derive(Debug, Default)]
struct Parts {
    last: u8,
    slots: Vec<Option<Vec<u8>>>,
    filled: usize,
    bytes: usize,
}

impl Parts {
    fn clear(&mut self) {
        self.slots.clear();
        self.filled = 0;
        self.bytes = 0;
    }

    /// Keeps one part; returns the joined payload once every part from 0 to `last` is in.
    /// Duplicates are ignored.
    fn insert(
        &mut self,
        fragment: &QueryResponseFragment<'_>,
    ) -> Result<Option<Vec<u8>>, &'static str> {
        let (current, last) = (fragment.current_packet, fragment.last_packet);
        if current > last {
            return Err("a split reply part is numbered past the last part");
        }
        if self.slots.is_empty() {
            self.last = last;
            self.slots.resize(usize::from(last) + 1, None);
        } else if last != self.last {
            return Err("the parts of a split reply disagree on the last part");
        }
        let slot = &mut self.slots[usize::from(current)];
        if slot.is_some() {
            return Ok(None);
        }
        self.bytes += fragment.payload.len();
        if self.bytes > MAX_SPLIT_REPLY {
            return Err("a split reply exceeds 1 MiB");
        }
        *slot = Some(fragment.payload.to_vec());
        self.filled += 1;
        if self.filled < self.slots.len() {
            return Ok(None);
        }
        let mut joined = Vec::with_capacity(self.bytes);
        for part in self.slots.iter().flatten() {
            joined.extend_from_slice(part);
        }
        self.clear();
        Ok(Some(joined))
    }
}

/// Maps a reply's chunks into a [`ServerStatus`] as [`status_from_chunks`] does, and notes in
/// `raw` the reply's `version` and, as `missing_chunks`, the names of the chunks asked for
/// that the server left out (`[]` when it sent them all).
pub fn status_from_reply(
    address: SocketAddr,
    found: &FoundChunks<'_>,
    requested: ChunkSet,
    version: u16,
) -> ServerStatus {
    let mut status = status_from_chunks(address, &found.chunks);
    if let serde_json::Value::Object(raw) = &mut status.raw {
        raw.insert("version".to_owned(), version.into());
        raw.insert(
            "missing_chunks".to_owned(),
            chunk_names(requested - found.present).into(),
        );
    }
    status
}

/// Maps decoded chunks into a [`ServerStatus`] (with `ping_ms` 0: the session fills it in).
///
/// - ServerInfo gives name, game type, version (the build id), map and the counts.
/// - PlayerInfo columns are found by name, ignoring case: `name` / `player` / `playername` /
///   `username`, `score`, `ping`, `team`; the other columns go to [`Player::extra`] as text.
///   A `score` sent as text (as [`SqpResponder`] does for negative scores) is parsed.
/// - TeamInfo likewise (`name` / `team` / `teamname`, `score`); rules become text.
/// - `raw` holds every decoded chunk, metrics and the game port included.
pub fn status_from_chunks(address: SocketAddr, chunks: &Chunks<'_>) -> ServerStatus {
    let info = chunks.server_info.as_ref();
    let rules = chunks
        .server_rules
        .iter()
        .flatten()
        .map(|rule| (rule.key.to_owned(), value_text(&rule.value)))
        .collect::<IndexMap<_, _>>();
    ServerStatus {
        protocol: Protocol::Sqp,
        address,
        name: info.map(|i| i.server_name.to_owned()).unwrap_or_default(),
        map: info.map(|i| i.map.to_owned()),
        game_type: info.map(|i| i.game_type.to_owned()),
        version: info.map(|i| i.build_id.to_owned()),
        num_players: info.map_or(0, |i| u32::from(i.current_players)),
        max_players: info.map_or(0, |i| u32::from(i.max_players)),
        password: None,
        players: chunks.player_info.as_ref().map(players).unwrap_or_default(),
        teams: chunks.team_info.as_ref().map(teams).unwrap_or_default(),
        rules,
        ping_ms: 0.0,
        complete: true,
        raw: serde_json::to_value(chunks).unwrap_or(serde_json::Value::Null),
    }
}

/// A value as text: numbers in decimal, strings as they are.
fn value_text(value: &Value<'_>) -> String {
    match value {
        Value::Byte(v) => v.to_string(),
        Value::U16(v) => v.to_string(),
        Value::U32(v) => v.to_string(),
        Value::U64(v) => v.to_string(),
        Value::F32(v) => v.to_string(),
        Value::Str(s) => (*s).to_owned(),
    }
}

/// A value as a whole number, if it is one (text included, for negative scores sent as text).
fn value_integer(value: &Value<'_>) -> Option<i64> {
    match value {
        Value::Byte(v) => Some(i64::from(*v)),
        Value::U16(v) => Some(i64::from(*v)),
        Value::U32(v) => Some(i64::from(*v)),
        Value::U64(v) => i64::try_from(*v).ok(),
        Value::Str(s) => s.trim().parse().ok(),
        Value::F32(_) => None,
    }
}

/// Which table column holds which common field.
#[derive(Debug, Default)]
struct Columns {
    name: Option<usize>,
    score: Option<usize>,
    ping: Option<usize>,
    team: Option<usize>,
}

impl Columns {
    fn find(fields: &[FieldHeader<'_>], names: &[&str]) -> Self {
        let position = |wanted: &[&str]| {
            fields
                .iter()
                .position(|f| wanted.iter().any(|w| f.name.eq_ignore_ascii_case(w)))
        };
        Columns {
            name: position(names),
            score: position(&["score"]),
            ping: position(&["ping"]),
            team: position(&["team"]),
        }
    }
}

/// The rows of a table, each with its column headers; nothing when it has no columns, which
/// decoding allows only for a table of 0 rows (it refuses rows with a field count of 0).
fn rows<'t, 'a>(
    table: &'t Table<'a>,
) -> impl Iterator<Item = (&'t [FieldHeader<'a>], &'t [Value<'a>])> + 't {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let width = fields.len().max(1);
    table
        .values
        .chunks(width)
        .filter(move |_| !fields.is_empty())
        .map(move |row| (fields, row))
}

fn players(table: &Table<'_>) -> Vec<Player> {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let columns = Columns::find(fields, &["name", "player", "playername", "username"]);
    rows(table)
        .map(|(fields, row)| {
            let mut player = Player::default();
            for (i, (field, value)) in fields.iter().zip(row).enumerate() {
                let mapped = if Some(i) == columns.name {
                    player.name = value_text(value);
                    true
                } else if Some(i) == columns.score {
                    player.score = value_integer(value);
                    player.score.is_some()
                } else if Some(i) == columns.ping {
                    player.ping = value_integer(value).and_then(|p| u32::try_from(p).ok());
                    player.ping.is_some()
                } else if Some(i) == columns.team {
                    let team = value_text(value);
                    player.team = (!team.is_empty()).then_some(team);
                    true
                } else {
                    false
                };
                if !mapped {
                    player
                        .extra
                        .insert(field.name.to_owned(), value_text(value));
                }
            }
            player
        })
        .collect()
}

fn teams(table: &Table<'_>) -> Vec<Team> {
    let fields = table.fields.as_deref().unwrap_or(&[]);
    let columns = Columns::find(fields, &["name", "team", "teamname"]);
    rows(table)
        .map(|(fields, row)| {
            let mut team = Team::default();
            for (i, (field, value)) in fields.iter().zip(row).enumerate() {
                if Some(i) == columns.name {
                    team.name = value_text(value);
                } else if Some(i) == columns.score && value_integer(value).is_some() {
                    team.score = value_integer(value);
                } else {
                    team.extra.insert(field.name.to_owned(), value_text(value));
                }
            }
            team
        })
        .collect()
}

/// How an [`SqpResponder`] keeps its challenges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqpResponderConfig {
    /// How long an issued challenge stays valid.
    pub challenge_ttl: Duration,
    /// Challenges outstanding at most (rounded up to a multiple of 4); the table never grows.
    pub max_challenges: usize,
}

impl Default for SqpResponderConfig {
    /// 5 seconds, 16,384 challenges (about 1 MiB).
    fn default() -> Self {
        SqpResponderConfig {
            challenge_ttl: Duration::from_secs(5),
            max_challenges: 16_384,
        }
    }
}

/// The SQP server side: issues challenges and answers queries from a [`SharedState`].
///
/// - A challenge is random, bound to the source address (IP and port), single use, and expires
///   after [`SqpResponderConfig::challenge_ttl`]. It is kept in a fixed table, not derived
///   statelessly (an HMAC could prove a challenge but not that it was never used before).
///   The table is 4-way set associative under a randomly keyed hash: a new challenge replaces
///   the source's previous one, else a free or expired slot of its set, else the oldest of the
///   set. Memory is fixed at start and a flood from many addresses can only evict, never grow it.
/// - Only the exact 5-byte challenge request and 8-byte query request are answered, version 1
///   only, so a reply to an unproven source is never larger than its request.
/// - Chunks are written in bit order straight from the borrowed state, without allocating.
///   Strings longer than 255 bytes are cut at a character boundary. Rules are typed: a bool as
///   a byte 0/1, an integer as u32 (u64 above u32::MAX, text when negative), a float as f32,
///   text as a string. The player table has the columns `name` (string), `score` (u32, or
///   string when a score is negative or too large), `ping` (u16, saturating) and `team`
///   (string, only when some player has a team); the team table has `name` and `score`. A
///   requested Metrics chunk is sent empty: the state has no metrics.
/// - A reply never exceeds the [`ReplySink`]'s datagram size: rules and table rows that do not
///   fit are left out (players past the cut are still counted in ServerInfo), keeping room for
///   every requested chunk.
#[derive(Debug)]
pub struct SqpResponder {
    state: SharedState,
    challenges: ChallengeTable,
}

impl SqpResponder {
    /// Answers from `state` with the default [`SqpResponderConfig`].
    pub fn new(state: SharedState) -> Self {
        Self::with_config(state, SqpResponderConfig::default())
    }

    /// Answers from `state` with `config`.
    pub fn with_config(state: SharedState, config: SqpResponderConfig) -> Self {
        SqpResponder {
            state,
            challenges: ChallengeTable::new(config),
        }
    }

    /// The state it answers from.
    pub fn state(&self) -> &SharedState {
        &self.state
    }
}

impl Responder for SqpResponder {
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
        let pushed = match request {
            Request::Challenge(_) => {
                let challenge = self.challenges.issue(from, now.instant);
                replies.push_encoded(
                    &Response::Challenge(ChallengeResponse { challenge }),
                    ChunkSet::empty(),
                )
            }
            Request::Query(query) => {
                if query.version != VERSION {
                    return Verdict::Dropped(DropReason::Unsupported);
                }
                if !self.challenges.redeem(from, query.challenge, now.instant) {
                    return Verdict::Dropped(DropReason::BadChallenge);
                }
                let state = self.state.load();
                let chunks = query.requested & ChunkSet::all();
                replies.push_with(|buf| write_query_response(buf, &state, query.challenge, chunks))
            }
        };
        match pushed {
            Ok(()) => Verdict::Answered,
            // Only a datagram cap smaller than a ServerInfo chunk gets here.
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

/// Sets of this many slots share one hash bucket.
const WAYS: usize = 4;

#[derive(Debug, Clone, Copy)]
struct Issued {
    holder: SocketAddr,
    challenge: u32,
    at: Instant,
}

/// Outstanding challenges in a fixed, set-associative table (see [`SqpResponder`]).
#[derive(Debug)]
struct ChallengeTable {
    slots: Box<[Option<Issued>]>,
    hasher: RandomState,
    ttl: Duration,
}

impl ChallengeTable {
    fn new(config: SqpResponderConfig) -> Self {
        let sets = config.max_challenges.div_ceil(WAYS).max(1);
        ChallengeTable {
            slots: vec![None; sets * WAYS].into_boxed_slice(),
            hasher: RandomState::new(),
            ttl: config.challenge_ttl,
        }
    }

    fn set_of(&mut self, holder: SocketAddr) -> &mut [Option<Issued>] {
        let sets = self.slots.len() / WAYS;
        // The hash is 64 bits; the modulo of a usize-truncated value is still well spread.
        let set = (self.hasher.hash_one(holder) as usize) % sets;
        &mut self.slots[set * WAYS..(set + 1) * WAYS]
    }

    fn issue(&mut self, from: SocketAddr, now: Instant) -> u32 {
        let holder = canonical(from);
        let challenge = rand::random::<u32>();
        let ttl = self.ttl;
        let set = self.set_of(holder);
        let live =
            |slot: &Option<Issued>| slot.is_some_and(|s| now.saturating_duration_since(s.at) < ttl);
        let index = set
            .iter()
            .position(|slot| slot.is_some_and(|s| s.holder == holder))
            .or_else(|| set.iter().position(|slot| !live(slot)))
            .unwrap_or_else(|| (0..WAYS).min_by_key(|&i| set[i].map(|s| s.at)).unwrap_or(0));
        set[index] = Some(Issued {
            holder,
            challenge,
            at: now,
        });
        challenge
    }

    /// Whether `challenge` is the one issued to `from` and still valid; it is used up if so.
    /// A wrong challenge leaves the real one in place, so a forged query cannot cancel it.
    fn redeem(&mut self, from: SocketAddr, challenge: u32, now: Instant) -> bool {
        let holder = canonical(from);
        let ttl = self.ttl;
        let set = self.set_of(holder);
        let Some(slot) = set
            .iter_mut()
            .find(|slot| slot.is_some_and(|s| s.holder == holder))
        else {
            return false;
        };
        let Some(issued) = *slot else {
            return false;
        };
        if now.saturating_duration_since(issued.at) >= ttl {
            *slot = None;
            return false;
        }
        if issued.challenge != challenge {
            return false;
        }
        *slot = None;
        true
    }
}

/// IPv4-mapped IPv6 sources as IPv4, so a dual-stack socket keys them like the client does.
fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A u8-length SQP string from `text`.
fn short(text: &str) -> &str {
    cut(text, MAX_STRING)
}

/// An integer's decimal digits on the stack, for values SQP has no signed type for.
#[derive(Debug)]
struct Decimal {
    digits: [u8; 20],
    len: usize,
}

impl Decimal {
    fn new(value: i64) -> Self {
        let mut decimal = Decimal {
            digits: [0; 20],
            len: 0,
        };
        // i64::MIN is 20 characters: the buffer always has room.
        let _ = write!(decimal, "{value}");
        decimal
    }

    /// `value`'s digits if `needed`, else nothing: formatting is skipped when the column is
    /// numeric.
    fn when(needed: bool, value: i64) -> Self {
        if needed {
            Decimal::new(value)
        } else {
            Decimal {
                digits: [0; 20],
                len: 0,
            }
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.digits[..self.len]).unwrap_or_default()
    }
}

impl std::fmt::Write for Decimal {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let slot = self.digits.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        slot.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// A score as the table's score column carries it: u32, or text when any score of the table
/// does not fit a u32.
fn score_value(score: i64, as_text: bool, digits: &Decimal) -> Value<'_> {
    match u32::try_from(score) {
        Ok(score) if !as_text => Value::U32(score),
        _ => Value::Str(digits.as_str()),
    }
}

fn scores_need_text(mut scores: impl Iterator<Item = i64>) -> bool {
    scores.any(|s| u32::try_from(s).is_err())
}

fn rule_value<'s>(value: &'s RuleValue, digits: &'s Decimal) -> Value<'s> {
    match value {
        RuleValue::Bool(b) => Value::Byte(u8::from(*b)),
        RuleValue::Integer(i) => match (u32::try_from(*i), u64::try_from(*i)) {
            (Ok(small), _) => Value::U32(small),
            (_, Ok(large)) => Value::U64(large),
            _ => Value::Str(digits.as_str()),
        },
        // SQP's only float is f32: the nearest f32 is sent.
        RuleValue::Float(x) => Value::F32(*x as f32),
        RuleValue::Text(text) => Value::Str(short(text)),
    }
}

/// The minimum size of each chunk, for keeping room for the chunks after the current one.
fn minimum_size(chunks: ChunkSet) -> usize {
    let table = 4 + 2;
    [
        (ChunkSet::SERVER_RULES, 4),
        (ChunkSet::PLAYER_INFO, table),
        (ChunkSet::TEAM_INFO, table),
        (ChunkSet::METRICS, 4 + 1),
    ]
    .iter()
    .filter(|(bit, _)| chunks.contains(*bit))
    .map(|(_, size)| size)
    .sum()
}

/// Writes a whole query response into `buf`: the header from the declaration, then each
/// requested chunk behind its u32 length, then the packet length patched in.
fn write_query_response(
    buf: &mut [u8],
    state: &ServerState,
    challenge: u32,
    chunks: ChunkSet,
) -> Result<usize, query_wire::Error> {
    let header = Response::Query(QueryResponse {
        challenge,
        version: VERSION,
        current_packet: 0,
        last_packet: 0,
        chunks: Chunks::default(),
    });
    let header_len = header.encode_into_with(buf, ChunkSet::empty())?;
    let end = buf.len().min(header_len + usize::from(u16::MAX));
    let (head, body) = buf[..end].split_at_mut(header_len);
    let capacity = body.len();
    let mut w = Writer::new(body);
    let mut later = chunks;
    let room = |w: &Writer<'_>, later: &mut ChunkSet, this: ChunkSet| {
        later.remove(this);
        capacity
            .saturating_sub(w.position())
            .saturating_sub(minimum_size(*later))
    };

    if chunks.contains(ChunkSet::SERVER_INFO) {
        room(&w, &mut later, ChunkSet::SERVER_INFO);
        let slot = w.begin_length::<u32>(Endian::Big)?;
        server_info(state).encode(&mut w, ())?;
        w.end_length(slot)?;
    }
    if chunks.contains(ChunkSet::SERVER_RULES) {
        let budget = room(&w, &mut later, ChunkSet::SERVER_RULES);
        write_rules(&mut w, state, budget)?;
    }
    if chunks.contains(ChunkSet::PLAYER_INFO) {
        let budget = room(&w, &mut later, ChunkSet::PLAYER_INFO);
        write_players(&mut w, &state.players, budget)?;
    }
    if chunks.contains(ChunkSet::TEAM_INFO) {
        let budget = room(&w, &mut later, ChunkSet::TEAM_INFO);
        write_teams(&mut w, &state.teams, budget)?;
    }
    if chunks.contains(ChunkSet::METRICS) {
        let slot = w.begin_length::<u32>(Endian::Big)?;
        w.put_u8(0)?;
        w.end_length(slot)?;
    }

    let payload = w.position();
    let length = u16::try_from(payload).map_err(|_| {
        query_wire::Error::new(
            query_wire::ErrorKind::TooLong {
                len: payload,
                max: usize::from(u16::MAX),
            },
            header_len,
        )
    })?;
    head[header_len - 2..].copy_from_slice(&length.to_be_bytes());
    Ok(header_len + payload)
}

fn server_info(state: &ServerState) -> ServerInfo<'_> {
    ServerInfo {
        current_players: u16::try_from(state.num_players()).unwrap_or(u16::MAX),
        max_players: u16::try_from(state.max_players).unwrap_or(u16::MAX),
        server_name: short(&state.name),
        game_type: short(&state.game_type),
        build_id: short(&state.version),
        map: short(&state.map),
        port: state.port,
    }
}

/// The rules, in order, as many as fit in `budget` bytes (chunk length included).
fn write_rules(
    w: &mut Writer<'_>,
    state: &ServerState,
    budget: usize,
) -> Result<(), query_wire::Error> {
    let slot = w.begin_length::<u32>(Endian::Big)?;
    let mut used = 4;
    for (key, value) in &state.rules {
        let digits = match value {
            RuleValue::Integer(i) => Decimal::when(*i < 0, *i),
            _ => Decimal::when(false, 0),
        };
        let value = rule_value(value, &digits);
        let rule = Rule {
            key: short(key),
            kind: value.tag(),
            value,
        };
        used += rule.encoded_len(());
        if used > budget {
            break;
        }
        rule.encode(w, ())?;
    }
    w.end_length(slot)
}

/// The player table's layout for this state.
#[derive(Debug, Clone, Copy)]
struct PlayerLayout {
    score_as_text: bool,
    with_team: bool,
}

impl PlayerLayout {
    fn of(players: &[PlayerState]) -> Self {
        PlayerLayout {
            score_as_text: scores_need_text(players.iter().map(|p| p.score)),
            with_team: players.iter().any(|p| p.team.is_some()),
        }
    }

    fn kinds(self) -> [(&'static str, u8); 4] {
        let score = if self.score_as_text {
            Value::Str("").tag()
        } else {
            Value::U32(0).tag()
        };
        [
            ("name", Value::Str("").tag()),
            ("score", score),
            ("ping", Value::U16(0).tag()),
            ("team", Value::Str("").tag()),
        ]
    }

    fn width(self) -> usize {
        if self.with_team {
            4
        } else {
            3
        }
    }

    /// One player's values; `digits` holds the score's text when the column is text.
    fn row<'s>(self, player: &'s PlayerState, digits: &'s Decimal) -> [Value<'s>; 4] {
        [
            Value::Str(short(&player.name)),
            score_value(player.score, self.score_as_text, digits),
            Value::U16(u16::try_from(player.ping).unwrap_or(u16::MAX)),
            Value::Str(short(player.team.as_deref().unwrap_or(""))),
        ]
    }
}

fn write_players(
    w: &mut Writer<'_>,
    players: &[PlayerState],
    budget: usize,
) -> Result<(), query_wire::Error> {
    let layout = PlayerLayout::of(players);
    let width = layout.width();
    let size = |player: &PlayerState| {
        let digits = Decimal::when(layout.score_as_text, player.score);
        layout.row(player, &digits)[..width]
            .iter()
            .map(|v| v.encoded_len(v.tag()))
            .sum()
    };
    let write_row = |w: &mut Writer<'_>, player: &PlayerState| {
        let digits = Decimal::when(layout.score_as_text, player.score);
        for value in &layout.row(player, &digits)[..width] {
            value.encode(w, value.tag())?;
        }
        Ok(())
    };
    write_table(
        w,
        &layout.kinds()[..width],
        players,
        budget,
        size,
        write_row,
    )
}

fn write_teams(
    w: &mut Writer<'_>,
    teams: &[TeamState],
    budget: usize,
) -> Result<(), query_wire::Error> {
    let as_text = scores_need_text(teams.iter().map(|t| t.score));
    let score_kind = if as_text {
        Value::Str("").tag()
    } else {
        Value::U32(0).tag()
    };
    let columns = [("name", Value::Str("").tag()), ("score", score_kind)];
    let row = |team: &TeamState, digits: &Decimal| -> usize {
        let name = Value::Str(short(&team.name));
        let score = score_value(team.score, as_text, digits);
        name.encoded_len(name.tag()) + score.encoded_len(score.tag())
    };
    let size = |team: &TeamState| row(team, &Decimal::when(as_text, team.score));
    let write_row = |w: &mut Writer<'_>, team: &TeamState| {
        let digits = Decimal::when(as_text, team.score);
        let name = Value::Str(short(&team.name));
        name.encode(w, name.tag())?;
        let score = score_value(team.score, as_text, &digits);
        score.encode(w, score.tag())
    };
    write_table(w, &columns, teams, budget, size, write_row)
}

/// Writes a table chunk: as many leading rows as fit in `budget` bytes (chunk length
/// included). Rows are sized first, so the count is known before they are written.
fn write_table<T>(
    w: &mut Writer<'_>,
    columns: &[(&'static str, u8)],
    items: &[T],
    budget: usize,
    size: impl Fn(&T) -> usize,
    mut write_row: impl FnMut(&mut Writer<'_>, &T) -> Result<(), query_wire::Error>,
) -> Result<(), query_wire::Error> {
    let header: usize = 1 + columns
        .iter()
        .map(|&(name, kind)| FieldHeader { name, kind }.encoded_len(()))
        .sum::<usize>();
    let mut used = 4 + 2 + header;
    let mut count = 0usize;
    for item in items.iter().take(usize::from(u16::MAX)) {
        used += size(item);
        if used > budget {
            break;
        }
        count += 1;
    }
    let slot = w.begin_length::<u32>(Endian::Big)?;
    // `count` is at most u16::MAX by the loop above.
    w.put_number(u16::try_from(count).unwrap_or(u16::MAX), Endian::Big)?;
    if count > 0 {
        w.put_length::<u8>(columns.len(), Endian::Big, None)?;
        for &(name, kind) in columns {
            FieldHeader { name, kind }.encode(w, ())?;
        }
        for item in &items[..count] {
            write_row(w, item)?;
        }
    }
    w.end_length(slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_keeps_whole_characters() {
        assert_eq!(cut("abc", 5), "abc");
        assert_eq!(cut("aé", 2), "a");
        assert_eq!(cut("aé", 3), "aé");
        assert_eq!(cut("日本", 4), "日");
        assert_eq!(cut("", 0), "");
    }

    #[test]
    fn decimal_formats_the_extremes() {
        assert_eq!(Decimal::new(i64::MIN).as_str(), "-9223372036854775808");
        assert_eq!(Decimal::new(-7).as_str(), "-7");
        assert_eq!(Decimal::new(0).as_str(), "0");
    }

    #[test]
    fn rule_values_are_typed() {
        let d = Decimal::new(-5);
        assert_eq!(rule_value(&RuleValue::Bool(true), &d), Value::Byte(1));
        assert_eq!(rule_value(&RuleValue::Integer(7), &d), Value::U32(7));
        assert_eq!(
            rule_value(&RuleValue::Integer(1 << 40), &d),
            Value::U64(1 << 40)
        );
        assert_eq!(rule_value(&RuleValue::Integer(-5), &d), Value::Str("-5"));
        assert_eq!(rule_value(&RuleValue::Float(0.5), &d), Value::F32(0.5));
    }

    #[test]
    fn challenge_table_forgets_the_oldest_of_a_full_set() {
        let mut table = ChallengeTable::new(SqpResponderConfig {
            challenge_ttl: Duration::from_secs(5),
            max_challenges: 1,
        });
        assert_eq!(table.slots.len(), WAYS);
        let t0 = Instant::now();
        let addr = |port| SocketAddr::from(([192, 0, 2, 1], port));
        let first = table.issue(addr(1), t0);
        let later: Vec<u32> = (2..=5)
            .map(|p| table.issue(addr(p), t0 + Duration::from_millis(u64::from(p))))
            .collect();
        assert!(!table.redeem(addr(1), first, t0 + Duration::from_millis(10)));
        assert!(table.redeem(addr(2), later[0], t0 + Duration::from_millis(10)));
        assert!(!table.redeem(addr(2), later[0], t0 + Duration::from_millis(10)));
    }
}
