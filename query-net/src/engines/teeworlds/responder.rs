//! The Teeworlds / DDNet responder: `gie3` answered from the server state.
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
//! - Text is UTF-8, NUL bytes (which would end a string) removed; names are cut to 15 bytes,
//!   clans to 11, maps and versions to 31, game types to 15 and server names to 255 (the
//!   lengths Teeworlds and DDNet use).
//!
//! The request has no challenge and the reply echoes a token the client chose: every reply
//! goes to an address nobody verified, so it is charged to the byte budget of unproven
//! sources by the [`Service`](crate::service::Service) that runs the responder. The replies
//! are built as the specs' declared values once per state snapshot; each request encodes them
//! with its token through the declarations' views, and allocates nothing.

use std::net::SocketAddr;
use std::ops::Range;

use query_specs::teeworlds::{
    Client, ExtendedInfoView, ExtendedMoreView, InfoView, ReplyView, Request, MAX_DATAGRAM,
    VANILLA_MAX_CLIENTS,
};
use query_wire::{Decode, Encode, Text};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit::cut_utf8;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// The most players an extended reply lists (DDNet's `MAX_CLIENTS`).
pub const MAX_LISTED: usize = 128;
/// The largest token a request carries (24 bits): the widest one a datagram must hold.
const MAX_TOKEN: u32 = 0x00ff_ffff;
/// The version sent when the state has none.
const DEFAULT_VERSION: &str = "0.6.4";

/// How a [`TeeworldsResponder`] answers, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeeworldsConfig {
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for TeeworldsConfig {
    /// 1400-byte datagrams, as Teeworlds sends.
    fn default() -> Self {
        TeeworldsConfig {
            max_datagram: MAX_DATAGRAM,
        }
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
    config: TeeworldsConfig,
    built: SnapshotCache<Built, usize>,
}

impl TeeworldsResponder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: TeeworldsConfig) -> Self {
        TeeworldsResponder {
            state,
            config,
            built: SnapshotCache::new(),
        }
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
        };
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

impl Responder for TeeworldsResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = Request::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let max = self.config.max_datagram.min(replies.max_datagram());
        let Ok((_, built)) = self
            .built
            .get(&self.state, max, |state, _| Built::build(state, max))
        else {
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
        match sent {
            Ok(()) => Verdict::Answered,
            Err(_) => Verdict::Dropped(DropReason::Unsupported),
        }
    }
}
