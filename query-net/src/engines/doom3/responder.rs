//! The Doom 3 engine responder: `getInfo` answered from the server state in one game's
//! layout, as a Doom 3, Quake 4 or ETQW server does.
//!
//! - `getInfo` and a challenge of at least 4 bytes (clients send more: qstat and gamedig
//!   send `PiNGPoNg\0`) → one datagram echoing its first 4 bytes: Doom 3 and Quake 4 an
//!   `infoResponse` with their protocol version ([`Doom3Config::version`]), ETQW its own
//!   `infoResponse` (`FF FF FF FF`, the version and the size after the challenge), the form
//!   qstat, gamedig and opengsq read from ETQW: the server fields (not ranked, no time left,
//!   playing, a regular server with no one waiting), then each player's statistics (the
//!   state's score as both experience points and kills, the team), which those clients do not
//!   read and the `doom3` client does.
//!   A request with a shorter challenge is dropped: a real server would echo bytes it never
//!   read.
//! - The pairs: `si_name`, `si_map`, `si_gameType`, `si_version`, `si_maxPlayers`,
//!   `si_usepass`, `gamename` (when configured), then the state's rules; the players, one
//!   slot each up to the engine's 32 (rate 0: the state has none); the OS mask 1 (Windows);
//!   Quake 4's 5 bytes after it as a real server sends them.
//! - Never split: when the reply would pass the datagram cap (1,400 bytes, and the service's),
//!   rules are left out from the end, then players (a client shows the players; the rules
//!   are extras).
//! - Text goes out as Latin-1 (the engine's); characters it lacks and NUL become `?`, keys
//!   and values are cut to 127 bytes, names and clan tags to 32.
//!
//! The reply is encoded through the specs' declarations once per state snapshot and datagram
//! cap, with a zero challenge; each request copies its bytes and writes its challenge in.

use std::borrow::Cow;
use std::net::SocketAddr;

use query_specs::doom3::{
    EmptyValue, EtqwBody, EtqwInfoResponse, EtqwMarker, EtqwStats, GetInfo, Info, InfoResponse,
    Layout, Player, ServerType, ENCODING, INFO_HEADER,
};
use query_wire::kv::{FromKeyValues, KvBlock};
use query_wire::{Decode, Encode, Text};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{PlayerState, RuleValue, ServerState, SharedState};

/// Names and clan tags are cut to this many bytes.
pub const MAX_NAME: usize = 32;
/// Keys and values are cut to this many bytes.
const MAX_TEXT: usize = 127;
/// The engine's player slots: ids 0 to 31 (32 ends the list).
const MAX_PLAYERS: usize = 32;
/// The largest reply datagram unless configured otherwise.
pub const MAX_DATAGRAM: usize = 1400;
/// The OS mask sent: bit 0, Windows.
const OS_MASK: u32 = 1;
/// What a real Quake 4 server adds after the OS mask (its meaning is not documented; sent as
/// captured, for clients that read it).
const QUAKE4_TAIL: [u8; 5] = [0, 0, 0, 0, 1];

/// How a [`Doom3Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Doom3Config {
    /// Which game's reply and player layout to send.
    pub layout: Layout,
    /// The protocol version sent, `major << 16 | minor`; for `infoResponse` its major number
    /// is what tells clients the player layout.
    pub version: u32,
    /// `gamename` (`baseDOOM-1`); not sent when empty.
    pub game_name: String,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Doom3Config {
    /// What a server of `layout`'s game sends: Doom 3 1.41 `baseDOOM-1`, Quake 4 2.85
    /// `Q4MP`, ETQW 10.21 `baseETQW-1`.
    pub fn of(layout: Layout) -> Self {
        let (version, game_name) = match layout {
            Layout::Doom3 => ((1 << 16) | 41, "baseDOOM-1"),
            Layout::Quake4 => ((2 << 16) | 85, "Q4MP"),
            Layout::Etqw => ((10 << 16) | 21, "baseETQW-1"),
        };
        Doom3Config {
            layout,
            version,
            game_name: game_name.to_owned(),
            max_datagram: MAX_DATAGRAM,
        }
    }
}

impl Default for Doom3Config {
    /// Doom 3's.
    fn default() -> Self {
        Doom3Config::of(Layout::Doom3)
    }
}

/// Answers Doom 3 engine `getInfo` queries from a [`SharedState`]; see the [module](self)
/// docs.
///
/// ```
/// use query_net::engines::doom3::{Doom3Config, Doom3Responder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "Box".into(), max_players: 4, ..ServerState::default() });
/// let config = Doom3Config { game_name: String::new(), ..Doom3Config::default() };
/// let mut service = Service::new(Doom3Responder::new(state, config)).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\xff\xffgetInfo\0abcd").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\xff\xffinfoResponse\0abcd\x29\0\x01\0si_name\0Box\0si_maxPlayers\x004\0si_usepass\x000\0\0\0\x20\x01\0\0\0".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct Doom3Responder {
    state: SharedState,
    config: Doom3Config,
    /// The encoded reply of the current snapshot with a zero challenge, for the datagram cap
    /// it was built for.
    reply: SnapshotCache<Vec<u8>, usize>,
}

impl Doom3Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: Doom3Config) -> Self {
        Doom3Responder {
            state,
            config,
            reply: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Doom3Config {
        &self.config
    }
}

impl Responder for Doom3Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(request) = GetInfo::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let Some(challenge) = request.challenge.first_chunk::<4>() else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let max = self.config.max_datagram.min(replies.max_datagram());
        let config = &self.config;
        let built = self
            .reply
            .get(&self.state, max, |state, _| build(state, config, max));
        let Ok((_, reply)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        // Every layout echoes the challenge right after the header.
        let at = INFO_HEADER.len();
        let sent = replies.push_with(|buf| {
            let Some(out) = buf.get_mut(..reply.len()) else {
                return Err(());
            };
            out.copy_from_slice(reply);
            out[at..at + 4].copy_from_slice(challenge);
            Ok(reply.len())
        });
        Verdict::pushed(sent)
    }
}

/// The reply for `state` with a zero challenge, at most `max` bytes: rules, then players,
/// left out from the end until it fits.
fn build(
    state: &ServerState,
    config: &Doom3Config,
    max: usize,
) -> Result<Vec<u8>, query_wire::Error> {
    let mut info = info(state, config);
    let mut players: Vec<(Player<'static>, EtqwStats<'static>)> = state
        .players
        .iter()
        .take(MAX_PLAYERS)
        .enumerate()
        .map(|(slot, p)| player(slot, p, config.layout))
        .collect();
    loop {
        let reply = encode(config, &info, &players)?;
        if reply.len() <= max {
            return Ok(reply);
        }
        if info.rules.pop().is_none() && players.pop().is_none() {
            return Err(query_wire::Error::new(
                query_wire::ErrorKind::TooLong {
                    len: reply.len(),
                    max,
                },
                0,
            ));
        }
    }
}

/// The whole reply of `config`'s layout.
fn encode(
    config: &Doom3Config,
    info: &Info<'_>,
    players: &[(Player<'_>, EtqwStats<'_>)],
) -> Result<Vec<u8>, query_wire::Error> {
    let info = KvBlock(info.clone());
    let wire_players = players.iter().map(|(p, _)| p.clone()).collect();
    match config.layout {
        Layout::Doom3 | Layout::Quake4 => InfoResponse {
            challenge: [0; 4],
            version: config.version,
            info,
            end_of_info: EmptyValue {},
            players: wire_players,
            os_mask: OS_MASK,
            tail: if config.layout == Layout::Quake4 {
                &QUAKE4_TAIL[..]
            } else {
                &[]
            },
        }
        .to_vec(),
        Layout::Etqw => EtqwInfoResponse {
            challenge: [0; 4],
            marker: EtqwMarker {},
            version: config.version,
            body: EtqwBody {
                info,
                end_of_info: EmptyValue {},
                players: wire_players,
                os_mask: OS_MASK,
                ranked: false,
                time_left: 0,
                game_state: 2,
                server_type: ServerType::Regular {
                    interested_clients: 0,
                },
                stats: Some(players.iter().map(|(_, s)| s.clone()).collect()),
            },
        }
        .to_vec(),
    }
}

/// `text` as it can go on the wire: NUL and characters Latin-1 lacks become `?`, cut to
/// `max` bytes.
fn wire_text(text: &str, max: usize) -> String {
    fit::replace_unsendable(fit::cut(text, ENCODING, max), ENCODING, &['\0']).into_owned()
}

/// The pairs of `state`, its rules after the keys clients read.
fn info(state: &ServerState, config: &Doom3Config) -> Info<'static> {
    let text = |s: &str| -> Cow<'static, str> { Cow::Owned(wire_text(s, MAX_TEXT)) };
    let non_empty = |s: &str| (!s.is_empty()).then(|| text(s));
    let rules = state
        .rules
        .iter()
        .map(|(key, value)| {
            let value = match value {
                RuleValue::Text(t) => text(t),
                other => text(&other.to_string()),
            };
            (text(key), value)
        })
        .filter(|(key, _)| {
            !key.is_empty() && !<Info<'_> as FromKeyValues<'_>>::declares_key(key.as_bytes())
        })
        .collect();
    Info {
        name: Some(text(&state.name)),
        map: non_empty(&state.map),
        game_type: non_empty(&state.game_type),
        version: non_empty(&state.version),
        max_players: Some(state.max_players),
        password: Some(state.password),
        game_name: non_empty(&config.game_name),
        rules,
    }
}

/// The player in `slot`, and its ETQW statistics (sent only in ETQW's layout).
fn player(slot: usize, p: &PlayerState, layout: Layout) -> (Player<'static>, EtqwStats<'static>) {
    let id = u8::try_from(slot).unwrap_or(u8::MAX);
    let name = |s: &str| {
        Text(Cow::Owned(
            ENCODING.encode_lossy(&wire_text(s, MAX_NAME)).into_owned(),
        ))
    };
    let player = Player {
        id,
        ping: u16::try_from(p.ping).unwrap_or(u16::MAX),
        rate: (layout != Layout::Etqw).then_some(0),
        name: name(&p.name),
        clan_position: (layout == Layout::Etqw).then_some(0),
        clan: (layout != Layout::Doom3).then(|| Text::from_bytes(b"")),
        bot: (layout == Layout::Etqw).then_some(false),
    };
    let stats = EtqwStats {
        id,
        xp: p.score as f32,
        team: name(p.team.as_deref().unwrap_or_default()),
        kills: u32::try_from(p.score.max(0)).unwrap_or(u32::MAX),
        deaths: 0,
    };
    (player, stats)
}
