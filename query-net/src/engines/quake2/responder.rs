//! The Quake 2 responder: `status` answered from the server state, as a Quake 2 server does.
//!
//! - `status` (any line end, with or without QuakeWorld's options) → one `print` datagram:
//!   the pair line (`hostname`, `mapname`, `gamename` when configured, `gamedir` from the
//!   game type, `version`, `maxclients`, `needpass`, then the state's rules, up to Quake 2's
//!   512-byte info string), then a `frags ping "name"` line per player while they fit the
//!   datagram (1,390 bytes, Quake 2's `MAX_MSGLEN` less its header; the service's cap
//!   applies too). Like a real server it never splits: players that do not fit are left out.
//! - Text goes out in [`Quake2Config::encoding`]; the bytes the format cannot carry (the
//!   backslash in pairs, the quote and newline in names, the newline anywhere) and characters
//!   the encoding lacks become `?`. Names are cut to [`MAX_NAME`] bytes.
//!
//! The reply is encoded through the specs' declarations once per state snapshot and datagram
//! cap; each request copies its bytes.

use std::net::SocketAddr;

use query_specs::quake2::{Dialect, Info, Request, MAX_DATAGRAM};
use query_wire::kv::KvLine;
use query_wire::{Encode, TextEncoding, Writer};

use super::DEFAULT_ENCODING;
use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::quake_family;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// Names are cut to this many bytes (Quake 2 allows 15, its mods more).
pub const MAX_NAME: usize = 32;
/// The pair line stops taking rules once it is this long: Quake 2's `MAX_INFO_STRING`.
const MAX_INFO_BYTES: usize = 512;
/// Keys and values are cut to this many bytes (Quake 2's `MAX_INFO_KEY` / `MAX_INFO_VALUE`).
const MAX_TEXT: usize = 63;

/// How a [`Quake2Responder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quake2Config {
    /// `gamename` (`baseq2`); not sent when empty.
    pub game_name: String,
    /// The encoding of every text on the wire.
    pub encoding: TextEncoding,
    /// The largest reply datagram (the service's own cap applies too).
    pub max_datagram: usize,
}

impl Default for Quake2Config {
    /// `baseq2`, Windows-1252, 1390-byte datagrams.
    fn default() -> Self {
        Quake2Config {
            game_name: "baseq2".to_owned(),
            encoding: DEFAULT_ENCODING,
            max_datagram: MAX_DATAGRAM,
        }
    }
}

/// Answers Quake 2 `status` queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::quake2::{Quake2Config, Quake2Responder};
/// use query_net::service::Service;
/// use query_net::state::{PlayerState, ServerState, SharedState};
///
/// let state = SharedState::new(ServerState {
///     name: "Box".into(),
///     map: "q2dm1".into(),
///     max_players: 8,
///     players: vec![PlayerState { name: "Ann".into(), score: 3, ping: 50, ..PlayerState::default() }],
///     ..ServerState::default()
/// });
/// let responder = Quake2Responder::new(state, Quake2Config { game_name: String::new(), ..Quake2Config::default() });
/// let mut service = Service::new(responder).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\xff\xff\xff\xffstatus\n").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\xff\xff\xff\xffprint\n\\hostname\\Box\\mapname\\q2dm1\\maxclients\\8\\needpass\\0\n3 50 \"Ann\"\n".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct Quake2Responder {
    state: SharedState,
    config: Quake2Config,
    /// The encoded reply of the current snapshot, for the datagram cap it was built for.
    reply: SnapshotCache<Vec<u8>, usize>,
}

impl Quake2Responder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: Quake2Config) -> Self {
        Quake2Responder {
            state,
            config,
            reply: SnapshotCache::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Quake2Config {
        &self.config
    }
}

impl Responder for Quake2Responder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        if Request::decode(datagram).is_err() {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let max = self.config.max_datagram.min(replies.max_datagram());
        let config = &self.config;
        let built = self.reply.get(&self.state, max, |state, stale| {
            build(state, config, max, stale.unwrap_or_default())
        });
        let Ok((_, reply)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        Verdict::pushed(replies.push(reply))
    }
}

/// The `print` reply for `state`, at most `max` bytes, encoded into `out`'s buffer.
fn build(
    state: &ServerState,
    config: &Quake2Config,
    max: usize,
    mut out: Vec<u8>,
) -> Result<Vec<u8>, query_wire::Error> {
    let encoding = config.encoding;
    let text = |s: &str| quake_family::pair_text(s, encoding, MAX_TEXT);
    let non_empty = |s: &str| (!s.is_empty()).then(|| text(s));
    let mut info = Info {
        hostname: Some(text(&state.name)),
        map: non_empty(&state.map),
        game_name: non_empty(&config.game_name),
        game_dir: non_empty(&state.game_type),
        version: non_empty(&state.version),
        max_clients: Some(state.max_players),
        need_pass: Some(u32::from(state.password)),
        ..Info::default()
    };
    quake_family::add_rules(&mut info, &state.rules, encoding, MAX_TEXT, MAX_INFO_BYTES)?;

    let header = Dialect::Quake2;
    let line = KvLine(info);
    out.clear();
    out.resize(header.encoded_len(()) + line.encoded_len(encoding), 0);
    let mut w = Writer::new(&mut out);
    header.encode(&mut w, ())?;
    line.encode(&mut w, encoding)?;
    for p in &state.players {
        let player = quake_family::player_line(p, encoding, MAX_NAME);
        let at = out.len();
        let line_len = player.encoded_len(());
        if at + line_len > max {
            break;
        }
        out.resize(at + line_len, 0);
        player.encode(&mut Writer::new(&mut out[at..]), ())?;
    }
    if out.len() > max {
        return Err(query_wire::Error::new(
            query_wire::ErrorKind::TooLong {
                len: out.len(),
                max,
            },
            0,
        ));
    }
    Ok(out)
}
