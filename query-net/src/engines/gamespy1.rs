//! GameSpy v1: the status client and the responder.
//!
//! # Client ([`client`], [`GameSpy1Session`])
//!
//! Sends [`Options::gamespy_request`] (`\status\` by default) and feeds every datagram from the
//! server to the specs' [`Reassembly`]: parts in any order, duplicates, `\final\` before or
//! after `\queryid\`, all work. The query finishes as soon as every part up to the one with
//! `\final\` is in. The request decides what comes back: [`Options::players`] and
//! [`Options::rules`] do not apply here (ask `\info\` for the server fields alone).
//!
//! - Nothing at all arrived: the request is sent again after each timeout, and when the
//!   attempts run out the query fails with a timeout (or with the decode error of the last
//!   datagram that came but made no sense).
//! - Some parts arrived: the request is not sent again (a new request gets a new query id, whose
//!   parts cannot complete the first). The rest is waited for until the attempt's timeout, or a
//!   little longer while parts are still trickling in; then the status is returned with what
//!   arrived, `complete: false`, and the missing part numbers in `raw.missing_parts`.
//! - Mapping: `hostname` → name, `mapname` → map, `gametype` → game type, `gamever` → version,
//!   `numplayers` / `maxplayers`, `password`; every other server key is a rule (`gamename`,
//!   `hostport` and `gamemode` first, then the rest in arrival order). Players are the first
//!   `numplayers` entries (BF1942 keeps stale ones after them; `raw.stale_players` counts
//!   them), with `frags` or `score`, `ping`, and the team's name when the game lists teams
//!   (numbered from 1 on BF1942; without the team names, the number as sent). A player's keys
//!   may straddle two parts: in an incomplete reply a player may lack some of them, and an
//!   entry whose name was in a lost part is left out (`raw.player_fragments` counts them). Text is decoded with [`Options::encoding`], Windows-1252 by
//!   default (identical to Latin-1 for the bytes real servers send, such as `a0` and `b1`).
//!
//! # Responder ([`GameSpy1Responder`])
//!
//! Answers `\status\` (= basic, info, rules, players), `\basic\`, `\info\`, `\rules\`,
//! `\players\`, `\teams\` and `\echo\<text>`, alone or combined (`\info\\rules\`), always in the
//! order basic, info, rules, players, teams, echo. The reply is split by the specs'
//! [`ReplyDatagrams`] into datagrams of at most 1400 bytes, each with `\queryid\X.Y`, the last
//! with `\final\`; `X` counts up per request. Sections are encoded once per state snapshot and
//! copied into each reply.

use std::borrow::Cow;
use std::net::SocketAddr;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::gamespy1::{
    Player as WirePlayer, Pushed, Reassembly, Reply, ReplyDatagrams, Request, Team as WireTeam,
    ENCODING as REQUEST_ENCODING, FINAL_KEY, MAX_DATAGRAM, MAX_PARTS, QUERYID_KEY,
};
use query_wire::kv::{self, FromKeyValues, KvSink, ToKeyValues};
use query_wire::TextEncoding;
use serde_json::{json, Value};

use super::StatusSession;
use crate::clock::Now;
use crate::engine::{ClientSession, DropReason, ReplySink, Responder, Retry, Verdict};
use crate::engines::fit;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::state::{RuleValue, ServerState, SharedState};
use crate::status::{Player, ServerStatus, Team};

/// The encoding GameSpy v1 text is read and written in unless another is chosen. Declared with
/// the packets, as [`query_specs::gamespy1::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::gamespy1::ENCODING;

/// The request sent when [`Options::gamespy_request`] is empty.
pub const DEFAULT_REQUEST: &str = "\\status\\";

/// Once the attempt's timeout has passed, a reply whose parts are still arriving gets at least
/// this long after the latest one for the next.
const MIN_PART_GAP: Duration = Duration::from_millis(50);

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(GameSpy1Session::new(target, options)))
}

/// A GameSpy v1 status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct GameSpy1Session {
    target: SocketAddr,
    encoding: TextEncoding,
    timeout: Duration,
    retry: Retry,
    parts: Reassembly,
    /// The round trip to the first part; `Some` once anything arrived.
    first_rtt: Option<Duration>,
    /// When the attempt that got the first part timed out.
    attempt_end: Option<Instant>,
    /// Once a part arrived: when to stop waiting for the rest.
    rest_until: Option<Instant>,
    /// The latest datagram from the server that was not a reply part.
    malformed: Option<query_wire::Error>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
}

impl GameSpy1Session {
    /// A query of `target` with `options` (request, timeout, retries, encoding).
    pub fn new(target: SocketAddr, options: &Options) -> Self {
        let encoding = options.encoding_or(DEFAULT_ENCODING);
        let request = match options.gamespy_request.as_str() {
            "" => DEFAULT_REQUEST,
            request => request,
        };
        let mut retry = Retry::from_options(options);
        retry.start("status request", &encoding.encode_lossy(request));
        GameSpy1Session {
            target,
            encoding,
            timeout: options.timeout,
            retry,
            parts: Reassembly::new(),
            first_rtt: None,
            attempt_end: None,
            rest_until: None,
            malformed: None,
            result: None,
            finished: false,
        }
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>, now: Instant) {
        self.retry.finish(now);
        self.result = Some(result);
        self.finished = true;
    }

    /// The status from the parts that arrived.
    fn status(&self) -> Result<ServerStatus, QueryError> {
        let assembled = self.parts.reply_with(self.encoding)?;
        let reply = &assembled.reply;
        let current = reply.current_players();

        // A player's keys may straddle two parts: in an incomplete reply, an entry without
        // its name is the tail of a player whose head was lost, not a player.
        let is_fragment = |p: &&WirePlayer<'_>| !assembled.complete && p.name.is_none();
        let fragments = current.iter().filter(is_fragment).count();
        let players = current
            .iter()
            .filter(|p| !is_fragment(p))
            .map(|p| {
                let team = reply
                    .team_of(p)
                    .and_then(|t| t.name.as_deref())
                    .map(str::to_owned)
                    .or_else(|| p.team.as_deref().map(|t| t.trim().to_owned()));
                let mut extra = IndexMap::new();
                if let Some(kills) = p.kills {
                    extra.insert("kills".to_owned(), kills.to_string());
                }
                if let Some(deaths) = p.deaths {
                    extra.insert("deaths".to_owned(), deaths.to_string());
                }
                for (key, value) in &p.extra {
                    extra.insert(key.to_string(), value.to_string());
                }
                Player {
                    name: p.name.as_deref().unwrap_or_default().to_owned(),
                    score: p.score.map(i64::from),
                    ping: p.ping,
                    team,
                    extra,
                    ..Player::default()
                }
            })
            .collect();

        let teams = reply
            .teams
            .iter()
            .map(|t| {
                let mut score = None;
                let mut extra = IndexMap::new();
                for (key, value) in &t.extra {
                    let parsed = value.trim().parse::<i64>().ok();
                    if score.is_none()
                        && matches!(&**key, "teamscore" | "score")
                        && parsed.is_some()
                    {
                        score = parsed;
                    } else {
                        extra.insert(key.to_string(), value.to_string());
                    }
                }
                Team {
                    name: t.name.as_deref().unwrap_or_default().to_owned(),
                    score,
                    extra,
                }
            })
            .collect();

        let mut rules = IndexMap::new();
        let fields = [
            ("gamename", reply.game_name.as_deref().map(Cow::Borrowed)),
            (
                "hostport",
                reply.host_port.map(|p| Cow::Owned(p.to_string())),
            ),
            ("gamemode", reply.game_mode.as_deref().map(Cow::Borrowed)),
        ];
        for (key, value) in fields {
            if let Some(value) = value {
                rules.insert(key.to_owned(), value.into_owned());
            }
        }
        // A key sent twice keeps its first position and takes its last value, as other
        // clients report it (BF1942 repeats `active_mods`).
        for (key, value) in &reply.rules {
            rules.insert(key.to_string(), value.to_string());
        }

        let mut raw = json!({
            "query_id": assembled.query_id,
            "parts_received": self.parts.parts_received(),
            "total_parts": self.parts.total_parts(),
            "missing_parts": assembled.missing_parts,
            "stale_players": reply.stale_players().len(),
            "player_fragments": fragments,
            "encoding": self.encoding.name(),
        });
        if let Some(echo) = &reply.echo {
            raw["echo"] = Value::from(echo.as_ref());
        }

        let owned = |s: &Option<Cow<'_, str>>| s.as_deref().map(str::to_owned);
        Ok(ServerStatus {
            protocol: Protocol::GameSpy1,
            address: self.target,
            name: owned(&reply.hostname).unwrap_or_default(),
            map: owned(&reply.map_name),
            game_type: owned(&reply.game_type),
            version: owned(&reply.game_version),
            num_players: reply
                .num_players
                .unwrap_or_else(|| u32::try_from(current.len()).unwrap_or(u32::MAX)),
            max_players: reply.max_players.unwrap_or(0),
            password: reply.password,
            players,
            teams,
            rules,
            ping_ms: self.first_rtt.unwrap_or_default().as_secs_f64() * 1000.0,
            complete: assembled.complete,
            raw,
        })
    }
}

impl ClientSession for GameSpy1Session {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.finished {
            return None;
        }
        self.retry.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.finished {
            return;
        }
        match self.parts.push(datagram) {
            Ok(Pushed::New) => {}
            Ok(Pushed::Duplicate | Pushed::OtherQuery) => return,
            Err(error) => {
                self.malformed = Some(error);
                return;
            }
        }
        if self.first_rtt.is_none() {
            // The first part: stop resending, a new request would get a new query id.
            self.attempt_end = self.retry.poll_timeout();
            self.first_rtt = Some(self.retry.finish(now).unwrap_or_default());
        }
        if self.parts.is_complete() {
            let status = self.status();
            self.finish(status, now);
            return;
        }
        let gap = self
            .first_rtt
            .unwrap_or_default()
            .saturating_mul(4)
            .max(MIN_PART_GAP)
            .min(self.timeout.max(MIN_PART_GAP));
        let attempt_end = self.attempt_end.unwrap_or(now);
        self.rest_until = Some(attempt_end.max(now + gap));
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            None
        } else if self.first_rtt.is_some() {
            self.rest_until
        } else {
            self.retry.poll_timeout()
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        if self.first_rtt.is_none() {
            if let Err(timeout) = self.retry.handle_timeout(now) {
                let error = self.malformed.take().map_or(timeout, QueryError::Malformed);
                self.finish(Err(error), now);
            }
        } else if self.rest_until.is_some_and(|until| now >= until) {
            let status = self.status();
            self.finish(status, now);
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }
}

/// How a [`GameSpy1Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameSpy1Config {
    /// `gamename` in the basic section (`ut`, `bfield1942`, ...); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire; characters it cannot represent, and the
    /// backslash the format cannot carry, are sent as `?`.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for GameSpy1Config {
    /// No game name, Windows-1252, 1400-byte datagrams.
    fn default() -> Self {
        GameSpy1Config {
            game_name: String::new(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Requests longer than this are dropped as malformed; real ones are a few dozen bytes.
pub const MAX_REQUEST: usize = 1024;
/// Keys and values are cut to this many bytes: every pair then fits one datagram.
const MAX_TEXT: usize = 255;
/// Rules stop being added once the section is this large, and players once theirs is: with
/// 1400-byte datagrams a reply stays well under the 64 parts a client accepts.
const MAX_RULES_BYTES: usize = 12 * 1024;
const MAX_PLAYERS_BYTES: usize = 32 * 1024;
const MAX_TEAMS_BYTES: usize = 2 * 1024;

/// Answers GameSpy v1 queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Facing Worlds".into(), ..ServerState::default() });
/// let config = GameSpy1Config { game_name: "ut".into(), ..GameSpy1Config::default() };
/// let mut service = Service::new(GameSpy1Responder::new(state, config)).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\\info\\").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\\hostname\\Facing Worlds\\numplayers\\0\\maxplayers\\0\\queryid\\1.1\\final\\".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct GameSpy1Responder {
    state: SharedState,
    config: GameSpy1Config,
    sections: Option<Sections>,
    /// The reply being sent, reused from request to request.
    payload: Vec<u8>,
    next_query_id: u32,
}

/// What a request asks for.
#[derive(Debug, Default)]
struct Wanted<'d> {
    basic: bool,
    info: bool,
    rules: bool,
    players: bool,
    teams: bool,
    echo: Option<&'d [u8]>,
}

impl<'d> Wanted<'d> {
    /// Reads every query of a request datagram; `None` when it is not a request.
    fn parse(datagram: &'d [u8]) -> Option<Self> {
        if datagram.is_empty() || datagram.len() > MAX_REQUEST {
            return None;
        }
        let mut wanted = Wanted::default();
        for pair in kv::pairs(datagram) {
            let pair = pair.ok()?;
            let query =
                Request::from_pairs(std::slice::from_ref(&pair), None, REQUEST_ENCODING).ok()?;
            match query {
                Request::Status | Request::StatusXServerQuery => {
                    wanted.basic = true;
                    wanted.info = true;
                    wanted.rules = true;
                    wanted.players = true;
                }
                Request::Basic => wanted.basic = true,
                Request::Info => wanted.info = true,
                Request::Rules => wanted.rules = true,
                Request::Players => wanted.players = true,
                Request::Teams => wanted.teams = true,
                // Echoed as the bytes came, whatever their encoding.
                Request::Echo(_) => wanted.echo = Some(pair.value),
                Request::Other(..) => {}
            }
        }
        Some(wanted)
    }

    fn anything(&self) -> bool {
        self.basic || self.info || self.rules || self.players || self.teams || self.echo.is_some()
    }
}

impl GameSpy1Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: GameSpy1Config) -> Self {
        GameSpy1Responder {
            state,
            config,
            sections: None,
            payload: Vec::new(),
            next_query_id: 1,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &GameSpy1Config {
        &self.config
    }

    /// The query id the next reply carries.
    pub fn next_query_id(&self) -> u32 {
        self.next_query_id
    }

    /// Brings the encoded sections up to date with the state.
    fn refresh(&mut self) -> Result<(), query_wire::Error> {
        let current = self.state.load();
        if matches!(&self.sections, Some(s) if Arc::ptr_eq(&s.snapshot, &current)) {
            return Ok(());
        }
        let buffer = self.sections.take().map(|s| s.bytes).unwrap_or_default();
        self.sections = Some(Sections::build(Arc::clone(&current), &self.config, buffer)?);
        Ok(())
    }
}

impl Responder for GameSpy1Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Some(wanted) = Wanted::parse(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        if !wanted.anything() {
            return Verdict::Dropped(DropReason::Unsupported);
        }
        if self.refresh().is_err() {
            return Verdict::Dropped(DropReason::Unsupported);
        }
        let Some(sections) = &self.sections else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        if sections.compose(&wanted, &mut self.payload).is_err() {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let max = self.config.max_datagram.min(replies.max_datagram());
        let query_id = self.next_query_id;
        loop {
            let Ok(datagrams) = ReplyDatagrams::new(&self.payload, query_id, max) else {
                return Verdict::Dropped(DropReason::Unsupported);
            };
            let parts = datagrams.len();
            if parts > MAX_PARTS as usize {
                // Clients refuse part numbers above MAX_PARTS (only small datagram caps get
                // here): send what fits, cut between pairs.
                let keep = self.payload.len() * (MAX_PARTS as usize) / parts * 9 / 10;
                cut_between_pairs(&mut self.payload, keep);
                continue;
            }
            self.next_query_id = query_id.wrapping_add(1);
            for i in 0..parts {
                if replies.push_with(|buf| datagrams.write(i, buf)).is_err() {
                    return Verdict::Dropped(DropReason::Unsupported);
                }
            }
            return Verdict::Answered;
        }
    }
}

/// Shortens `payload` to its pairs that end within `max_len` bytes.
fn cut_between_pairs(payload: &mut Vec<u8>, max_len: usize) {
    let end = kv::pairs(payload)
        .map_while(Result::ok)
        .map(|pair| pair.end_offset())
        .take_while(|&end| end <= max_len)
        .last()
        .unwrap_or(0);
    payload.truncate(end);
}

/// The encoded pairs of each reply section for one state snapshot, back to back.
#[derive(Debug)]
struct Sections {
    /// Held so that the pointer compared against stays this snapshot's.
    snapshot: Arc<ServerState>,
    bytes: Vec<u8>,
    basic: Range<usize>,
    info: Range<usize>,
    rules: Range<usize>,
    players: Range<usize>,
    teams: Range<usize>,
}

impl Sections {
    fn build(
        snapshot: Arc<ServerState>,
        config: &GameSpy1Config,
        mut bytes: Vec<u8>,
    ) -> Result<Self, query_wire::Error> {
        bytes.clear();
        let state = &*snapshot;
        let encoding = config.encoding;
        let text = |s| kv_text(s, encoding);

        let start = bytes.len();
        Reply {
            game_name: non_empty(&config.game_name, encoding),
            game_version: non_empty(&state.version, encoding),
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let basic = start..bytes.len();

        let start = bytes.len();
        Reply {
            hostname: Some(text(&state.name)),
            host_port: (state.port != 0).then_some(state.port),
            map_name: non_empty(&state.map, encoding),
            game_type: non_empty(&state.game_type, encoding),
            num_players: Some(state.num_players()),
            max_players: Some(state.max_players),
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let info = start..bytes.len();

        let start = bytes.len();
        let mut rules = Vec::with_capacity(state.rules.len());
        let mut rules_len = 0;
        for (key, value) in &state.rules {
            let key = text(key);
            if !is_free_rule_key(&key) {
                continue;
            }
            let value = match value {
                RuleValue::Text(t) => text(t),
                other => Cow::Owned(kv_text(&other.to_string(), encoding).into_owned()),
            };
            rules_len += kv::pair_len(key.as_bytes(), None, value.as_bytes());
            if rules_len > MAX_RULES_BYTES {
                break;
            }
            rules.push((key, value));
        }
        Reply {
            password: Some(state.password),
            rules,
            ..Reply::default()
        }
        .write_pairs(&mut bytes, None, encoding)?;
        let rules = start..bytes.len();

        let start = bytes.len();
        for (index, p) in state.players.iter().enumerate() {
            let team = p.team.as_deref().map(|name| {
                // A team the state lists goes by its number, which `teamname_N` resolves.
                match state.teams.iter().position(|t| t.name == name) {
                    Some(number) => Cow::Owned(number.to_string()),
                    None => text(name),
                }
            });
            let before = bytes.len();
            WirePlayer {
                index,
                name: Some(text(&p.name)),
                score: Some(fit::saturate_i32(p.score)),
                ping: Some(p.ping),
                team,
                ..WirePlayer::default()
            }
            .write_pairs(&mut bytes, Some(index), encoding)?;
            if bytes.len() - start > MAX_PLAYERS_BYTES {
                bytes.truncate(before);
                break;
            }
        }
        let players = start..bytes.len();

        let start = bytes.len();
        for (index, t) in state.teams.iter().enumerate() {
            let before = bytes.len();
            WireTeam {
                index,
                name: Some(text(&t.name)),
                extra: vec![("teamscore".into(), t.score.to_string().into())],
            }
            .write_pairs(&mut bytes, Some(index), encoding)?;
            if bytes.len() - start > MAX_TEAMS_BYTES {
                bytes.truncate(before);
                break;
            }
        }
        let teams = start..bytes.len();

        Ok(Sections {
            snapshot,
            bytes,
            basic,
            info,
            rules,
            players,
            teams,
        })
    }

    /// Writes the sections `wanted` asks for, in the order servers send them, into `payload`.
    fn compose(&self, wanted: &Wanted<'_>, payload: &mut Vec<u8>) -> Result<(), query_wire::Error> {
        payload.clear();
        let sections = [
            (wanted.basic, &self.basic),
            (wanted.info, &self.info),
            (wanted.rules, &self.rules),
            (wanted.players, &self.players),
            (wanted.players || wanted.teams, &self.teams),
        ];
        for (wanted, range) in sections {
            if wanted {
                payload.extend_from_slice(&self.bytes[range.clone()]);
            }
        }
        if let Some(echo) = wanted.echo {
            payload.put_pair(b"echo", None, echo)?;
        }
        Ok(())
    }
}

/// Whether a state rule can go out under `key` and come back as a rule: not empty, not a
/// key the reply declares (`hostname`, ...) or the part markers, and not indexed like
/// `player_3`, which a client would file under a player.
fn is_free_rule_key(key: &str) -> bool {
    let key = key.as_bytes();
    !key.is_empty()
        && key != QUERYID_KEY
        && key != FINAL_KEY
        && !<Reply<'_> as FromKeyValues<'_>>::declares_key(key)
        && kv::split_index(key).is_none()
}

/// `text` as it can go on the wire in `encoding`: the backslash (the format's delimiter) and
/// characters the encoding cannot represent become `?`, and it is cut to [`MAX_TEXT`] bytes.
fn kv_text(text: &str, encoding: TextEncoding) -> Cow<'_, str> {
    let text = fit::cut(text, encoding, MAX_TEXT);
    let fits = |c: char| {
        c != '\\' && (c.is_ascii() || encoding.encode(c.encode_utf8(&mut [0; 4])).is_some())
    };
    if text.chars().all(fits) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(
            text.chars()
                .map(|c| if fits(c) { c } else { '?' })
                .collect(),
        )
    }
}

/// [`kv_text`], or `None` for an empty text, which is not sent.
fn non_empty(text: &str, encoding: TextEncoding) -> Option<Cow<'_, str>> {
    (!text.is_empty()).then(|| kv_text(text, encoding))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_loses_backslashes_and_unmappable_characters_and_is_cut() {
        assert_eq!(kv_text("a\\b", DEFAULT_ENCODING), "a?b");
        assert_eq!(kv_text("Jürgen Ж", DEFAULT_ENCODING), "Jürgen ?");
        assert!(matches!(kv_text("Åsa", DEFAULT_ENCODING), Cow::Borrowed(_)));
        assert_eq!(
            kv_text(&"é".repeat(300), DEFAULT_ENCODING).chars().count(),
            255
        );
        assert_eq!(kv_text(&"é".repeat(300), TextEncoding::Utf8).len(), 254);
    }

    #[test]
    fn rule_keys_that_would_come_back_as_something_else_are_refused() {
        for key in [
            "",
            "hostname",
            "numplayers",
            "queryid",
            "final",
            "player_3",
            "teamname_0",
        ] {
            assert!(!is_free_rule_key(key), "{key}");
        }
        for key in ["timelimit", "sv_punkbuster", "tickets1", "AdminName"] {
            assert!(is_free_rule_key(key), "{key}");
        }
    }

    #[test]
    fn requests_combine_and_unknown_ones_are_ignored() {
        let w = Wanted::parse(b"\\rules\\\\info\\\\ison\\x\\echo\\hi").unwrap();
        assert!(w.info && w.rules && !w.basic && !w.players && !w.teams);
        assert_eq!(w.echo, Some(&b"hi"[..]));
        let w = Wanted::parse(b"\\status\\xserverquery").unwrap();
        assert!(w.basic && w.info && w.rules && w.players);
        assert!(!Wanted::parse(b"\\ison\\x").unwrap().anything());
        assert!(Wanted::parse(b"").is_none());
        assert!(Wanted::parse(b"status").is_none());
        assert!(Wanted::parse(b"\\status\\\\info").is_none());
        assert!(Wanted::parse(&[b'\\'; MAX_REQUEST + 1]).is_none());
    }
}
