//! Hytale OneQuery V2: the client session ([`OneQueryClient`]) and the responder
//! ([`OneQueryResponder`]).
//!
//! A query is a challenge (a 32-byte token bound to the client's IP, reusable for 90 to 120
//! seconds), a BASIC query for the server's description, then PLAYERS queries page by page.
//! Tokens are stateless on the server ([`TokenKey`]), so a lost query is simply resent.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::onequery::{
    ChallengeReply, Family, Payload, Player as WirePlayer, Query, QueryReply, Reply, ReplyBody,
    ReplyFlags, Request, RequestFlags, ServerInfo, KIND_BASIC, KIND_CHALLENGE, KIND_PLAYERS,
    MAX_DATAGRAM, TOKEN_LEN,
};
use query_wire::{bitflags, Decode, Encode, Endian, Reserved, Uuid, Writer};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::StatusSession;
use crate::clock::Now;
use crate::engine::{ClientSession, DropReason, ReplySink, Responder, Retry, Verdict};
use crate::error::QueryError;
use crate::onequery_token::TokenKey;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::state::{ServerState, SharedState};
use crate::status::{Player, ServerStatus};

/// A status query of `target`.
pub fn client(target: SocketAddr, options: &Options) -> Result<StatusSession, QueryError> {
    Ok(Box::new(OneQueryClient::new(target, options)?))
}

/// The most PLAYERS pages a client asks for: 64 pages hold thousands of players, and a server
/// that keeps saying "more" past that is not trusted further.
pub const MAX_PAGES: u32 = 64;

/// The player-entry bytes a page carries at most, as in the reference server. With the headers
/// the datagram stays well under [`MAX_DATAGRAM`].
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
    best_rtt: Option<Duration>,
    last_bad: Option<QueryError>,
    result: Option<Result<ServerStatus, QueryError>>,
    finished: bool,
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
            best_rtt: None,
            last_bad: None,
            result: None,
            finished: false,
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
            self.finish(Err(QueryError::protocol(format!(
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

    fn finish(&mut self, result: Result<ServerStatus, QueryError>) {
        self.finished = true;
        self.result = Some(result);
    }

    fn note_rtt(&mut self, now: Instant) {
        if let Some(rtt) = self.retry.finish(now) {
            self.best_rtt = Some(self.best_rtt.map_or(rtt, |best| best.min(rtt)));
        }
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
                self.finish(Err(error));
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
            self.last_bad = Some(QueryError::protocol("a BASIC reply without SERVER_INFO"));
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
            self.last_bad = Some(QueryError::protocol("a PLAYERS reply without PLAYER_LIST"));
            return;
        };
        if page.offset != offset {
            self.last_bad = Some(QueryError::protocol(format!(
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
            ping_ms: self.best_rtt.unwrap_or_default().as_secs_f64() * 1000.0,
            complete,
            raw,
        };
        self.finish(Ok(status));
    }
}

impl ClientSession for OneQueryClient {
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
        let reply = match Reply::from_bytes(datagram) {
            Ok(reply) => reply,
            Err(e) => {
                self.last_bad = Some(e.into());
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

    fn poll_timeout(&self) -> Option<Instant> {
        if self.finished {
            return None;
        }
        self.retry.poll_timeout()
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.finished {
            return;
        }
        if let Err(timeout) = self.retry.handle_timeout(now) {
            let error = self.last_bad.take().unwrap_or(timeout);
            self.finish(Err(error));
        }
    }

    fn poll_result(&mut self) -> Option<Result<ServerStatus, QueryError>> {
        self.result.take()
    }
}

bitflags! {
    /// What an auth token (or the public) may ask for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct Permissions: u8 {
        /// BASIC queries: the server's description.
        const BASIC = 0x01;
        /// PLAYERS queries: the player list.
        const PLAYERS = 0x02;
    }
}

/// A shared secret clients send as their auth token, and what it grants.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthSecret {
    /// The token as clients send it.
    pub secret: String,
    /// What it grants, on top of [`Access::public`].
    pub grants: Permissions,
}

impl std::fmt::Debug for AuthSecret {
    /// The secret is never shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthSecret")
            .field("secret", &"<redacted>")
            .field("grants", &self.grants)
            .finish()
    }
}

/// Who may ask for what. Public by default: everyone gets BASIC and PLAYERS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// What requests without a (known) token get.
    pub public: Permissions,
    /// Secrets that grant more.
    pub secrets: Vec<AuthSecret>,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            public: Permissions::all(),
            secrets: Vec::new(),
        }
    }
}

impl Access {
    /// What a request with `token` may ask for. The token is checked against every secret, each
    /// time by comparing SHA-256 digests in constant time: the time taken says neither which
    /// secret came close nor how long the secrets are (a plain comparison of the bytes would
    /// return at once on a length mismatch).
    pub fn granted(&self, token: Option<&str>) -> Permissions {
        let mut granted = self.public;
        if let Some(token) = token {
            let token = Sha256::digest(token.as_bytes());
            for secret in &self.secrets {
                let secret_digest = Sha256::digest(secret.secret.as_bytes());
                if bool::from(secret_digest.as_slice().ct_eq(token.as_slice())) {
                    granted |= secret.grants;
                }
            }
        }
        granted
    }
}

/// Longest strings the responder sends, in bytes (cut at a character boundary). They keep a
/// BASIC reply under [`MAX_DATAGRAM`] whatever the state holds, and a player entry small
/// enough to fit a page.
pub mod limits {
    /// Server name.
    pub const NAME: usize = 255;
    /// Message of the day.
    pub const MOTD: usize = 511;
    /// Server version.
    pub const VERSION: usize = 127;
    /// Protocol hash.
    pub const PROTOCOL_HASH: usize = 127;
    /// Host name.
    pub const HOST: usize = 255;
    /// Player name.
    pub const USERNAME: usize = 255;
}

/// The OneQuery server side: stateless challenge tokens, BASIC and paged PLAYERS replies from a
/// [`SharedState`], optional auth.
///
/// - Tokens come from a [`TokenKey`] (random at start): bound to the client's IP, valid for
///   the current and three previous 30-second windows. A query with a bad, expired or other-IP
///   token is dropped silently ([`DropReason::BadChallenge`]), and so is a query cut before
///   the end of its token (a missing token). Any other request that does not decode, such as
///   a query shorter than the full 51-byte layout, is dropped as [`DropReason::Malformed`].
/// - An unknown query type with a valid token is answered as BASIC.
/// - Auth ([`Access`]): when the request's permission is not granted, the reply sets
///   FLAG_AUTH_REQUIRED and carries a full SERVER_INFO, even for PLAYERS, as the reference
///   server does.
/// - SERVER_INFO ends with host and port (FLAG_HAS_ADDRESS) when the state has both a host
///   and a non-zero port; FLAG_IS_NETWORK follows the state.
/// - A PLAYERS page holds at most [`PLAYER_PAGE_BUDGET`] bytes of entries; FLAG_HAS_MORE_PLAYERS
///   is set when the next entry does not fit. An offset past the end gives an empty page.
/// - Replies are in the family asked: `ONEQUERY` → `ONEREPLY`, `HYQUERY2` → `HYREPLY2`.
/// - Every reply is encoded straight from the borrowed state into the sink, without
///   allocating, and never exceeds [`MAX_DATAGRAM`] bytes.
#[derive(Debug)]
pub struct OneQueryResponder {
    state: SharedState,
    key: TokenKey,
    access: Access,
}

impl OneQueryResponder {
    /// Answers from `state`, public, with a random token key.
    pub fn new(state: SharedState) -> Self {
        OneQueryResponder {
            state,
            key: TokenKey::random(),
            access: Access::default(),
        }
    }

    /// Uses `key` for tokens (tests, or servers that must accept each other's tokens).
    #[must_use]
    pub fn with_key(mut self, key: TokenKey) -> Self {
        self.key = key;
        self
    }

    /// Restricts what may be asked without a token.
    #[must_use]
    pub fn with_access(mut self, access: Access) -> Self {
        self.access = access;
        self
    }

    /// The state it answers from.
    pub fn state(&self) -> &SharedState {
        &self.state
    }
}

impl Responder for OneQueryResponder {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(undecodable(datagram));
        };
        let family = request.family.reply();
        let Some(query) = request.query else {
            let reply = Reply {
                family,
                body: ReplyBody::Challenge(ChallengeReply {
                    token: self.key.issue(from.ip(), now.wall),
                    reserved: Reserved,
                }),
            };
            return verdict(replies.push_encoded(&reply, ()));
        };
        if !self.key.verify(&query.token, from.ip(), now.wall) {
            return Verdict::Dropped(DropReason::BadChallenge);
        }
        let needed = if request.kind == KIND_PLAYERS {
            Permissions::PLAYERS
        } else {
            Permissions::BASIC
        };
        let allowed = self.access.granted(query.auth_token).contains(needed);
        let state = self.state.load();
        let max = replies.max_datagram().min(MAX_DATAGRAM);
        verdict(replies.push_with(|buf| {
            let end = max.min(buf.len());
            let buf = &mut buf[..end];
            let mut flags = state_flags(&state);
            if !allowed {
                flags |= ReplyFlags::AUTH_REQUIRED;
            }
            if allowed && needed == Permissions::PLAYERS {
                write_players_reply(buf, family, flags, query.request_id, query.offset, &state)
            } else {
                write_reply(buf, family, flags, query.request_id, |w| {
                    Payload::ServerInfo(server_info(&state)).encode(w, flags)
                })
            }
        }))
    }
}

/// Why a request that did not decode is dropped: a query cut before the end of its token
/// carries no token at all (a missing challenge); anything else is malformed.
fn undecodable(datagram: &[u8]) -> DropReason {
    let family = datagram
        .get(..8)
        .and_then(|magic| Family::from_bytes(magic).ok());
    let is_query = datagram.get(8).is_some_and(|&kind| kind != KIND_CHALLENGE);
    if family.is_some() && is_query && datagram.len() < TOKEN_END {
        DropReason::BadChallenge
    } else {
        DropReason::Malformed
    }
}

/// Where the token of a query ends: magic, type byte, token.
const TOKEN_END: usize = 8 + 1 + TOKEN_LEN;

fn verdict(pushed: Result<(), query_wire::Error>) -> Verdict {
    match pushed {
        Ok(()) => Verdict::Answered,
        // Only a datagram cap smaller than a BASIC reply gets here.
        Err(_) => Verdict::Dropped(DropReason::Unsupported),
    }
}

fn state_flags(state: &ServerState) -> ReplyFlags {
    let mut flags = ReplyFlags::empty();
    flags.set(ReplyFlags::IS_NETWORK, state.is_network);
    flags.set(
        ReplyFlags::HAS_ADDRESS,
        state.host.is_some() && state.port != 0,
    );
    flags
}

fn server_info(state: &ServerState) -> ServerInfo<'_> {
    let address = state.host.as_deref().filter(|_| state.port != 0);
    ServerInfo {
        server_name: cut(&state.name, limits::NAME),
        motd: cut(&state.motd, limits::MOTD),
        player_count: i32::try_from(state.num_players()).unwrap_or(i32::MAX),
        max_players: i32::try_from(state.max_players).unwrap_or(i32::MAX),
        version: cut(&state.version, limits::VERSION),
        protocol_version: i32::try_from(state.protocol_version).unwrap_or(i32::MAX),
        protocol_hash: cut(&state.protocol_hash, limits::PROTOCOL_HASH),
        host: address.map(|host| cut(host, limits::HOST)),
        port: address.map(|_| state.port),
    }
}

/// Writes a query reply: the header from the declaration (with an empty payload), then the
/// payload entries `write_payload` writes, then the payload length patched in.
fn write_reply(
    buf: &mut [u8],
    family: query_specs::onequery::ReplyFamily,
    flags: ReplyFlags,
    request_id: u32,
    write_payload: impl FnOnce(&mut Writer<'_>) -> Result<(), query_wire::Error>,
) -> Result<usize, query_wire::Error> {
    let header = Reply {
        family,
        body: ReplyBody::Query(QueryReply {
            flags,
            request_id,
            payload: Vec::new(),
        }),
    };
    let header_len = header.encode_into_with(buf, ())?;
    let (head, body) = buf.split_at_mut(header_len);
    let mut w = Writer::new(body);
    write_payload(&mut w)?;
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
    head[header_len - 2..].copy_from_slice(&length.to_le_bytes());
    Ok(header_len + payload)
}

/// One player entry as sent.
fn wire_player(player: &crate::state::PlayerState) -> WirePlayer<'_> {
    WirePlayer {
        username: cut(&player.name, limits::USERNAME),
        uuid: player.uuid.unwrap_or(Uuid::nil()),
    }
}

fn write_players_reply(
    buf: &mut [u8],
    family: query_specs::onequery::ReplyFamily,
    mut flags: ReplyFlags,
    request_id: u32,
    offset: u32,
    state: &ServerState,
) -> Result<usize, query_wire::Error> {
    let players = &state.players;
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(players.len());
    let mut used = 0;
    let mut count = 0;
    for player in &players[start..] {
        let size = wire_player(player).encoded_len(());
        if used + size > PLAYER_PAGE_BUDGET {
            flags |= ReplyFlags::HAS_MORE_PLAYERS;
            break;
        }
        used += size;
        count += 1;
    }
    let total = u32::try_from(players.len()).unwrap_or(u32::MAX);
    let count_field = u32::try_from(count).unwrap_or(u32::MAX);
    write_reply(buf, family, flags, request_id, |w| {
        // The PLAYER_LIST entry: its tag and length, the page header (`total | count | offset`,
        // as [`PlayerList`] declares it; the declared type would need the entries in a `Vec`),
        // then the entries, each encoded by its declaration.
        w.put_number(PLAYER_LIST_TAG, Endian::Little)?;
        let slot = w.begin_length::<u16>(Endian::Little)?;
        for field in [total, count_field, offset] {
            w.put_number(field, Endian::Little)?;
        }
        for player in &players[start..start + count] {
            wire_player(player).encode(w, ())?;
        }
        w.end_length(slot)
    })
}

/// The TLV type of PLAYER_LIST, as the declaration tags [`Payload::PlayerList`].
const PLAYER_LIST_TAG: u16 = 2;

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    super::fit::cut_utf8(text, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_specs::onequery::PlayerList;

    #[test]
    fn the_player_list_tag_matches_the_declaration() {
        let page = Payload::PlayerList(PlayerList {
            total: 0,
            count: 0,
            offset: 0,
            players: Vec::new(),
        });
        assert_eq!(page.tag(), PLAYER_LIST_TAG);
    }

    #[test]
    fn access_grants_public_plus_the_matching_secret() {
        let access = Access {
            public: Permissions::BASIC,
            secrets: vec![
                AuthSecret {
                    secret: "viewer".into(),
                    grants: Permissions::PLAYERS,
                },
                AuthSecret {
                    secret: "other".into(),
                    grants: Permissions::empty(),
                },
            ],
        };
        assert_eq!(access.granted(None), Permissions::BASIC);
        assert_eq!(access.granted(Some("viewe")), Permissions::BASIC);
        assert_eq!(access.granted(Some("viewer")), Permissions::all());
        assert_eq!(access.granted(Some("viewer ")), Permissions::BASIC);
        assert_eq!(access.granted(Some("")), Permissions::BASIC);
        assert_eq!(access.granted(Some("other")), Permissions::BASIC);
        assert!(!format!("{access:?}").contains("viewer"));
    }
}
