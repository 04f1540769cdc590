//! The SQP server side: challenges bound to the source, and query responses encoded through
//! the declared views straight from the borrowed state.

use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::sqp::{
    ChallengeResponse, ChunkSet, ChunksView, FieldHeader, Metrics, QueryResponseView, Request,
    Response, ResponseView, RuleView, ServerInfo, TableView, Value, MAX_STRING, VERSION,
};
use query_wire::{items, Decode, Encode, Items};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};

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
/// - The reply is the declared [`ResponseView`], its lists made from the borrowed state as the
///   encoder asks for them, without allocating. Strings longer than 255 bytes are cut at a
///   character boundary. Rules are typed: a bool as a byte 0/1, an integer as u32 (u64 above
///   u32::MAX, text when negative), a float as f32, text as a string. The player table has the
///   columns `name` (string), `score` (u32, or string when a score is negative or too large),
///   `ping` (u16, saturating) and `team` (string, only when some player has a team); the team
///   table has `name` and `score`. A requested Metrics chunk carries the state's `metrics`
///   (the first [`MAX_METRICS`](query_specs::sqp::MAX_METRICS)).
/// - A reply never exceeds the [`ReplySink`]'s datagram size: rules and table rows that do not
///   fit are left out (players past the cut are still counted in ServerInfo), keeping room for
///   every requested chunk. How many fit is worked out once per state snapshot and chunk set,
///   as are the texts of the numbers SQP has no type for.
#[derive(Debug)]
pub struct SqpResponder {
    state: SharedState,
    challenges: ChallengeTable,
    prepared: SnapshotCache<Prepared>,
}

/// What every reply from one state snapshot shares.
#[derive(Debug)]
struct Prepared {
    numbers: NumberTexts,
    /// How many rules and rows fit, by requested chunk set (its bits), once asked for.
    fits: [Option<Fit>; 32],
}

impl Prepared {
    /// For `state`, reusing the buffers of `stale`, prepared for an earlier state.
    fn new(state: &ServerState, stale: Option<Prepared>) -> Self {
        let mut numbers = stale.map(|stale| stale.numbers).unwrap_or_default();
        numbers.fill(state);
        Prepared {
            numbers,
            fits: [None; 32],
        }
    }
}

/// How many rules and table rows a reply carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fit {
    /// The datagram size they were fitted to.
    limit: usize,
    rules: usize,
    player_rows: usize,
    team_rows: usize,
}

impl SqpResponder {
    /// Answers from `state` with the default [`SqpResponderConfig`].
    pub fn new(state: SharedState) -> Self {
        Self::with_config(state, SqpResponderConfig::default())
    }

    /// Answers from `state` with `config`.
    pub fn with_config(state: SharedState, config: SqpResponderConfig) -> Self {
        SqpResponder {
            challenges: ChallengeTable::new(config),
            prepared: SnapshotCache::new(),
            state,
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
                // Only `from` was given this challenge: the source is not spoofed.
                replies.mark_proven();
                let chunks = query.requested & ChunkSet::all();
                let (snapshot, prepared) =
                    self.prepared.get_infallible(&self.state, (), Prepared::new);
                replies.push_with(|buf| {
                    let slot = &mut prepared.fits[usize::from(chunks.bits())];
                    let fit = match *slot {
                        Some(fit) if fit.limit == buf.len() => fit,
                        _ => *slot.insert(fit(snapshot, &prepared.numbers, chunks, buf.len())),
                    };
                    encode_query_response(
                        buf,
                        snapshot,
                        &prepared.numbers,
                        query.challenge,
                        chunks,
                        fit,
                    )
                })
            }
        };
        // Only a datagram cap smaller than the requested chunks' headers gets here.
        Verdict::pushed(pushed)
    }
}

/// A table view with no rows, the shape every table has before its rows are counted in.
type EmptyTable<'a> = TableView<&'a [FieldHeader<'a>], &'a [Value<'a>]>;

/// The Metrics chunk of `state`: its first [`MAX_METRICS`](query_specs::sqp::MAX_METRICS)
/// values (an allocation only when the state has metrics and a client asks for them).
fn metrics(state: &ServerState) -> Metrics {
    let count = state.metrics.len().min(query_specs::sqp::MAX_METRICS);
    Metrics {
        values: state.metrics[..count].to_vec(),
    }
}

fn empty_table<'a>() -> EmptyTable<'a> {
    TableView {
        fields: None,
        values: &[],
    }
}

/// How many rules and rows fit in a datagram of `datagram` bytes (and in the packet's u16
/// length) after the room every requested chunk needs empty.
fn fit(state: &ServerState, numbers: &NumberTexts, chunks: ChunkSet, datagram: usize) -> Fit {
    let wants = |chunk| chunks.contains(chunk);
    let skeleton = query_reply(
        0,
        ChunksView {
            server_info: wants(ChunkSet::SERVER_INFO).then(|| server_info(state)),
            server_rules: wants(ChunkSet::SERVER_RULES).then_some(&[] as &[RuleView<'_>]),
            player_info: wants(ChunkSet::PLAYER_INFO).then(empty_table),
            team_info: wants(ChunkSet::TEAM_INFO).then(empty_table),
            metrics: wants(ChunkSet::METRICS).then(|| metrics(state)),
        },
    );
    let header = query_reply(
        0,
        ChunksView {
            server_info: None,
            server_rules: None::<&[RuleView<'_>]>,
            player_info: None::<EmptyTable<'_>>,
            team_info: None::<EmptyTable<'_>>,
            metrics: None,
        },
    )
    .encoded_len(ChunkSet::empty());
    let limit = datagram.min(header + usize::from(u16::MAX));
    let mut budget = Budget {
        left: limit.saturating_sub(skeleton.encoded_len(chunks)),
    };
    let rules = if wants(ChunkSet::SERVER_RULES) {
        budget.take_leading(state.rules.len(), |i| {
            rule(state, numbers, i).map_or(0, |r| r.encoded_len(()))
        })
    } else {
        0
    };
    let player_rows = if wants(ChunkSet::PLAYER_INFO) {
        PlayerTable::new(&state.players, numbers).fitting(&mut budget)
    } else {
        0
    };
    let team_rows = if wants(ChunkSet::TEAM_INFO) {
        TeamTable::new(&state.teams, numbers).fitting(&mut budget)
    } else {
        0
    };
    Fit {
        limit: datagram,
        rules,
        player_rows,
        team_rows,
    }
}

/// Encodes the query response into `buf`: every requested chunk, with the rules and rows
/// `fit` found room for.
fn encode_query_response(
    buf: &mut [u8],
    state: &ServerState,
    numbers: &NumberTexts,
    challenge: u32,
    chunks: ChunkSet,
    fit: Fit,
) -> Result<usize, query_wire::Error> {
    let wants = |chunk| chunks.contains(chunk);
    let players = PlayerTable::new(&state.players, numbers);
    let teams = TeamTable::new(&state.teams, numbers);
    let response = query_reply(
        challenge,
        ChunksView {
            server_info: wants(ChunkSet::SERVER_INFO).then(|| server_info(state)),
            server_rules: wants(ChunkSet::SERVER_RULES).then(|| {
                items::from_fn(fit.rules, |i| {
                    rule(state, numbers, i).unwrap_or(RuleView {
                        key: "",
                        value: Value::Byte(0),
                    })
                })
            }),
            player_info: wants(ChunkSet::PLAYER_INFO).then(|| players.view(fit.player_rows)),
            team_info: wants(ChunkSet::TEAM_INFO).then(|| teams.view(fit.team_rows)),
            metrics: wants(ChunkSet::METRICS).then(|| metrics(state)),
        },
    );
    response.encode_into_with(buf, chunks)
}

/// A one-datagram query response carrying `chunks`.
fn query_reply<C>(challenge: u32, chunks: C) -> ResponseView<QueryResponseView<C>> {
    ResponseView::Query(QueryResponseView {
        challenge,
        version: VERSION,
        current_packet: 0,
        last_packet: 0,
        chunks,
    })
}

/// The bytes left for rules and rows.
struct Budget {
    left: usize,
}

impl Budget {
    /// How many of the first `count` items fit, item `i` taking `size(i)` bytes; takes them.
    fn take_leading(&mut self, count: usize, size: impl Fn(usize) -> usize) -> usize {
        let mut taken = 0;
        for i in 0..count {
            let needed = size(i);
            if needed > self.left {
                break;
            }
            self.left -= needed;
            taken += 1;
        }
        taken
    }

    /// Takes `bytes` if they fit.
    fn take(&mut self, bytes: usize) -> bool {
        let fits = bytes <= self.left;
        if fits {
            self.left -= bytes;
        }
        fits
    }
}

fn server_info(state: &ServerState) -> ServerInfo<'_> {
    ServerInfo {
        current_players: fit::saturate_u16(state.num_players()),
        max_players: fit::saturate_u16(state.max_players),
        server_name: short(&state.name),
        game_type: short(&state.game_type),
        build_id: short(&state.version),
        map: short(&state.map),
        port: state.port,
    }
}

/// Rule `index` of the state, typed.
#[inline]
fn rule<'s>(
    state: &'s ServerState,
    numbers: &'s NumberTexts,
    index: usize,
) -> Option<RuleView<'s>> {
    let (key, value) = state.rules.get_index(index)?;
    Some(RuleView {
        key: short(key),
        value: rule_value(value, || numbers.rules.get(index)),
    })
}

/// A rule's value; `digits` gives its text when it is a negative integer (looked up only then).
#[inline]
fn rule_value<'s>(value: &'s RuleValue, digits: impl FnOnce() -> &'s str) -> Value<'s> {
    match value {
        RuleValue::Bool(b) => Value::Byte(u8::from(*b)),
        RuleValue::Integer(i) => match (u32::try_from(*i), u64::try_from(*i)) {
            (Ok(small), _) => Value::U32(small),
            (_, Ok(large)) => Value::U64(large),
            _ => Value::Str(digits()),
        },
        // SQP's only float is f32: the nearest f32 is sent.
        RuleValue::Float(x) => Value::F32(*x as f32),
        RuleValue::Text(text) => Value::Str(short(text)),
    }
}

/// A score as a table's score column carries it: u32, or text (from `digits`, looked up only
/// then) when any score of the table does not fit a u32.
#[inline]
fn score_value<'s>(score: i64, as_text: bool, digits: impl FnOnce() -> &'s str) -> Value<'s> {
    match u32::try_from(score) {
        Ok(score) if !as_text => Value::U32(score),
        _ => Value::Str(digits()),
    }
}

fn scores_need_text(mut scores: impl Iterator<Item = i64>) -> bool {
    scores.any(|s| u32::try_from(s).is_err())
}

/// A u8-length SQP string from `text`.
fn short(text: &str) -> &str {
    fit::cut_utf8(text, MAX_STRING)
}

/// The columns and cells of the player table.
struct PlayerTable<'s> {
    players: &'s [PlayerState],
    numbers: &'s NumberTexts,
    score_as_text: bool,
    columns: [FieldHeader<'static>; 4],
    width: usize,
}

impl<'s> PlayerTable<'s> {
    fn new(players: &'s [PlayerState], numbers: &'s NumberTexts) -> Self {
        let score_as_text = numbers.player_scores_as_text;
        let with_team = players.iter().any(|p| p.team.is_some());
        let score_kind = score_value(0, score_as_text, || "").tag();
        PlayerTable {
            players,
            numbers,
            score_as_text,
            columns: [
                column("name", Value::Str("")),
                FieldHeader {
                    name: "score",
                    kind: score_kind,
                },
                column("ping", Value::U16(0)),
                column("team", Value::Str("")),
            ],
            width: if with_team { 4 } else { 3 },
        }
    }

    /// Cell `col` of row `row`.
    #[inline]
    fn cell(&self, row: usize, col: usize) -> Value<'s> {
        let player = &self.players[row];
        match col {
            0 => Value::Str(short(&player.name)),
            1 => score_value(player.score, self.score_as_text, || {
                self.numbers.player_scores.get(row)
            }),
            2 => Value::U16(fit::saturate_u16(player.ping)),
            _ => Value::Str(short(player.team.as_deref().unwrap_or(""))),
        }
    }

    /// How many leading rows fit in `budget` (at most `u16::MAX`), taking their bytes and
    /// the column headers' when there is at least one.
    fn fitting(&self, budget: &mut Budget) -> usize {
        let rows = self.players.len().min(usize::from(u16::MAX));
        let row_size = |row: usize| {
            (0..self.width)
                .map(|col| {
                    let cell = self.cell(row, col);
                    cell.encoded_len(cell.tag())
                })
                .sum()
        };
        fit_rows(budget, &self.columns[..self.width], rows, row_size)
    }

    fn view(
        &self,
        rows: usize,
    ) -> TableView<&[FieldHeader<'static>], impl Items<Item = Value<'s>> + '_> {
        let width = self.width;
        TableView {
            fields: (rows > 0).then_some(&self.columns[..width]),
            values: items::cells(rows, width, move |row, col| self.cell(row, col)),
        }
    }
}

/// The columns and cells of the team table.
struct TeamTable<'s> {
    teams: &'s [TeamState],
    numbers: &'s NumberTexts,
    score_as_text: bool,
    columns: [FieldHeader<'static>; 2],
}

impl<'s> TeamTable<'s> {
    fn new(teams: &'s [TeamState], numbers: &'s NumberTexts) -> Self {
        let score_as_text = numbers.team_scores_as_text;
        TeamTable {
            teams,
            numbers,
            score_as_text,
            columns: [
                column("name", Value::Str("")),
                FieldHeader {
                    name: "score",
                    kind: score_value(0, score_as_text, || "").tag(),
                },
            ],
        }
    }

    #[inline]
    fn cell(&self, row: usize, col: usize) -> Value<'s> {
        let team = &self.teams[row];
        match col {
            0 => Value::Str(short(&team.name)),
            _ => score_value(team.score, self.score_as_text, || {
                self.numbers.team_scores.get(row)
            }),
        }
    }

    fn fitting(&self, budget: &mut Budget) -> usize {
        let rows = self.teams.len().min(usize::from(u16::MAX));
        let row_size = |row: usize| {
            (0..2)
                .map(|col| {
                    let cell = self.cell(row, col);
                    cell.encoded_len(cell.tag())
                })
                .sum()
        };
        fit_rows(budget, &self.columns, rows, row_size)
    }

    fn view(
        &self,
        rows: usize,
    ) -> TableView<&[FieldHeader<'static>], impl Items<Item = Value<'s>> + '_> {
        TableView {
            fields: (rows > 0).then_some(&self.columns[..]),
            values: items::cells(rows, 2, move |row, col| self.cell(row, col)),
        }
    }
}

/// A column typed like `sample`.
fn column(name: &'static str, sample: Value<'_>) -> FieldHeader<'static> {
    FieldHeader {
        name,
        kind: sample.tag(),
    }
}

/// How many of `rows` rows fit in `budget`: the column headers are paid once, with the first
/// row.
fn fit_rows(
    budget: &mut Budget,
    columns: &[FieldHeader<'_>],
    rows: usize,
    row_size: impl Fn(usize) -> usize,
) -> usize {
    let with_columns = TableView {
        fields: Some(columns),
        values: &[] as &[Value<'_>],
    };
    let columns_size = with_columns
        .encoded_len(())
        .saturating_sub(empty_table().encoded_len(()));
    if rows == 0 || !budget.take(columns_size + row_size(0)) {
        return 0;
    }
    1 + budget.take_leading(rows - 1, |i| row_size(i + 1))
}

/// Decimal text of the numbers SQP has no type for (negative, or too large for the column),
/// written once per reply into buffers the responder keeps: values borrow it, and once the
/// buffers have grown no reply allocates.
#[derive(Debug, Default)]
struct NumberTexts {
    rules: Digits,
    player_scores: Digits,
    team_scores: Digits,
    /// Whether some player's score does not fit a u32, so the column is text.
    player_scores_as_text: bool,
    /// The same for teams.
    team_scores_as_text: bool,
}

impl NumberTexts {
    /// Writes the texts `state` needs, in the order of its rules, players and teams. Most
    /// states need none, and then nothing is written.
    fn fill(&mut self, state: &ServerState) {
        self.rules
            .fill(state.rules.values().map(|value| match value {
                RuleValue::Integer(i) if *i < 0 => Some(*i),
                _ => None,
            }));
        let player_text = scores_need_text(state.players.iter().map(|p| p.score));
        self.player_scores_as_text = player_text;
        self.player_scores
            .fill(state.players.iter().map(|p| player_text.then_some(p.score)));
        let team_text = scores_need_text(state.teams.iter().map(|t| t.score));
        self.team_scores_as_text = team_text;
        self.team_scores
            .fill(state.teams.iter().map(|t| team_text.then_some(t.score)));
    }
}

/// Numbers' decimal text, one after the other in one string.
#[derive(Debug, Default)]
struct Digits {
    text: String,
    /// `ends[i]` is where number `i`'s text ends in `text`.
    ends: Vec<usize>,
}

impl Digits {
    fn clear(&mut self) {
        self.text.clear();
        self.ends.clear();
    }

    /// Replaces the numbers with `values`' texts; when none has one, nothing is stored.
    fn fill(&mut self, values: impl Iterator<Item = Option<i64>> + Clone) {
        self.clear();
        if values.clone().any(|v| v.is_some()) {
            for value in values {
                self.push(value);
            }
        }
    }

    /// Appends `value`'s text (nothing for `None`).
    fn push(&mut self, value: Option<i64>) {
        if let Some(value) = value {
            // Writing into a String cannot fail.
            let _ = write!(self.text, "{value}");
        }
        self.ends.push(self.text.len());
    }

    /// Number `index`'s text, empty when there is none.
    fn get(&self, index: usize) -> &str {
        let end = self.ends.get(index).copied().unwrap_or(0);
        let start = index
            .checked_sub(1)
            .and_then(|i| self.ends.get(i))
            .copied()
            .unwrap_or(0)
            .min(end);
        self.text.get(start..end).unwrap_or("")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::Service;
    use query_specs::sqp::QueryRequest;

    #[test]
    fn digits_keep_each_number_apart() {
        let mut digits = Digits::default();
        digits.push(Some(i64::MIN));
        digits.push(None);
        digits.push(Some(-7));
        assert_eq!(digits.get(0), "-9223372036854775808");
        assert_eq!(digits.get(1), "");
        assert_eq!(digits.get(2), "-7");
        assert_eq!(digits.get(3), "");
        digits.clear();
        assert_eq!(digits.get(0), "");
    }

    #[test]
    fn rule_values_are_typed() {
        assert_eq!(rule_value(&RuleValue::Bool(true), || ""), Value::Byte(1));
        assert_eq!(rule_value(&RuleValue::Integer(7), || ""), Value::U32(7));
        assert_eq!(
            rule_value(&RuleValue::Integer(1 << 40), || ""),
            Value::U64(1 << 40)
        );
        assert_eq!(
            rule_value(&RuleValue::Integer(-5), || "-5"),
            Value::Str("-5")
        );
        assert_eq!(rule_value(&RuleValue::Float(0.5), || ""), Value::F32(0.5));
    }

    /// The player table of a full query answered from `service`'s state.
    fn players_answered(service: &mut Service<SqpResponder>) -> (u16, Vec<String>) {
        let from = SocketAddr::from(([192, 0, 2, 1], 5000));
        let challenge = service.handle(from, &[0; 5]).next().map(<[u8]>::to_vec);
        let challenge = match Response::from_bytes_with(&challenge.unwrap(), ChunkSet::empty()) {
            Ok(Response::Challenge(c)) => c.challenge,
            other => panic!("not a challenge: {other:?}"),
        };
        let request = Request::Query(QueryRequest {
            challenge,
            version: VERSION,
            requested: ChunkSet::PLAYER_INFO,
        })
        .to_vec()
        .unwrap();
        let reply: Vec<u8> = service.handle(from, &request).next().unwrap().to_vec();
        let Ok(Response::Query(query)) = Response::from_bytes_with(&reply, ChunkSet::PLAYER_INFO)
        else {
            panic!("not a query response");
        };
        let table = query.chunks.player_info.unwrap();
        let scores = table.rows().map(|row| format!("{:?}", row[1].1)).collect();
        (table.count, scores)
    }

    #[test]
    fn a_new_state_snapshot_is_fitted_and_numbered_again() {
        let player = |score| PlayerState {
            name: "p".into(),
            score,
            ..PlayerState::default()
        };
        let state = SharedState::new(ServerState {
            players: vec![player(3)],
            ..ServerState::default()
        });
        let mut service = Service::new(SqpResponder::new(state.clone())).rate_limit(None);
        assert_eq!(players_answered(&mut service), (1, vec!["U32(3)".into()]));
        state.store(ServerState {
            players: vec![player(1), player(-2)],
            ..ServerState::default()
        });
        let texts = vec![r#"Str("1")"#.to_owned(), r#"Str("-2")"#.to_owned()];
        assert_eq!(players_answered(&mut service), (2, texts));
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
