//! The OneQuery server side: stateless challenge tokens, BASIC and paged PLAYERS replies
//! encoded through the declared views, and who may ask for what.

use std::net::SocketAddr;

use query_specs::onequery::{
    ChallengeReply, Family, PayloadView, Player as WirePlayer, PlayerListView, QueryReplyView,
    Reply, ReplyBody, ReplyBodyView, ReplyFamily, ReplyFlags, ReplyView, Request, ServerInfo,
    KIND_CHALLENGE, KIND_PLAYERS, MAX_DATAGRAM, TOKEN_LEN,
};
use query_wire::{bitflags, items, Decode, Encode, Reserved, Uuid};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::token::TokenKey;
use super::PLAYER_PAGE_BUDGET;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::state::{PlayerState, ServerState, SharedState};

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
            return Verdict::pushed(replies.push_encoded(&reply, ()));
        };
        if !self.key.verify(&query.token, from.ip(), now.wall) {
            return Verdict::Dropped(DropReason::BadChallenge);
        }
        // Only `from`'s address was given this token: the source is not spoofed.
        replies.mark_proven();
        let needed = if request.kind == KIND_PLAYERS {
            Permissions::PLAYERS
        } else {
            Permissions::BASIC
        };
        let allowed = self.access.granted(query.auth_token).contains(needed);
        let state = self.state.load();
        let max = replies.max_datagram().min(MAX_DATAGRAM);
        // Only a datagram cap smaller than a BASIC reply fails.
        Verdict::pushed(replies.push_with(|buf| {
            let end = max.min(buf.len());
            let buf = &mut buf[..end];
            let mut flags = state_flags(&state);
            if !allowed {
                flags |= ReplyFlags::AUTH_REQUIRED;
            }
            if allowed && needed == Permissions::PLAYERS {
                encode_players_reply(buf, family, flags, query.request_id, query.offset, &state)
            } else {
                encode_basic_reply(buf, family, flags, query.request_id, &state)
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
        server_name: fit::cut_utf8(&state.name, limits::NAME),
        motd: fit::cut_utf8(&state.motd, limits::MOTD),
        player_count: i32::try_from(state.num_players()).unwrap_or(i32::MAX),
        max_players: i32::try_from(state.max_players).unwrap_or(i32::MAX),
        version: fit::cut_utf8(&state.version, limits::VERSION),
        protocol_version: i32::try_from(state.protocol_version).unwrap_or(i32::MAX),
        protocol_hash: fit::cut_utf8(&state.protocol_hash, limits::PROTOCOL_HASH),
        host: address.map(|host| fit::cut_utf8(host, limits::HOST)),
        port: address.map(|_| state.port),
    }
}

/// A query reply carrying the payload entries `payload`.
fn query_reply<P>(
    family: ReplyFamily,
    flags: ReplyFlags,
    request_id: u32,
    payload: P,
) -> ReplyView<ReplyBodyView<QueryReplyView<P>>> {
    ReplyView {
        family,
        body: ReplyBodyView::Query(QueryReplyView {
            flags,
            request_id,
            payload,
        }),
    }
}

/// The payload of a reply without a player list.
type NoPlayers<'a> = PlayerListView<&'a [WirePlayer<'a>]>;

fn encode_basic_reply(
    buf: &mut [u8],
    family: ReplyFamily,
    flags: ReplyFlags,
    request_id: u32,
    state: &ServerState,
) -> Result<usize, query_wire::Error> {
    let payload = [PayloadView::<NoPlayers<'_>>::ServerInfo(server_info(state))];
    query_reply(family, flags, request_id, &payload[..]).encode_into_with(buf, ())
}

/// One player entry as sent.
fn wire_player(player: &PlayerState) -> WirePlayer<'_> {
    WirePlayer {
        username: fit::cut_utf8(&player.name, limits::USERNAME),
        uuid: player.uuid.unwrap_or(Uuid::nil()),
    }
}

/// The page of players from `offset`: as many entries as fit in [`PLAYER_PAGE_BUDGET`].
fn encode_players_reply(
    buf: &mut [u8],
    family: ReplyFamily,
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
    let page = PlayerListView {
        total: u32::try_from(players.len()).unwrap_or(u32::MAX),
        offset,
        players: items::map(&players[start..start + count], wire_player),
    };
    let payload = [PayloadView::PlayerList(page)];
    query_reply(family, flags, request_id, &payload[..]).encode_into_with(buf, ())
}

#[cfg(test)]
mod tests {
    use super::*;

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
