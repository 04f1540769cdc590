//! SA:MP and open.mp query: the status client, the RCON client and the responder.
//!
//! # Status client ([`client`], [`SampSession`])
//!
//! `i` (info), `r` (rules) and `d` (detailed players) leave at once, each with its own
//! [`Retry`]: the protocol answers each request on its own, so nothing is gained by waiting for
//! one before asking the next. Nothing else is sent to a SA:MP server, so a target costs three
//! datagrams each way (what `gsq bulk` pays per server). A reply counts only if its 11-byte
//! header is exactly the request's; anything else from the server's address is ignored.
//!
//! - `i` and `r` are required: if either goes unanswered the query fails with a timeout naming
//!   it. A reply with the right header that does not decode is remembered, and reported as
//!   [`QueryError::Malformed`] instead of the timeout if no good reply follows.
//! - Players: `d` first; open.mp has no `d`, and answers the client list `c` instead. `c` is
//!   asked at once when the rules name open.mp (its `version` rule says `open.mp` or starts with
//!   `omp `), when `d` is still unanswered twice the slowest round trip (at least 20 ms) after
//!   `i` and `r` came in (a server answers each at once, so a `d` that lags that far is not
//!   coming), or when `d` runs out of retries. When `i` reports no players, the lists are not
//!   waited for; above 100 a server answers neither, so they are not waited for either. A
//!   missing list is not a failure: the status comes back with an empty player list,
//!   `complete: false`, and `raw.player_list_missing` saying why.
//! - `o` (open.mp's extra information) goes along with `c`, once and without retries, since
//!   only open.mp answers it. Once everything else is in, it gets the same grace period.
//! - `ping_ms` is the fastest round trip of the replies. `p`, the protocol's ping, is not
//!   sent: the server answers `i` as directly as it echoes `p`, so `p` would cost two datagrams
//!   for the same number.
//! - Text is decoded with [`Options::encoding`], Windows-1252 by default. The raw bytes of the
//!   host name, game mode, language, player names and rule values that are not plain ASCII are
//!   kept, as hex, in `raw.text_hex`, so a caller can decode them again in another code page.
//! - `map` is the `mapname` rule, `version` the `version` rule, `game_type` the game mode; the
//!   language and the `i` reply's own numbers are in `raw.info`.
//!
//! # RCON ([`rcon_session`], [`RconSession`])
//!
//! The command is sent once, never repeated, because console commands are not idempotent (a
//! resent `kick` or `gmx` runs twice). An `i` request goes along with it, with the usual
//! retries, to tell a silent command from a silent server. Lines are collected until none has
//! arrived for 300 ms ([`RCON_QUIET`]); "Invalid RCON password." is
//! [`QueryError::AuthRequired`].
//!
//! # Responder ([`SampResponder`])
//!
//! Answers `i`, `r`, `c`, `d` (unless configured like open.mp), `p`, `o` (when configured with
//! open.mp's extra information) and `x` (only with an RCON password), each only at the exact
//! size open.mp checks: 11 bytes, 15 for `p`, a fully parsed `x`. The reply copies the request's
//! header. Replies are encoded once per state snapshot and then copied, so answering allocates
//! nothing. Text is cut to open.mp's limits (see [`MAX_HOSTNAME`]) and to the one-byte lengths
//! of names and rules; a reply that still exceeds the service's datagram cap is not sent.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::samp::{
    Header, Reply, ReplyBody, Request, RequestBody, HEADER_LEN, OP_CLIENTS, OP_EXTRA, OP_INFO,
    OP_PING, OP_PLAYERS, OP_RCON, OP_RULES,
};
use query_wire::{Decode, Text, TextEncoding};
use serde_json::{json, Map, Value};

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

mod rcon;
mod responder;
pub use rcon::{rcon_session, RconSession};
pub use responder::{
    unknown_command, OpenMpInfo, RconHandler, SampConfig, SampResponder, MAX_GAMEMODE,
    MAX_HOSTNAME, MAX_LANGUAGE,
};

/// The encoding SA:MP text is read and written in unless another is chosen: the code page of
/// Western servers. Declared with the packets, as [`query_specs::samp::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::samp::ENCODING;

/// Above this many players, servers answer neither player list.
pub const MAX_LISTED_PLAYERS: u32 = 100;

/// How long an RCON session waits after the latest console line for another.
pub const RCON_QUIET: Duration = Duration::from_millis(300);

/// The console line a server sends for a wrong RCON password.
pub const BAD_RCON_PASSWORD: &str = "Invalid RCON password.";

/// The shortest wait for a lagging `d` before `c` is asked, and for `o` once everything else
/// is in.
const MIN_GRACE: Duration = Duration::from_millis(20);

/// An RCON session keeps at most this many lines, however many a server sends.
const MAX_RCON_LINES: usize = 10_000;

/// A status query of `target`. For an RCON command (console lines, not a status) see
/// [`rcon_session`].
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(SampSession::new(target, options)?))
}

/// The request header for `target`: SA:MP addresses are IPv4, so an IPv6 target that is not a
/// mapped IPv4 address is written as 0.0.0.0 (servers copy the header without checking it).
fn header_for(target: SocketAddr, opcode: u8) -> Header {
    let address = match target.ip().to_canonical() {
        IpAddr::V4(v4) => v4.octets(),
        IpAddr::V6(_) => [0; 4],
    };
    Header {
        address,
        port: target.port(),
        opcode,
    }
}

fn request(target: SocketAddr, body: RequestBody<'_>) -> Request<'_> {
    let opcode = match &body {
        RequestBody::Info => OP_INFO,
        RequestBody::Rules => OP_RULES,
        RequestBody::Clients => OP_CLIENTS,
        RequestBody::Players => OP_PLAYERS,
        RequestBody::Ping(_) => OP_PING,
        RequestBody::Extra => OP_EXTRA,
        RequestBody::Rcon { .. } => OP_RCON,
    };
    Request {
        header: header_for(target, opcode),
        body,
    }
}

/// One request of a session and what became of it.
#[derive(Debug)]
struct Exchange {
    retry: Retry,
    what: &'static str,
    state: ExchangeState,
    /// The latest reply with the right header that did not decode.
    malformed: Option<query_wire::Error>,
}

#[derive(Debug)]
enum ExchangeState {
    NotAsked,
    Waiting,
    Answered { reply: Vec<u8>, rtt: Duration },
    Unanswered(QueryError),
    Cancelled,
}

impl Exchange {
    fn new(what: &'static str, retry: Retry) -> Self {
        Exchange {
            retry,
            what,
            state: ExchangeState::NotAsked,
            malformed: None,
        }
    }

    fn ask(&mut self, request: &Request<'_>) -> Result<(), QueryError> {
        self.retry.start_encoded(self.what, request, ())?;
        self.state = ExchangeState::Waiting;
        Ok(())
    }

    fn is_waiting(&self) -> bool {
        matches!(self.state, ExchangeState::Waiting)
    }

    fn is_answered(&self) -> bool {
        matches!(self.state, ExchangeState::Answered { .. })
    }

    fn is_unanswered(&self) -> bool {
        matches!(self.state, ExchangeState::Unanswered(_))
    }

    fn was_asked(&self) -> bool {
        !matches!(self.state, ExchangeState::NotAsked)
    }

    /// Whether `datagram` carries this exchange's header while it waits for one.
    fn expects(&self, datagram: &[u8]) -> bool {
        self.is_waiting() && datagram.get(..HEADER_LEN) == self.retry.payload().get(..HEADER_LEN)
    }

    /// Takes a reply with the right header: kept if it decodes, remembered as the reason
    /// otherwise.
    fn offer(&mut self, datagram: &[u8], now: Instant) {
        match Reply::from_bytes(datagram) {
            Ok(_) => {
                let rtt = self.retry.finish(now).unwrap_or_default();
                self.state = ExchangeState::Answered {
                    reply: datagram.to_vec(),
                    rtt,
                };
            }
            Err(error) => self.malformed = Some(error),
        }
    }

    fn cancel(&mut self, now: Instant) {
        if self.is_waiting() {
            self.retry.finish(now);
            self.state = ExchangeState::Cancelled;
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if !self.is_waiting() {
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            let error = self.malformed.take().map_or(timeout, QueryError::Malformed);
            self.state = ExchangeState::Unanswered(error);
        }
    }

    /// The error of an exchange that went unanswered, once.
    fn take_failure(&mut self) -> Option<QueryError> {
        if !self.is_unanswered() {
            return None;
        }
        match std::mem::replace(&mut self.state, ExchangeState::Cancelled) {
            ExchangeState::Unanswered(error) => Some(error),
            _ => None,
        }
    }

    fn reply(&self) -> Option<&[u8]> {
        match &self.state {
            ExchangeState::Answered { reply, .. } => Some(reply),
            _ => None,
        }
    }

    fn rtt(&self) -> Option<Duration> {
        match self.state {
            ExchangeState::Answered { rtt, .. } => Some(rtt),
            _ => None,
        }
    }

    fn decoded(&self) -> Option<ReplyBody<'_>> {
        Reply::from_bytes(self.reply()?)
            .ok()
            .map(|reply| reply.body)
    }
}

/// An SA:MP / open.mp status query as a sans-I/O state machine; see the [module](self) docs.
#[derive(Debug)]
pub struct SampSession {
    target: SocketAddr,
    encoding: TextEncoding,
    timeout: Duration,
    want_rules: bool,
    want_players: bool,
    info: Exchange,
    rules: Exchange,
    players: Exchange,
    clients: Exchange,
    extra: Exchange,
    /// The rules reply names open.mp.
    rules_say_open_mp: bool,
    /// When a `d` still unanswered gives way to `c`, once `i` and `r` are in.
    list_fallback_at: Option<Instant>,
    /// Why the player list is absent, once that is settled.
    list_missing: Option<&'static str>,
    /// When the optional steps stop being waited for, once the required ones are in.
    grace_until: Option<Instant>,
    outcome: Outcome<ServerStatus>,
}

impl SampSession {
    /// A status query of `target` with `options` (timeout, retries, rules, players, encoding).
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let step = |what| Exchange::new(what, Retry::from_options(options));
        let mut session = SampSession {
            target,
            encoding: options.encoding_or(DEFAULT_ENCODING),
            timeout: options.timeout,
            want_rules: options.rules,
            want_players: options.players,
            info: step("info request"),
            rules: step("rules request"),
            players: step("detailed player list request"),
            clients: step("client list request"),
            extra: Exchange::new("open.mp extra info request", Retry::new(options.timeout, 1)),
            rules_say_open_mp: false,
            list_fallback_at: None,
            list_missing: None,
            grace_until: None,
            outcome: Outcome::new(),
        };
        session.info.ask(&request(target, RequestBody::Info))?;
        if options.rules {
            session.rules.ask(&request(target, RequestBody::Rules))?;
        }
        if options.players {
            session
                .players
                .ask(&request(target, RequestBody::Players))?;
        }
        Ok(session)
    }

    fn steps_mut(&mut self) -> [&mut Exchange; 5] {
        [
            &mut self.info,
            &mut self.rules,
            &mut self.players,
            &mut self.clients,
            &mut self.extra,
        ]
    }

    fn steps(&self) -> [&Exchange; 5] {
        [
            &self.info,
            &self.rules,
            &self.players,
            &self.clients,
            &self.extra,
        ]
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>, now: Instant) {
        for step in self.steps_mut() {
            step.cancel(now);
        }
        self.outcome.finish(result);
    }

    /// The player count of the `i` reply.
    fn reported_players(&self) -> Option<u32> {
        match self.info.decoded()? {
            ReplyBody::Info(info) => Some(u32::from(info.players)),
            _ => None,
        }
    }

    /// Twice the slowest round trip seen, within [MIN_GRACE, timeout].
    fn grace(&self) -> Duration {
        let slowest = self
            .steps()
            .iter()
            .filter_map(|step| step.rtt())
            .max()
            .unwrap_or_default();
        slowest
            .saturating_mul(2)
            .max(MIN_GRACE)
            .min(self.timeout.max(MIN_GRACE))
    }

    /// Moves the query on after a reply or a timeout: fails it, switches player lists, or
    /// finishes it.
    fn advance(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        if let Some(error) = self
            .info
            .take_failure()
            .or_else(|| self.rules.take_failure())
        {
            self.finish(Err(error), now);
            return;
        }
        let status_in = self.info.is_answered() && (!self.want_rules || self.rules.is_answered());
        if status_in && self.players.is_waiting() && self.list_fallback_at.is_none() {
            self.list_fallback_at = Some(now + self.grace());
        }
        if let Err(error) = self.settle_player_list(now) {
            self.finish(Err(error), now);
            return;
        }
        let list_settled = !self.want_players
            || self.players.is_answered()
            || self.clients.is_answered()
            || self.list_missing.is_some()
            || self.reported_players() == Some(0);
        if !(status_in && list_settled) {
            return;
        }
        let grace = self.grace();
        let grace_until = *self.grace_until.get_or_insert(now + grace);
        if !self.extra.is_waiting() || now >= grace_until {
            let status = self.status();
            self.finish(status, now);
        }
    }

    fn settle_player_list(&mut self, now: Instant) -> Result<(), QueryError> {
        if !self.want_players || self.list_missing.is_some() {
            return Ok(());
        }
        if self
            .reported_players()
            .is_some_and(|n| n > MAX_LISTED_PLAYERS)
        {
            self.players.cancel(now);
            self.clients.cancel(now);
            self.list_missing = Some("the server lists players only up to 100");
            return Ok(());
        }
        if self.reported_players() == Some(0) {
            self.players.cancel(now);
            self.clients.cancel(now);
            return Ok(());
        }
        if self.players.is_answered() || self.clients.is_answered() {
            return Ok(());
        }
        let open_mp = self.rules_say_open_mp;
        let lagging = self.list_fallback_at.is_some_and(|at| now >= at);
        if !self.clients.was_asked() && (self.players.is_unanswered() || open_mp || lagging) {
            if open_mp {
                self.players.cancel(now);
            }
            self.clients
                .ask(&request(self.target, RequestBody::Clients))?;
            self.extra.ask(&request(self.target, RequestBody::Extra))?;
        } else if self.clients.is_unanswered() && !self.players.is_waiting() {
            self.list_missing = Some(if open_mp {
                "the server did not answer the client list (c)"
            } else {
                "the server answered neither the detailed (d) nor the client (c) player list"
            });
        }
        Ok(())
    }

    /// The status from the replies that came in.
    fn status(&self) -> Result<ServerStatus, QueryError> {
        let encoding = self.encoding;
        let text = |t: &Text<'_>| t.decode(encoding).into_owned();
        let mut hex = TextHex::default();

        let info_bytes = self
            .info
            .reply()
            .ok_or_else(|| QueryError::protocol("the info reply is missing"))?;
        let ReplyBody::Info(info) = Reply::from_bytes(info_bytes)?.body else {
            return Err(QueryError::protocol("the info reply has another opcode"));
        };
        hex.note("hostname", &info.hostname);
        hex.note("gamemode", &info.gamemode);
        hex.note("language", &info.language);

        let rules_reply = self.rules.decoded();
        let mut rules = IndexMap::new();
        if let Some(ReplyBody::Rules(list)) = &rules_reply {
            for rule in list {
                let name = text(&rule.name);
                if rule.value.as_bytes().iter().any(|b| !b.is_ascii()) {
                    hex.rules
                        .insert(name.clone(), hex::encode(rule.value.as_bytes()).into());
                }
                rules.entry(name).or_insert_with(|| text(&rule.value));
            }
        }

        let mut players = Vec::new();
        let mut list_source = Value::Null;
        if let Some(ReplyBody::Players(list)) = self.players.decoded() {
            list_source = "d".into();
            for (i, p) in list.iter().enumerate() {
                hex.note_player(i, &p.name);
                players.push(Player {
                    name: text(&p.name),
                    score: Some(i64::from(p.score)),
                    ping: Some(p.ping),
                    id: Some(u32::from(p.id)),
                    ..Player::default()
                });
            }
        } else if let Some(ReplyBody::Clients(list)) = self.clients.decoded() {
            list_source = "c".into();
            for (i, p) in list.iter().enumerate() {
                hex.note_player(i, &p.name);
                players.push(Player {
                    name: text(&p.name),
                    score: Some(i64::from(p.score)),
                    ..Player::default()
                });
            }
        }

        let ping = self
            .steps()
            .iter()
            .filter_map(|s| s.rtt())
            .min()
            .unwrap_or_default();

        let mut raw = Map::new();
        raw.insert(
            "info".into(),
            json!({
                "password": info.password,
                "players": info.players,
                "max_players": info.max_players,
                "hostname": text(&info.hostname),
                "gamemode": text(&info.gamemode),
                "language": text(&info.language),
            }),
        );
        let extra = match self.extra.decoded() {
            Some(ReplyBody::Extra(extra)) => Some(extra),
            _ => None,
        };
        raw.insert(
            "open_mp".into(),
            (extra.is_some() || self.rules_say_open_mp).into(),
        );
        if let Some(extra) = &extra {
            raw.insert(
                "open_mp_extra".into(),
                json!({
                    "discord": text(&extra.discord),
                    "light_banner": text(&extra.light_banner),
                    "dark_banner": text(&extra.dark_banner),
                    "logo": text(&extra.logo),
                }),
            );
        }
        let listed = !list_source.is_null();
        raw.insert("player_list".into(), list_source);
        if let Some(reason) = self.list_missing {
            raw.insert("player_list_missing".into(), reason.into());
        }
        raw.insert("encoding".into(), encoding.name().into());
        if let Some(value) = hex.into_json() {
            raw.insert("text_hex".into(), value);
        }

        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        let mut status = ServerStatus {
            protocol: Protocol::Samp,
            address: self.target,
            name: text(&info.hostname),
            map: rules.get("mapname").cloned().and_then(non_empty),
            game_type: non_empty(text(&info.gamemode)),
            version: rules.get("version").cloned().and_then(non_empty),
            num_players: u32::from(info.players),
            max_players: u32::from(info.max_players),
            password: Some(info.password),
            players,
            teams: Vec::new(),
            rules,
            ping_ms: ping.as_secs_f64() * 1000.0,
            complete: !(self.want_players && self.list_missing.is_some()),
            raw: Value::Object(raw),
        };
        if listed {
            status.note_cut_player_list();
        }
        Ok(status)
    }
}

/// Whether a rules reply comes from open.mp: its `version` rule is `omp 1.…` today, and was
/// `0.3.7-R2 open.mp` in early releases.
fn names_open_mp(body: &ReplyBody<'_>) -> bool {
    let ReplyBody::Rules(rules) = body else {
        return false;
    };
    rules.iter().any(|rule| {
        let value = rule.value.as_bytes();
        rule.name.as_bytes() == b"version"
            && (value.starts_with(b"omp ")
                || value.windows(7).any(|w| w.eq_ignore_ascii_case(b"open.mp")))
    })
}

/// The raw bytes of text that is not plain ASCII, for `raw.text_hex`.
#[derive(Default)]
struct TextHex {
    fields: Map<String, Value>,
    players: Map<String, Value>,
    rules: Map<String, Value>,
}

impl TextHex {
    fn note(&mut self, field: &str, text: &Text<'_>) {
        if !text.as_bytes().is_ascii() {
            self.fields
                .insert(field.to_owned(), hex::encode(text.as_bytes()).into());
        }
    }

    fn note_player(&mut self, index: usize, name: &Text<'_>) {
        if !name.as_bytes().is_ascii() {
            self.players
                .insert(index.to_string(), hex::encode(name.as_bytes()).into());
        }
    }

    fn into_json(mut self) -> Option<Value> {
        if !self.players.is_empty() {
            self.fields
                .insert("players".into(), Value::Object(self.players));
        }
        if !self.rules.is_empty() {
            self.fields
                .insert("rules".into(), Value::Object(self.rules));
        }
        (!self.fields.is_empty()).then_some(Value::Object(self.fields))
    }
}

impl ClientSession for SampSession {
    type Output = ServerStatus;

    bookkeeping!(target, poll_result);

    fn waiting_for(&self) -> Option<&'static str> {
        self.steps()
            .into_iter()
            .find(|step| step.is_waiting())
            .map(|step| step.what)
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.outcome.is_finished() {
            return None;
        }
        for step in self.steps_mut() {
            if let Some(datagram) = step.retry.poll_transmit(now) {
                return Some(datagram);
            }
        }
        None
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let opcode_at = Header::OPCODE_RANGE.start;
        let step = match datagram.get(opcode_at) {
            Some(&OP_INFO) => &mut self.info,
            Some(&OP_RULES) => &mut self.rules,
            Some(&OP_PLAYERS) => &mut self.players,
            Some(&OP_CLIENTS) => &mut self.clients,
            Some(&OP_EXTRA) => &mut self.extra,
            _ => return,
        };
        if !step.expects(datagram) {
            return;
        }
        step.offer(datagram, now);
        if datagram[opcode_at] == OP_RULES {
            self.rules_say_open_mp = self
                .rules
                .decoded()
                .is_some_and(|body| names_open_mp(&body));
        }
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.outcome.is_finished() {
            return None;
        }
        let list_fallback = self.list_fallback_at.filter(|_| !self.clients.was_asked());
        self.steps()
            .iter()
            .filter_map(|step| step.retry.poll_timeout())
            .chain(self.grace_until)
            .chain(list_fallback)
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        for step in self.steps_mut() {
            step.handle_timeout(now);
        }
        self.advance(now);
    }

    /// With the info reply in: the status from what came, `complete: false`, `why` in
    /// `raw.ended_early`. Before it: `why`.
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<ServerStatus, QueryError> {
        if let Some(ended) = self.outcome.end() {
            return ended;
        }
        for step in self.steps_mut() {
            step.cancel(now);
        }
        match self.info.reply() {
            Some(_) => self.status().map(|mut status| {
                status.complete = false;
                if let Some(raw) = status.raw.as_object_mut() {
                    raw.insert("ended_early".to_owned(), why.to_string().into());
                }
                status
            }),
            None => Err(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_targets_get_a_zero_address_and_mapped_ones_their_ipv4() {
        let h = header_for("[::1]:7777".parse().unwrap(), OP_INFO);
        assert_eq!(h.address, [0; 4]);
        let h = header_for("[::ffff:10.1.2.3]:7777".parse().unwrap(), OP_INFO);
        assert_eq!(h.address, [10, 1, 2, 3]);
        assert_eq!(h.port, 7777);
    }
}
