//! SA:MP and open.mp query: the status client, the RCON client and the responder.
//!
//! # Status client ([`client`], [`SampSession`])
//!
//! `i` (info), `r` (rules), `d` (detailed players), `p` (ping) and `o` (open.mp extra info)
//! leave at once, each with its own [`Retry`]: the protocol answers each request on its own,
//! so nothing is gained by waiting for one before asking the next. A reply counts only if its
//! 11-byte header is exactly the request's (and a `p` reply only if it echoes the 4 random
//! bytes); anything else from the server's address is ignored.
//!
//! - `i` and `r` are required: if either goes unanswered the query fails with a timeout naming
//!   it. A reply with the right header that does not decode is remembered, and reported as
//!   [`QueryError::Malformed`] instead of the timeout if no good reply follows.
//! - Players: `d` first. If it goes unanswered, `c` is asked. open.mp has no `d`, so once a
//!   server answers `o`, `c` is asked at once. Above 100 players a server answers neither, so
//!   when `i` reports more than 100 the lists are not waited for. Either way a missing list is
//!   not a failure: the status comes back with an empty player list, `complete: false`, and
//!   `raw.player_list_missing` saying why.
//! - `p` and `o` are optional. Once everything else is in they get a grace period of twice the
//!   slowest round trip seen (at least 20 ms): they left at the same moment as `i`, so a server
//!   that answers them has done so by then, and a vanilla SA:MP server, which never answers
//!   `o`, does not hold the result back for a whole timeout. `o` is sent once.
//! - `ping_ms` is the `p` round trip, or the fastest other round trip when `p` got no answer
//!   (`raw.ping_source` says which).
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

use std::borrow::Cow;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use query_specs::samp::{
    Client, Extra, Header, Info, Player as ListedPlayer, Reply, ReplyBody, Request, RequestBody,
    Rule, HEADER_LEN, OP_CLIENTS, OP_EXTRA, OP_INFO, OP_PING, OP_PLAYERS, OP_RCON, OP_RULES,
};
use query_wire::{Decode, Encode, ErrorKind, Text, TextEncoding};
use serde_json::{json, Map, Value};
use subtle::ConstantTimeEq;

use super::StatusSession;
use crate::clock::Now;
use crate::engine::{ClientSession, DropReason, ReplySink, Responder, Retry, Verdict};
use crate::error::QueryError;
use crate::options::{Options, RconCommand};
use crate::protocol::Protocol;
use crate::state::{RuleValue, ServerState, SharedState};
use crate::status::{Player, ServerStatus};

/// The encoding SA:MP text is read and written in unless another is chosen: the code page of
/// Western servers. Declared with the packets, as [`query_specs::samp::ENCODING`].
pub const DEFAULT_ENCODING: TextEncoding = query_specs::samp::ENCODING;

/// Above this many players, servers answer neither player list.
pub const MAX_LISTED_PLAYERS: u32 = 100;

/// How long an RCON session waits after the latest console line for another.
pub const RCON_QUIET: Duration = Duration::from_millis(300);

/// The console line a server sends for a wrong RCON password.
pub const BAD_RCON_PASSWORD: &str = "Invalid RCON password.";

/// The shortest grace period the optional `p` and `o` get once everything else is in.
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
struct Step {
    retry: Retry,
    what: &'static str,
    state: StepState,
    /// The latest reply with the right header that did not decode.
    malformed: Option<query_wire::Error>,
}

#[derive(Debug)]
enum StepState {
    NotAsked,
    Waiting,
    Answered { reply: Vec<u8>, rtt: Duration },
    Unanswered(QueryError),
    Cancelled,
}

impl Step {
    fn new(what: &'static str, retry: Retry) -> Self {
        Step {
            retry,
            what,
            state: StepState::NotAsked,
            malformed: None,
        }
    }

    fn ask(&mut self, request: &Request<'_>) -> Result<(), QueryError> {
        self.retry.start_encoded(self.what, request, ())?;
        self.state = StepState::Waiting;
        Ok(())
    }

    fn is_waiting(&self) -> bool {
        matches!(self.state, StepState::Waiting)
    }

    fn is_answered(&self) -> bool {
        matches!(self.state, StepState::Answered { .. })
    }

    fn is_unanswered(&self) -> bool {
        matches!(self.state, StepState::Unanswered(_))
    }

    fn was_asked(&self) -> bool {
        !matches!(self.state, StepState::NotAsked)
    }

    /// Whether `datagram` carries this step's header while it waits for one.
    fn expects(&self, datagram: &[u8]) -> bool {
        self.is_waiting() && datagram.get(..HEADER_LEN) == self.retry.payload().get(..HEADER_LEN)
    }

    /// Takes a reply with the right header: kept if it decodes, remembered as the reason
    /// otherwise.
    fn offer(&mut self, datagram: &[u8], now: Instant) {
        match Reply::from_bytes(datagram) {
            Ok(_) => {
                let rtt = self.retry.finish(now).unwrap_or_default();
                self.state = StepState::Answered {
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
            self.state = StepState::Cancelled;
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if !self.is_waiting() {
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            let error = self.malformed.take().map_or(timeout, QueryError::Malformed);
            self.state = StepState::Unanswered(error);
        }
    }

    /// The error of a step that went unanswered, once.
    fn take_failure(&mut self) -> Option<QueryError> {
        if !self.is_unanswered() {
            return None;
        }
        match std::mem::replace(&mut self.state, StepState::Cancelled) {
            StepState::Unanswered(error) => Some(error),
            _ => None,
        }
    }

    fn reply(&self) -> Option<&[u8]> {
        match &self.state {
            StepState::Answered { reply, .. } => Some(reply),
            _ => None,
        }
    }

    fn rtt(&self) -> Option<Duration> {
        match self.state {
            StepState::Answered { rtt, .. } => Some(rtt),
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
    info: Step,
    rules: Step,
    players: Step,
    clients: Step,
    ping: Step,
    extra: Step,
    /// Why the player list is absent, once that is settled.
    list_missing: Option<&'static str>,
    /// When the optional steps stop being waited for, once the required ones are in.
    grace_until: Option<Instant>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
}

impl SampSession {
    /// A status query of `target` with `options` (timeout, retries, rules, players, encoding).
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        let step = |what| Step::new(what, Retry::from_options(options));
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
            ping: step("ping request"),
            extra: Step::new("open.mp extra info request", Retry::new(options.timeout, 1)),
            list_missing: None,
            grace_until: None,
            result: None,
            finished: false,
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
        let mut echo = [0u8; 4];
        rand::fill(&mut echo);
        session
            .ping
            .ask(&request(target, RequestBody::Ping(echo)))?;
        session.extra.ask(&request(target, RequestBody::Extra))?;
        Ok(session)
    }

    fn steps_mut(&mut self) -> [&mut Step; 6] {
        [
            &mut self.info,
            &mut self.rules,
            &mut self.players,
            &mut self.ping,
            &mut self.extra,
            &mut self.clients,
        ]
    }

    fn steps(&self) -> [&Step; 6] {
        [
            &self.info,
            &self.rules,
            &self.players,
            &self.ping,
            &self.extra,
            &self.clients,
        ]
    }

    fn finish(&mut self, result: Result<ServerStatus, QueryError>, now: Instant) {
        for step in self.steps_mut() {
            step.cancel(now);
        }
        self.result = Some(result);
        self.finished = true;
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
        if self.finished {
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
        if let Err(error) = self.settle_player_list(now) {
            self.finish(Err(error), now);
            return;
        }
        let list_settled = !self.want_players
            || self.players.is_answered()
            || self.clients.is_answered()
            || self.list_missing.is_some();
        let required_in = self.info.is_answered()
            && (!self.want_rules || self.rules.is_answered())
            && list_settled;
        if !required_in {
            return;
        }
        let grace = self.grace();
        let grace_until = *self.grace_until.get_or_insert(now + grace);
        let optional_in = !self.ping.is_waiting() && !self.extra.is_waiting();
        if optional_in || now >= grace_until {
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
        if self.players.is_answered() || self.clients.is_answered() {
            return Ok(());
        }
        let open_mp = self.extra.is_answered();
        if !self.clients.was_asked() && (self.players.is_unanswered() || open_mp) {
            self.players.cancel(now);
            self.clients
                .ask(&request(self.target, RequestBody::Clients))?;
        } else if self.clients.is_unanswered() {
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
                        .insert(name.clone(), hex_of(rule.value.as_bytes()).into());
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

        let (ping, ping_source) = match self.ping.rtt() {
            Some(rtt) => (rtt, "p"),
            None => (
                self.steps()
                    .iter()
                    .filter_map(|s| s.rtt())
                    .min()
                    .unwrap_or_default(),
                "fastest reply",
            ),
        };

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
        raw.insert("open_mp".into(), extra.is_some().into());
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
        raw.insert("player_list".into(), list_source);
        if let Some(reason) = self.list_missing {
            raw.insert("player_list_missing".into(), reason.into());
        }
        raw.insert("ping_source".into(), ping_source.into());
        raw.insert("encoding".into(), encoding.name().into());
        if let Some(value) = hex.into_json() {
            raw.insert("text_hex".into(), value);
        }

        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        Ok(ServerStatus {
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
        })
    }
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
                .insert(field.to_owned(), hex_of(text.as_bytes()).into());
        }
    }

    fn note_player(&mut self, index: usize, name: &Text<'_>) {
        if !name.as_bytes().is_ascii() {
            self.players
                .insert(index.to_string(), hex_of(name.as_bytes()).into());
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

fn hex_of(bytes: &[u8]) -> String {
    use fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

impl ClientSession for SampSession {
    type Output = ServerStatus;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.finished {
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
        if self.finished {
            return;
        }
        let step = match datagram.get(HEADER_LEN - 1) {
            Some(&OP_INFO) => &mut self.info,
            Some(&OP_RULES) => &mut self.rules,
            Some(&OP_PLAYERS) => &mut self.players,
            Some(&OP_CLIENTS) => &mut self.clients,
            Some(&OP_PING) => &mut self.ping,
            Some(&OP_EXTRA) => &mut self.extra,
            _ => return,
        };
        if !step.expects(datagram) {
            return;
        }
        // A ping reply is the request echoed whole; other bytes are not our echo.
        if datagram[HEADER_LEN - 1] == OP_PING && datagram != step.retry.payload() {
            return;
        }
        step.offer(datagram, now);
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        self.steps()
            .iter()
            .filter_map(|step| step.retry.poll_timeout())
            .chain(self.grace_until)
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        for step in self.steps_mut() {
            step.handle_timeout(now);
        }
        self.advance(now);
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }
}

/// An RCON command for `target`: `command` is sent once, and the console lines it prints are
/// the output. See the [module](self) docs.
pub fn rcon_session(
    target: SocketAddr,
    command: &RconCommand,
    options: &Options,
) -> Result<RconSession, QueryError> {
    RconSession::new(target, command, options)
}

/// An SA:MP RCON command as a sans-I/O state machine, whose output is the console lines.
#[derive(Debug)]
pub struct RconSession {
    target: SocketAddr,
    encoding: TextEncoding,
    timeout: Duration,
    attempts: u32,
    quiet: Duration,
    /// The `x` request, sent once.
    command: Vec<u8>,
    command_sent: Option<Instant>,
    /// An `i` request, retried, that tells a silent command from a silent server.
    probe: Step,
    lines: Vec<String>,
    last_line: Option<Instant>,
    result: Option<Result<Vec<String>, QueryError>>,
    finished: bool,
}

impl RconSession {
    /// Runs `command` on `target`, waiting and retrying the server probe per `options`, and
    /// decoding lines in `options`' encoding (Windows-1252 by default).
    pub fn new(
        target: SocketAddr,
        command: &RconCommand,
        options: &Options,
    ) -> Result<Self, QueryError> {
        let encoding = options.encoding_or(DEFAULT_ENCODING);
        let x = request(
            target,
            RequestBody::Rcon {
                password: Text::encode(&command.password, encoding),
                command: Text::encode(&command.command, encoding),
            },
        );
        let bytes = x.to_vec().map_err(|e| {
            QueryError::protocol(format!(
                "the RCON password or command does not fit SA:MP's 65535-byte fields: {e}"
            ))
        })?;
        let mut probe = Step::new(
            "server probe sent with the RCON command",
            Retry::from_options(options),
        );
        probe.ask(&request(target, RequestBody::Info))?;
        Ok(RconSession {
            target,
            encoding,
            timeout: options.timeout,
            attempts: options.attempts(),
            quiet: RCON_QUIET,
            command: bytes,
            command_sent: None,
            probe,
            lines: Vec::new(),
            last_line: None,
            result: None,
            finished: false,
        })
    }

    /// Waits `quiet` after the latest line for another, instead of [`RCON_QUIET`].
    #[must_use]
    pub fn with_quiet_period(mut self, quiet: Duration) -> Self {
        self.quiet = quiet;
        self
    }

    /// The latest moment lines are collected until, however many keep coming.
    fn hard_end(&self, sent: Instant) -> Instant {
        sent + self.timeout.saturating_mul(self.attempts) + self.quiet
    }

    fn finish(&mut self, result: Result<Vec<String>, QueryError>, now: Instant) {
        self.probe.cancel(now);
        self.result = Some(result);
        self.finished = true;
    }

    fn advance(&mut self, now: Instant) {
        let Some(sent) = self.command_sent else {
            return;
        };
        if self.finished {
            return;
        }
        if let Some(last) = self.last_line {
            if now >= last + self.quiet || now >= self.hard_end(sent) {
                let lines = std::mem::take(&mut self.lines);
                self.finish(Ok(lines), now);
            }
        } else if self.probe.is_answered() && now >= sent + self.timeout {
            // The server is up and the command printed nothing (or RCON is off there).
            self.finish(Ok(Vec::new()), now);
        } else if let Some(error) = self.probe.take_failure() {
            self.finish(Err(error), now);
        }
    }
}

impl ClientSession for RconSession {
    type Output = Vec<String>;

    fn target(&self) -> SocketAddr {
        self.target
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        if self.finished {
            return None;
        }
        if self.command_sent.is_none() {
            self.command_sent = Some(now);
            return Some(&self.command);
        }
        self.probe.retry.poll_transmit(now)
    }

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.finished || self.command_sent.is_none() {
            return;
        }
        match datagram.get(HEADER_LEN - 1) {
            Some(&OP_RCON) if datagram.get(..HEADER_LEN) == self.command.get(..HEADER_LEN) => {
                let Ok(Reply {
                    body: ReplyBody::Rcon(line),
                    ..
                }) = Reply::from_bytes(datagram)
                else {
                    return;
                };
                let line = line.decode(self.encoding).into_owned();
                if line.trim_end() == BAD_RCON_PASSWORD {
                    self.finish(Err(QueryError::AuthRequired(BAD_RCON_PASSWORD.into())), now);
                    return;
                }
                if self.lines.len() < MAX_RCON_LINES {
                    self.lines.push(line);
                }
                self.last_line = Some(now);
            }
            Some(&OP_INFO) if self.probe.expects(datagram) => self.probe.offer(datagram, now),
            _ => return,
        }
        self.advance(now);
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        let sent = self.command_sent?;
        let silent_end =
            (self.last_line.is_none() && self.probe.is_answered()).then_some(sent + self.timeout);
        let quiet_end = self.last_line.map(|last| last + self.quiet);
        [self.probe.retry.poll_timeout(), silent_end, quiet_end]
            .into_iter()
            .flatten()
            .chain([self.hard_end(sent)])
            .min()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        self.probe.handle_timeout(now);
        self.advance(now);
    }

    fn poll_result(&mut self) -> Option<Result<Vec<String>, QueryError>> {
        self.result.take()
    }
}

/// open.mp's extra information, the `o` reply: where a server browser finds the community.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenMpInfo {
    /// Discord invite link.
    pub discord: String,
    /// Banner image URL for light themes.
    pub light_banner: String,
    /// Banner image URL for dark themes.
    pub dark_banner: String,
    /// Logo image URL.
    pub logo: String,
}

/// How a [`SampResponder`] presents the server, beyond the [`ServerState`].
#[derive(Clone, PartialEq, Eq)]
pub struct SampConfig {
    /// The encoding of every text on the wire; characters it cannot represent are sent as `?`.
    pub encoding: TextEncoding,
    /// Answer `d`, the detailed player list, as SA:MP does; open.mp does not.
    pub detailed_players: bool,
    /// Answer `o` with this, which is how clients recognise open.mp.
    pub open_mp: Option<OpenMpInfo>,
    /// The RCON password. Without one (or with an empty one) `x` is not answered at all.
    pub rcon_password: Option<String>,
}

impl Default for SampConfig {
    /// Like a SA:MP 0.3.7 server: Windows-1252, `d` answered, no `o`, no RCON.
    fn default() -> Self {
        SampConfig {
            encoding: DEFAULT_ENCODING,
            detailed_players: true,
            open_mp: None,
            rcon_password: None,
        }
    }
}

impl SampConfig {
    /// Like an open.mp server: `o` answered with `info`, no `d`.
    pub fn open_mp(info: OpenMpInfo) -> Self {
        SampConfig {
            detailed_players: false,
            open_mp: Some(info),
            ..SampConfig::default()
        }
    }
}

impl fmt::Debug for SampConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampConfig")
            .field("encoding", &self.encoding)
            .field("detailed_players", &self.detailed_players)
            .field("open_mp", &self.open_mp)
            .field(
                "rcon_password",
                &self.rcon_password.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// Runs an authenticated RCON command: gets the command and the state, returns the console
/// lines to send back.
pub type RconHandler = Box<dyn FnMut(&str, &ServerState) -> Vec<String> + Send>;

/// What the default [`RconHandler`] prints: the server knows no commands.
pub fn unknown_command(command: &str, _state: &ServerState) -> Vec<String> {
    vec![format!("Unknown command or variable: {command}")]
}

/// open.mp's limits for the `i` strings, which it cuts to protect clients with fixed buffers.
/// The original SA:MP server does not cut; this responder does, so that no client it answers
/// can be overrun. Counted in bytes on the wire.
pub const MAX_HOSTNAME: usize = 63;
/// See [`MAX_HOSTNAME`].
pub const MAX_GAMEMODE: usize = 39;
/// See [`MAX_HOSTNAME`].
pub const MAX_LANGUAGE: usize = 39;
/// Rule names and values and player names have a one-byte length.
const MAX_SHORT_TEXT: usize = 255;
/// A bound for the `o` URLs, which have a four-byte length.
const MAX_URL: usize = 1024;
/// Rules stop being added to the `r` reply once it is this large.
const MAX_RULES_BYTES: usize = 8192;
/// RCON output: lines per command, bytes per line.
const MAX_RESPONDER_RCON_LINES: usize = 1000;
const MAX_RCON_LINE: usize = 512;

/// Answers SA:MP / open.mp queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::samp::{SampConfig, SampResponder};
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Los Santos".into(), ..ServerState::default() });
/// let responder = SampResponder::new(state, SampConfig {
///     rcon_password: Some("changeme".into()),
///     ..SampConfig::default()
/// })
/// .with_rcon_handler(|command, state| match command {
///     "players" => state.players.iter().map(|p| p.name.clone()).collect(),
///     other => vec![format!("Unknown command or variable: {other}")],
/// });
/// # let _ = responder;
/// ```
pub struct SampResponder {
    state: SharedState,
    config: SampConfig,
    rcon: RconHandler,
    replies: Option<EncodedReplies>,
}

impl fmt::Debug for SampResponder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SampResponder")
            .field("config", &self.config)
            .field("cached", &self.replies.is_some())
            .finish_non_exhaustive()
    }
}

impl SampResponder {
    /// Answers from `state` as `config` says; RCON commands get [`unknown_command`].
    pub fn new(state: SharedState, config: SampConfig) -> Self {
        SampResponder {
            state,
            config,
            rcon: Box::new(unknown_command),
            replies: None,
        }
    }

    /// Runs authenticated RCON commands with `handler`.
    #[must_use]
    pub fn with_rcon_handler(
        mut self,
        handler: impl FnMut(&str, &ServerState) -> Vec<String> + Send + 'static,
    ) -> Self {
        self.rcon = Box::new(handler);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &SampConfig {
        &self.config
    }

    /// The reply bodies for the current state, encoded again only when the state changed.
    fn encoded(&mut self) -> Result<&EncodedReplies, query_wire::Error> {
        let current = self.state.load();
        let stale = !matches!(&self.replies, Some(r) if Arc::ptr_eq(&r.snapshot, &current));
        if stale {
            let buffer = self.replies.take().map(|r| r.bytes).unwrap_or_default();
            self.replies = Some(EncodedReplies::build(
                Arc::clone(&current),
                &self.config,
                buffer,
            )?);
        }
        self.replies
            .as_ref()
            .ok_or_else(|| query_wire::Error::new(ErrorKind::Invalid("no encoded replies"), 0))
    }

    fn answer_rcon(
        &mut self,
        header: Header,
        password: &Text<'_>,
        command: &Text<'_>,
        replies: &mut ReplySink,
    ) -> Verdict {
        let encoding = self.config.encoding;
        let expected = match self.config.rcon_password.as_deref() {
            Some(p) if !p.is_empty() => encoding.encode_lossy(p),
            _ => return Verdict::Dropped(DropReason::Unsupported),
        };
        let line_reply = |line: &str, replies: &mut ReplySink| {
            let body = ReplyBody::Rcon(wire_text(line, encoding, MAX_RCON_LINE));
            replies.push_encoded(&Reply { header, body }, ())
        };
        if !bool::from(password.as_bytes().ct_eq(&expected)) {
            return match line_reply(BAD_RCON_PASSWORD, replies) {
                Ok(()) => Verdict::Answered,
                Err(_) => Verdict::Dropped(DropReason::Unsupported),
            };
        }
        let command = command.decode(encoding);
        let state = self.state.load();
        let lines = (self.rcon)(&command, &state);
        for line in lines.iter().take(MAX_RESPONDER_RCON_LINES) {
            if line_reply(line, replies).is_err() {
                break;
            }
        }
        Verdict::Answered
    }
}

impl Responder for SampResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        // Decoding the whole datagram enforces open.mp's exact sizes: 11 bytes, 15 for `p`.
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let header = request.header;
        let pushed = match &request.body {
            RequestBody::Ping(echo) => replies.push_encoded(
                &Reply {
                    header,
                    body: ReplyBody::Ping(*echo),
                },
                (),
            ),
            RequestBody::Rcon { password, command } => {
                return self.answer_rcon(header, password, command, replies);
            }
            _ => {
                let Ok(encoded) = self.encoded() else {
                    return Verdict::Dropped(DropReason::Unsupported);
                };
                let Some(body) = encoded.body(header.opcode) else {
                    return Verdict::Dropped(DropReason::Unsupported);
                };
                replies.push_with(|buf| {
                    let start = header.encode_into(buf)?;
                    let end = start + body.len();
                    let Some(slot) = buf.get_mut(start..end) else {
                        return Err(query_wire::Error::new(
                            ErrorKind::BufferTooSmall {
                                need: end,
                                have: buf.len(),
                            },
                            start,
                        ));
                    };
                    slot.copy_from_slice(body);
                    Ok(end)
                })
            }
        };
        match pushed {
            Ok(()) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}

/// The bodies (after the header) of the `i`, `r`, `c`, `d` and `o` replies for one state
/// snapshot, back to back in one buffer.
#[derive(Debug)]
struct EncodedReplies {
    /// Held so that the pointer compared against stays this snapshot's.
    snapshot: Arc<ServerState>,
    bytes: Vec<u8>,
    info: Range<usize>,
    rules: Range<usize>,
    clients: Option<Range<usize>>,
    players: Option<Range<usize>>,
    extra: Option<Range<usize>>,
}

impl EncodedReplies {
    fn build(
        snapshot: Arc<ServerState>,
        config: &SampConfig,
        mut bytes: Vec<u8>,
    ) -> Result<Self, query_wire::Error> {
        bytes.clear();
        let state = &*snapshot;
        let encoding = config.encoding;
        let text = |s, max| wire_text(s, encoding, max);

        let info = append(
            &mut bytes,
            &ReplyBody::Info(Info {
                password: state.password,
                players: saturate_u16(state.num_players()),
                max_players: saturate_u16(state.max_players),
                hostname: text(&state.name, MAX_HOSTNAME),
                gamemode: text(&state.game_type, MAX_GAMEMODE),
                language: text(&state.language, MAX_LANGUAGE),
            }),
        )?;

        let rule_texts = rule_texts(state);
        let mut rules = Vec::with_capacity(rule_texts.len());
        let mut rules_len = 2;
        for (name, value) in &rule_texts {
            let rule = Rule {
                name: text(name, MAX_SHORT_TEXT),
                value: text(value, MAX_SHORT_TEXT),
            };
            rules_len += 2 + rule.name.as_bytes().len() + rule.value.as_bytes().len();
            if rules_len > MAX_RULES_BYTES {
                break;
            }
            rules.push(rule);
        }
        let rules = append(&mut bytes, &ReplyBody::Rules(rules))?;

        let (mut clients, mut players) = (None, None);
        if state.num_players() <= MAX_LISTED_PLAYERS {
            let listed = state.players.iter().take(MAX_LISTED_PLAYERS as usize);
            let list = listed
                .clone()
                .map(|p| Client {
                    name: text(&p.name, MAX_SHORT_TEXT),
                    score: saturate_i32(p.score),
                })
                .collect();
            clients = Some(append(&mut bytes, &ReplyBody::Clients(list))?);
            if config.detailed_players {
                let list = listed
                    .enumerate()
                    .map(|(i, p)| ListedPlayer {
                        // Ids are one byte on the wire; the SA:MP server sends the low byte.
                        id: p
                            .id
                            .unwrap_or(u32::try_from(i).unwrap_or(u32::MAX))
                            .to_le_bytes()[0],
                        name: text(&p.name, MAX_SHORT_TEXT),
                        score: saturate_i32(p.score),
                        ping: p.ping,
                    })
                    .collect();
                players = Some(append(&mut bytes, &ReplyBody::Players(list))?);
            }
        }

        let extra = match &config.open_mp {
            Some(o) => Some(append(
                &mut bytes,
                &ReplyBody::Extra(Extra {
                    discord: text(&o.discord, MAX_URL),
                    light_banner: text(&o.light_banner, MAX_URL),
                    dark_banner: text(&o.dark_banner, MAX_URL),
                    logo: text(&o.logo, MAX_URL),
                }),
            )?),
            None => None,
        };

        Ok(EncodedReplies {
            snapshot,
            bytes,
            info,
            rules,
            clients,
            players,
            extra,
        })
    }

    fn body(&self, opcode: u8) -> Option<&[u8]> {
        let range = match opcode {
            OP_INFO => self.info.clone(),
            OP_RULES => self.rules.clone(),
            OP_CLIENTS => self.clients.clone()?,
            OP_PLAYERS => self.players.clone()?,
            OP_EXTRA => self.extra.clone()?,
            _ => return None,
        };
        self.bytes.get(range)
    }
}

/// The rules a server sends: `mapname` and `version` from the state's fields when set, then
/// the state's rules (a rule of the same name as a field that was sent is left out).
fn rule_texts(state: &ServerState) -> Vec<(&str, Cow<'_, str>)> {
    let mut out: Vec<(&str, Cow<'_, str>)> = Vec::with_capacity(state.rules.len() + 2);
    if !state.map.is_empty() {
        out.push(("mapname", Cow::Borrowed(&state.map)));
    }
    if !state.version.is_empty() {
        out.push(("version", Cow::Borrowed(&state.version)));
    }
    let fields = out.len();
    for (name, value) in &state.rules {
        if out[..fields].iter().any(|(field, _)| field == name) {
            continue;
        }
        let value = match value {
            RuleValue::Text(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(other.to_string()),
        };
        out.push((name, value));
    }
    out
}

/// Encodes `body` after what `bytes` holds; returns where it went.
fn append(bytes: &mut Vec<u8>, body: &ReplyBody<'_>) -> Result<Range<usize>, query_wire::Error> {
    let opcode = body.tag();
    let start = bytes.len();
    bytes.resize(start + body.encoded_len(opcode), 0);
    let written = body.encode_into_with(&mut bytes[start..], opcode)?;
    bytes.truncate(start + written);
    Ok(start..bytes.len())
}

/// `text` in `encoding` ('?' for what it cannot represent), cut to at most `max` bytes at a
/// character boundary.
fn wire_text(text: &str, encoding: TextEncoding, max: usize) -> Text<'_> {
    let cut = match encoding {
        // Every character is one byte in the code pages.
        TextEncoding::Latin1 | TextEncoding::Windows1252 | TextEncoding::Windows1251 => text
            .char_indices()
            .nth(max)
            .map_or(text.len(), |(at, _)| at),
        TextEncoding::Utf8 => {
            let mut at = text.len().min(max);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            at
        }
    };
    Text::encode(&text[..cut], encoding)
}

fn saturate_u16(n: u32) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn saturate_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_at_character_boundaries_and_unmappable_characters_become_question_marks() {
        let cut = wire_text("Jürgen Ж", TextEncoding::Windows1252, 8);
        assert_eq!(cut.as_bytes(), b"J\xfcrgen ?");
        let cut = wire_text("Jürgen", TextEncoding::Windows1252, 3);
        assert_eq!(cut.as_bytes(), b"J\xfcr");
        let cut = wire_text("aéb", TextEncoding::Utf8, 2);
        assert_eq!(cut.as_bytes(), b"a");
        let cut = wire_text("Жук", TextEncoding::Windows1251, 10);
        assert_eq!(cut.as_bytes(), b"\xc6\xf3\xea");
    }

    #[test]
    fn numbers_saturate() {
        assert_eq!(saturate_u16(70_000), u16::MAX);
        assert_eq!(saturate_i32(-1 << 40), i32::MIN);
        assert_eq!(saturate_i32(1 << 40), i32::MAX);
        assert_eq!(saturate_i32(-5), -5);
    }

    #[test]
    fn ipv6_targets_get_a_zero_address_and_mapped_ones_their_ipv4() {
        let h = header_for("[::1]:7777".parse().unwrap(), OP_INFO);
        assert_eq!(h.address, [0; 4]);
        let h = header_for("[::ffff:10.1.2.3]:7777".parse().unwrap(), OP_INFO);
        assert_eq!(h.address, [10, 1, 2, 3]);
        assert_eq!(h.port, 7777);
    }

    #[test]
    fn hex_is_lowercase_pairs() {
        assert_eq!(hex_of(&[0x4a, 0xfc, 0x00]), "4afc00");
    }
}
