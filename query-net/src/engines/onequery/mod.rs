//! Hytale OneQuery V2: the client session ([`OneQueryClient`]) and the responder
//! ([`OneQueryResponder`]).
//!
//! A query is a challenge (a 32-byte token bound to the client's IP, reusable for 90 to 120
//! seconds), a BASIC query for the server's description, then PLAYERS queries page by page.
//! Tokens are stateless on the server ([`TokenKey`](token::TokenKey)), so a lost query is simply resent.

use std::net::SocketAddr;
use std::time::Instant;

use query_specs::onequery::{
    Family, Payload, Query, QueryReply, Reply, ReplyBody, ReplyFlags, Request, RequestFlags,
    KIND_BASIC, KIND_CHALLENGE, KIND_PLAYERS, TOKEN_LEN,
};
use query_wire::Decode;

use super::StatusSession;
use crate::engine::{ClientSession, Outcome, Retry};
use crate::error::QueryError;
use crate::options::Options;
use crate::outcome::bookkeeping;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

mod responder;
pub mod token;
pub use responder::{limits, Access, AuthSecret, OneQueryResponder, Permissions};

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(OneQueryClient::new(target, options)?))
}

/// The most PLAYERS pages a client asks for: 64 pages hold thousands of players, and a server
/// that keeps saying "more" past that is not trusted further.
pub const MAX_PAGES: u32 = 64;

/// The player-entry bytes a page carries at most, as in the reference server. With the headers
/// the datagram stays well under [`MAX_DATAGRAM`](query_specs::onequery::MAX_DATAGRAM).
pub const PLAYER_PAGE_BUDGET: usize = 1333;

/// Which request the client waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Challenge,
    Basic,
    Players { offset: u32 },
}

impl Step {
    fn waiting_for(self) -> &'static str {
        match self {
            Step::Challenge => "challenge request",
            Step::Basic => "basic request",
            Step::Players { .. } => "players request",
        }
    }
}

/// The SERVER_INFO fields kept from the BASIC reply.
#[derive(Debug, Clone)]
struct Basic {
    name: String,
    version: String,
    player_count: i32,
    max_players: i32,
    flags: ReplyFlags,
    raw: serde_json::Value,
}

/// One OneQuery status query, as a sans-I/O state machine.
///
/// - Each request is resent up to `Options::attempts()` times; a reply counts only if it is in
///   the family asked (`ONEREPLY` for `ONEQUERY`), fits the step, and echoes the request's
///   random id. Anything else from the target is ignored; a reply that fails to decode is
///   ignored too (it may be forged), and reported as [`QueryError::Malformed`] only if the
///   attempts then run out.
/// - Players are fetched when `Options::players` is set, page by page from offset 0, until
///   the server clears FLAG_HAS_MORE_PLAYERS, sends an empty page, or [`MAX_PAGES`] pages
///   have come (then `complete` is false).
/// - A query reply counts only while a BASIC or PLAYERS request with its id is outstanding:
///   before the first one is sent (during the challenge) no reply can match, whatever id it
///   carries.
/// - FLAG_AUTH_REQUIRED in the BASIC reply ends the query with [`QueryError::AuthRequired`]:
///   the server wants a token the query did not carry (or refused the one it did). In a
///   PLAYERS reply it ends the player list: the status comes back with the players received
///   so far, `complete: false`, and the reason in `raw.players_error`.
/// - Mapping: name, version, counts and players (with their UUIDs). OneQuery has no map, game
///   type or rules; the MOTD, protocol version and hash, host and port, and the reply flags are
///   kept in `raw` (`raw.server_info`, `raw.flags`, `raw.is_network`), not in `rules`, since
///   they are not server settings.
#[derive(Debug)]
pub struct OneQueryClient {
    target: SocketAddr,
    family: Family,
    want_players: bool,
    auth_token: Option<String>,
    retry: Retry,
    step: Step,
    token: [u8; TOKEN_LEN],
    /// The id of the BASIC or PLAYERS request awaiting its reply; `None` before the first.
    request_id: Option<u32>,
    basic: Option<Basic>,
    players: Vec<Player>,
    total_players: Option<u32>,
    pages: u32,
    truncated: bool,
    players_error: Option<String>,
    outcome: Outcome<ServerStatus>,
}

impl OneQueryClient {
    /// A query of `target` in the `ONEQUERY` family.
    pub fn new(target: SocketAddr, options: &Options) -> Result<Self, QueryError> {
        Self::with_family(target, options, Family::OneQuery)
    }

    /// A query of `target` in `family` (`HYQUERY2` servers answer only their own magic).
    ///
    /// Fails if the auth token is longer than its u16 length prefix allows.
    pub fn with_family(
        target: SocketAddr,
        options: &Options,
        family: Family,
    ) -> Result<Self, QueryError> {
        if options
            .auth_token
            .as_ref()
            .is_some_and(|t| t.len() > usize::from(u16::MAX))
        {
            return Err(QueryError::protocol(
                "the auth token is longer than the 65535 bytes OneQuery can carry",
            ));
        }
        let mut session = OneQueryClient {
            target,
            family,
            want_players: options.players,
            auth_token: options.auth_token.clone(),
            retry: Retry::from_options(options),
            step: Step::Challenge,
            token: [0; TOKEN_LEN],
            request_id: None,
            basic: None,
            players: Vec::new(),
            total_players: None,
            pages: 0,
            truncated: false,
            players_error: None,
            outcome: Outcome::new(),
        };
        let challenge = Request {
            family,
            kind: KIND_CHALLENGE,
            query: None,
        };
        session.send(Step::Challenge, &challenge);
        Ok(session)
    }

    fn send(&mut self, step: Step, request: &Request<'_>) {
        self.step = step;
        if let Err(e) = self.retry.start_encoded(step.waiting_for(), request, ()) {
            self.outcome.finish(Err(QueryError::protocol(format!(
                "cannot encode the {}: {e}",
                step.waiting_for()
            ))));
        }
    }

    /// Sends a BASIC or PLAYERS query with a fresh request id.
    fn send_query(&mut self, step: Step) {
        let (kind, offset) = match step {
            Step::Players { offset } => (KIND_PLAYERS, offset),
            _ => (KIND_BASIC, 0),
        };
        let request_id = rand::random();
        self.request_id = Some(request_id);
        let auth_token = self.auth_token.take();
        let request = Request {
            family: self.family,
            kind,
            query: Some(Query {
                token: self.token,
                request_id,
                flags: if auth_token.is_some() {
                    RequestFlags::HAS_AUTH_TOKEN
                } else {
                    RequestFlags::empty()
                },
                offset,
                auth_token: auth_token.as_deref(),
            }),
        };
        self.send(step, &request);
        self.auth_token = auth_token;
    }

    fn note_rtt(&mut self, now: Instant) {
        self.outcome.answered(&mut self.retry, now);
    }

    fn auth_required(&self) -> QueryError {
        let what = match self.step {
            Step::Players { .. } => "its player list",
            _ => "its status",
        };
        let message = match self.auth_token {
            None => format!("the server shares {what} only with an auth token; none was given"),
            Some(_) => format!(
                "the server refused the auth token for {what} (unknown, or lacks the permission)"
            ),
        };
        QueryError::AuthRequired(message.into())
    }

    fn on_query_reply(&mut self, reply: &QueryReply<'_>, now: Instant) {
        if self.step == Step::Challenge || self.request_id != Some(reply.request_id) {
            // Not an answer to a request this session has outstanding.
            return;
        }
        if reply.flags.contains(ReplyFlags::AUTH_REQUIRED) {
            self.note_rtt(now);
            let error = self.auth_required();
            if matches!(self.step, Step::Players { .. }) && self.basic.is_some() {
                // The status is in; only the player list is refused.
                self.players_error = Some(error.to_string());
                self.complete();
            } else {
                self.outcome.finish(Err(error));
            }
            return;
        }
        match self.step {
            Step::Challenge => {}
            Step::Basic => self.on_basic(reply, now),
            Step::Players { offset } => self.on_players(reply, offset, now),
        }
    }

    fn on_basic(&mut self, reply: &QueryReply<'_>, now: Instant) {
        let Some(info) = reply.payload.iter().find_map(|entry| match entry {
            Payload::ServerInfo(info) => Some(info),
            _ => None,
        }) else {
            self.outcome
                .note_malformed(QueryError::protocol("a BASIC reply without SERVER_INFO"));
            return;
        };
        self.note_rtt(now);
        self.basic = Some(Basic {
            name: info.server_name.to_owned(),
            version: info.version.to_owned(),
            player_count: info.player_count,
            max_players: info.max_players,
            flags: reply.flags,
            raw: serde_json::to_value(info).unwrap_or(serde_json::Value::Null),
        });
        if self.want_players {
            self.send_query(Step::Players { offset: 0 });
        } else {
            self.complete();
        }
    }

    fn on_players(&mut self, reply: &QueryReply<'_>, offset: u32, now: Instant) {
        let Some(page) = reply.payload.iter().find_map(|entry| match entry {
            Payload::PlayerList(page) => Some(page),
            _ => None,
        }) else {
            // A BASIC answer to a damaged PLAYERS request, or a broken server: try again.
            self.outcome
                .note_malformed(QueryError::protocol("a PLAYERS reply without PLAYER_LIST"));
            return;
        };
        if page.offset != offset {
            self.outcome.note_malformed(QueryError::protocol(format!(
                "asked for players from {offset}, got a page from {}",
                page.offset
            )));
            return;
        }
        self.note_rtt(now);
        self.pages += 1;
        self.total_players = Some(page.total);
        self.players.extend(page.players.iter().map(|p| Player {
            name: p.username.to_owned(),
            uuid: Some(p.uuid),
            ..Player::default()
        }));
        let more = reply.flags.contains(ReplyFlags::HAS_MORE_PLAYERS);
        let received = u32::try_from(page.players.len()).unwrap_or(u32::MAX);
        if more && received > 0 && self.pages < MAX_PAGES {
            self.send_query(Step::Players {
                offset: offset.saturating_add(received),
            });
            return;
        }
        self.truncated = more;
        self.complete();
    }

    fn complete(&mut self) {
        let Some(basic) = self.basic.take() else {
            return;
        };
        let received = u32::try_from(self.players.len()).unwrap_or(u32::MAX);
        let complete = !self.truncated
            && self.players_error.is_none()
            && match self.total_players {
                Some(total) => received >= total,
                None => true,
            };
        let mut raw = serde_json::json!({
            "server_info": basic.raw,
            "flags": basic.flags.bits(),
            "is_network": basic.flags.contains(ReplyFlags::IS_NETWORK),
            "player_pages": self.pages,
            "total_players": self.total_players,
        });
        if let (Some(error), Some(raw)) = (self.players_error.take(), raw.as_object_mut()) {
            raw.insert("players_error".to_owned(), error.into());
        }
        let status = ServerStatus {
            protocol: Protocol::OneQuery,
            address: self.target,
            name: basic.name,
            map: None,
            game_type: None,
            version: Some(basic.version),
            num_players: u32::try_from(basic.player_count).unwrap_or(0),
            max_players: u32::try_from(basic.max_players).unwrap_or(0),
            password: None,
            players: std::mem::take(&mut self.players),
            teams: Vec::new(),
            rules: Default::default(),
            ping_ms: self.outcome.best_rtt().as_secs_f64() * 1000.0,
            complete,
            raw,
        };
        self.outcome.finish(Ok(status));
    }
}

impl ClientSession for OneQueryClient {
    type Output = ServerStatus;

    bookkeeping!(target, waiting_for, sending, poll_result);

    fn on_reply(&mut self, datagram: &[u8], now: Instant) {
        if self.outcome.is_finished() {
            return;
        }
        let reply = match Reply::from_bytes(datagram) {
            Ok(reply) => reply,
            Err(e) => {
                self.outcome.note_malformed(e);
                return;
            }
        };
        if reply.family != self.family.reply() {
            return;
        }
        match (&reply.body, self.step) {
            (ReplyBody::Challenge(challenge), Step::Challenge) => {
                self.note_rtt(now);
                self.token = challenge.token;
                self.send_query(Step::Basic);
            }
            // A duplicate challenge once the query is under way.
            (ReplyBody::Challenge(_), _) => {}
            (ReplyBody::Query(query), _) => self.on_query_reply(query, now),
        }
    }

    /// With the BASIC reply in: the status with the player pages that came, `complete: false`
    /// and `why` in `raw.players_error`. Before it: `why`.
    fn give_up(&mut self, why: QueryError, now: Instant) -> Result<ServerStatus, QueryError> {
        self.retry.finish(now);
        if !self.outcome.is_finished() && self.basic.is_some() {
            // The status is in; the player pages that did not come are what is missing.
            self.players_error = Some(why.to_string());
            self.complete();
        }
        self.outcome.end().unwrap_or(Err(why))
    }
}
