//! The Teeworlds / DDNet responder: 0.6's `gie3` and 0.7's token exchange answered from the
//! server state.
//!
//! - The 0.6 request (`FF` × 10, `gie3`, a token byte) gets one `inf3` datagram: the state's
//!   version (`0.6.4` when empty), name, map and game type, flag 1 when a password is set,
//!   the players as players and clients, `max_players` as both kinds of slots, then up to 16
//!   players, each with an empty clan, country `-1`, the score and `1` (playing). As DDNet
//!   does for 0.6 clients, counts above 16 are sent as 16.
//! - DDNet's request (`xe`, two token bytes, two reserved bytes, `FF FF FF FF gie3`, the token
//!   byte) gets `iext` and, while players remain, `iex+` datagrams numbered from 1, each
//!   filled up to [`TeeworldsConfig::max_datagram`] bytes, listing up to [`MAX_LISTED`]
//!   players (DDNet's most clients); the counts are the state's, so that a client sees a list
//!   cut short as such. The map's CRC and size are sent as 0 (the state has no map file).
//! - 0.7's token request (`04 00 00 FF FF FF FF 05`, the client's token, 508 zeros) gets the
//!   token reply (12 bytes for 520): the client's token and a token for its address, a keyed
//!   MAC of the address and the time ([`KeyedChallenge`], valid for one to two
//!   [`TeeworldsConfig::token_window`]s), so nothing is kept per client. 0.7's info request
//!   is answered only when it carries such a token for its source address; any other token
//!   is dropped ([`DropReason::BadChallenge`]), so the reply, which is larger than the
//!   request, only ever goes to an address that proved it receives. The reply (`inf3`) has
//!   the 0.6 reply's values, an empty host name, skill level 1 (normal, the real server's
//!   default), the counts unclamped, and the players that fit in one datagram (at most
//!   [`MAX_LISTED_SEVEN`]), each with country `-1` and flags `0` (playing); real 0.7 servers
//!   send one datagram too.
//! - Text is UTF-8, NUL bytes (which would end a string) removed; names are cut to 15 bytes,
//!   clans to 11, maps and versions to 31, game types to 15 and server names to 255 (the
//!   lengths Teeworlds and DDNet use).
//!
//! 0.6's request has no challenge and its reply echoes a token the client chose: every such
//! reply goes to an address nobody verified, so it is charged to the byte budget of unproven
//! sources by the [`Service`](crate::service::Service) that runs the responder. The replies
//! are built as the specs' declared values once per state snapshot; each request encodes them
//! with its token through the declarations' views, and allocates nothing.

use std::net::SocketAddr;
use std::ops::Range;
use std::time::{Duration, SystemTime};

use query_specs::teeworlds::seven as spec7;
use query_specs::teeworlds::{
    Client, ExtendedInfoView, ExtendedMoreView, InfoView, ReplyView, Request, MAX_DATAGRAM,
    VANILLA_MAX_CLIENTS,
};
use query_wire::{Decode, Encode, Text};

use crate::challenge::KeyedChallenge;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit::cut_utf8;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// The most players an extended reply lists (DDNet's `MAX_CLIENTS`).
pub const MAX_LISTED: usize = 128;
/// The most players a 0.7 reply lists (Teeworlds 0.7's `MAX_CLIENTS`).
pub const MAX_LISTED_SEVEN: usize = spec7::MAX_CLIENTS;
/// The widest browser token a 0.7 request carries (five bytes packed).
const WIDEST_BROWSER_TOKEN: i32 = i32::MIN;
/// The skill level sent: normal, as the real server's default.
const SKILL_LEVEL: u32 = 1;
/// The largest token a request carries (24 bits): the widest one a datagram must hold.
const MAX_TOKEN: u32 = 0x00ff_ffff;
/// The version sent when the state has none.
const DEFAULT_VERSION: &str = "0.6.4";

/// How a [`TeeworldsResponder`] answers, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeeworldsConfig {
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
    /// How long a 0.7 token stays valid: between this and twice this.
    pub token_window: Duration,
}

impl Default for TeeworldsConfig {
    /// 1400-byte datagrams, as Teeworlds sends; 0.7 tokens valid for 30 to 60 seconds.
    fn default() -> Self {
        TeeworldsConfig {
            max_datagram: MAX_DATAGRAM,
            token_window: Duration::from_secs(30),
        }
    }
}

/// A 0.7 token of a MAC's 32 bits: the MAC, except the one value that means "no token"
/// ([`spec7::TOKEN_NONE`], all bits set: `-1` read signed).
fn seven_token(mac: i32) -> i32 {
    if mac == -1 {
        0
    } else {
        mac
    }
}

/// Answers Teeworlds and DDNet server info requests from a [`SharedState`]; see the
/// [module](self) docs.
///
/// ```
/// use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Tee".into(), map: "dm1".into(), max_players: 8, ..ServerState::default() });
/// let mut service = Service::new(TeeworldsResponder::new(state, TeeworldsConfig::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let request = b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x05";
/// let replies: Vec<Vec<u8>> = service.handle(from, request).map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffinf35\x000.6.4\x00Tee\x00dm1\x00\x000\x000\x008\x000\x008\x00".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct TeeworldsResponder {
    state: SharedState,
    tokens: KeyedChallenge,
    config: TeeworldsConfig,
    built: SnapshotCache<Built, usize>,
}

impl TeeworldsResponder {
    /// Answers from `state` as `config` says, with a random key for 0.7 tokens.
    pub fn new(state: SharedState, config: TeeworldsConfig) -> Self {
        TeeworldsResponder {
            state,
            tokens: KeyedChallenge::new(config.token_window).shaped(seven_token),
            config,
            built: SnapshotCache::new(),
        }
    }

    /// Derives 0.7 tokens from `secret` instead of a random key, so that several responders
    /// behind one address accept each other's.
    #[must_use]
    pub fn with_secret(mut self, secret: &[u8; 32]) -> Self {
        self.tokens = self.tokens.rekeyed(secret);
        self
    }

    /// The 0.7 token `client` is given at `wall`.
    pub fn token(&self, client: SocketAddr, wall: SystemTime) -> u32 {
        self.tokens.issue(client, wall).cast_unsigned()
    }

    /// The replies of the current snapshot, built for the datagram cap of `replies` and the
    /// configuration's, whichever is smaller.
    fn built(&mut self, replies: &ReplySink) -> Result<&Built, query_wire::Error> {
        let max = self.config.max_datagram.min(replies.max_datagram());
        let (_, built) = self
            .built
            .get(&self.state, max, |state, _| Built::build(state, max))?;
        Ok(built)
    }

    /// A 0.7 request from `from`: the token reply, or the info reply for a valid token.
    fn handle_seven(
        &mut self,
        from: SocketAddr,
        request: spec7::Request,
        wall: SystemTime,
        replies: &mut ReplySink,
    ) -> Verdict {
        let info = match request {
            spec7::Request::Token(request) => {
                let reply = SevenReply::Token(spec7::TokenReply {
                    client_token: request.client_token,
                    server_token: self.token(from, wall),
                    ..spec7::TokenReply::default()
                });
                return Verdict::pushed(replies.push_encoded(&reply, ()));
            }
            spec7::Request::Info(info) => info,
        };
        if !self
            .tokens
            .accepts(from, info.server_token.cast_signed(), wall)
        {
            return Verdict::Dropped(DropReason::BadChallenge);
        }
        // Only `from` was given this token: the source is not spoofed.
        replies.mark_proven();
        let server_token = self.token(from, wall);
        let Ok(built) = self.built(replies) else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let reply = built.seven_reply(info.client_token, server_token, info.token);
        Verdict::pushed(replies.push_encoded(&reply, ()))
    }
}

/// What one state snapshot is answered with, for one datagram size.
#[derive(Debug)]
struct Built {
    version: Text<'static>,
    name: Text<'static>,
    map: Text<'static>,
    game_type: Text<'static>,
    flags: u32,
    num_players: u32,
    max_players: u32,
    /// The players of `inf3`, reserved strings left out.
    vanilla: Vec<Client<'static>>,
    /// The players of the extended reply, and which of them each datagram lists.
    extended: Vec<Client<'static>>,
    datagrams: Vec<Range<usize>>,
    /// The players of the 0.7 reply: those that fit in one datagram.
    seven: Vec<spec7::Client<'static>>,
}

/// `text` as a Teeworlds string: NUL bytes removed, cut to `max` bytes between characters.
fn wire_text(text: &str, max: usize) -> Text<'static> {
    let clean = text.replace('\0', "");
    Text::from(cut_utf8(&clean, max)).into_owned()
}

fn borrowed<'t>(text: &'t Text<'_>) -> Text<'t> {
    Text::from_bytes(text.as_bytes())
}

impl Built {
    fn build(state: &ServerState, max_datagram: usize) -> Result<Built, query_wire::Error> {
        let client = |name: &str, score: i64, extended: bool| Client {
            name: wire_text(name, 15),
            clan: Text::from(""),
            country: -1,
            score: crate::engines::fit::saturate_i32(score),
            is_player: 1,
            reserved: extended.then(|| Text::from("")),
        };
        let version = if state.version.is_empty() {
            DEFAULT_VERSION
        } else {
            state.version.as_str()
        };
        let mut built = Built {
            version: wire_text(version, 31),
            name: wire_text(&state.name, 255),
            map: wire_text(&state.map, 31),
            game_type: wire_text(&state.game_type, 15),
            flags: u32::from(state.password),
            num_players: state.num_players(),
            max_players: state.max_players,
            vanilla: state
                .players
                .iter()
                .take(VANILLA_MAX_CLIENTS)
                .map(|p| client(&p.name, p.score, false))
                .collect(),
            extended: state
                .players
                .iter()
                .take(MAX_LISTED)
                .map(|p| client(&p.name, p.score, true))
                .collect(),
            datagrams: Vec::new(),
            seven: Vec::new(),
        };
        built.fit_seven(state, max_datagram);
        // Fill each datagram with the players that fit beside its head, sized for the
        // widest token.
        let mut start = 0;
        loop {
            let number = built.datagrams.len();
            let mut len = built
                .extended_reply(MAX_TOKEN, number, start..start)?
                .encoded_len(());
            let mut end = start;
            while let Some(next) = built.extended.get(end) {
                let more = next.encoded_len(true);
                if len + more > max_datagram {
                    break;
                }
                len += more;
                end += 1;
            }
            if len > max_datagram || (end == start && start < built.extended.len()) {
                return Err(query_wire::Error::new(
                    query_wire::ErrorKind::TooLong {
                        len,
                        max: max_datagram,
                    },
                    0,
                ));
            }
            built.datagrams.push(start..end);
            start = end;
            if start == built.extended.len() {
                return Ok(built);
            }
        }
    }

    /// The 0.7 players that fit in one datagram beside the reply's head, sized for the
    /// widest browser token. A head that does not fit lists nobody, and encoding its reply
    /// fails then (the 0.6 replies may still fit).
    fn fit_seven(&mut self, state: &ServerState, max_datagram: usize) {
        let mut len = self.seven_reply(0, 0, WIDEST_BROWSER_TOKEN).encoded_len(());
        for player in state.players.iter().take(MAX_LISTED_SEVEN) {
            let client = spec7::Client {
                name: wire_text(&player.name, 15),
                clan: Text::from(""),
                country: -1,
                score: crate::engines::fit::saturate_i32(player.score),
                flags: 0,
            };
            let more = client.encoded_len(());
            if len + more > max_datagram {
                break;
            }
            len += more;
            self.seven.push(client);
        }
    }

    /// The 0.7 info reply to the client whose token is `client_token`.
    fn seven_reply(&self, client_token: u32, server_token: u32, token: i32) -> SevenReply<'_> {
        spec7::ReplyView::Info(spec7::InfoReplyView {
            client_token,
            server_token,
            tag: spec7::InfoTag {},
            token,
            version: borrowed(&self.version),
            name: borrowed(&self.name),
            hostname: Text::from(""),
            map: borrowed(&self.map),
            game_type: borrowed(&self.game_type),
            flags: self.flags,
            skill_level: SKILL_LEVEL,
            num_players: self.num_players,
            max_players: self.max_players,
            num_clients: self.num_players,
            max_clients: self.max_players.max(self.num_players),
            clients: &self.seven[..],
        })
    }

    /// `inf3` for `token`.
    fn vanilla_reply(&self, token: u32) -> Reply<'_> {
        let clamp = |n: u32| n.min(VANILLA_MAX_CLIENTS as u32);
        let listed = u32::try_from(self.vanilla.len()).unwrap_or(u32::MAX);
        let clients = clamp(self.num_players).max(listed);
        ReplyView::Info(InfoView {
            token,
            version: borrowed(&self.version),
            name: borrowed(&self.name),
            map: borrowed(&self.map),
            game_type: borrowed(&self.game_type),
            flags: self.flags,
            num_players: clients,
            max_players: clamp(self.max_players),
            num_clients: clients,
            max_clients: clamp(self.max_players),
            clients: &self.vanilla[..],
        })
    }

    /// Datagram `number` of the extended reply for `token`, listing the players in `range`.
    fn extended_reply(
        &self,
        token: u32,
        number: usize,
        range: Range<usize>,
    ) -> Result<Reply<'_>, query_wire::Error> {
        let clients = &self.extended[range];
        if number == 0 {
            return Ok(ReplyView::Extended(ExtendedInfoView {
                token,
                version: borrowed(&self.version),
                name: borrowed(&self.name),
                map: borrowed(&self.map),
                map_crc: 0,
                map_size: 0,
                game_type: borrowed(&self.game_type),
                flags: self.flags,
                num_players: self.num_players,
                max_players: self.max_players,
                num_clients: self.num_players,
                max_clients: self.max_players.max(self.num_players),
                reserved: Text::from(""),
                clients,
            }));
        }
        Ok(ReplyView::More(ExtendedMoreView {
            token,
            number: u32::try_from(number).map_err(|_| {
                query_wire::Error::new(query_wire::ErrorKind::Invalid("too many datagrams"), 0)
            })?,
            reserved: Text::from(""),
            clients,
        }))
    }
}

/// A reply as the responder encodes it: the declared [`Reply`](query_specs::teeworlds::Reply)'s
/// view, its clients borrowed from the snapshot's.
type Reply<'b> = ReplyView<
    InfoView<'b, &'b [Client<'static>]>,
    ExtendedInfoView<'b, &'b [Client<'static>]>,
    ExtendedMoreView<'b, &'b [Client<'static>]>,
>;

/// A 0.7 reply as the responder encodes it, its clients borrowed from the snapshot's.
type SevenReply<'b> = spec7::ReplyView<spec7::InfoReplyView<'b, &'b [spec7::Client<'static>]>>;

impl Responder for TeeworldsResponder {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::from_bytes(datagram) else {
            return match spec7::Request::from_bytes(datagram) {
                Ok(request) => self.handle_seven(from, request, now.wall, replies),
                Err(_) => Verdict::Dropped(DropReason::Malformed),
            };
        };
        let Ok(built) = self.built(replies) else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let token = request.token();
        let sent = match request {
            Request::Vanilla { .. } => replies.push_encoded(&built.vanilla_reply(token), ()),
            Request::Extended { .. } => {
                built
                    .datagrams
                    .iter()
                    .enumerate()
                    .try_for_each(|(number, range)| {
                        let reply = built.extended_reply(token, number, range.clone())?;
                        replies.push_encoded(&reply, ())
                    })
            }
        };
        Verdict::pushed(sent)
    }
}
