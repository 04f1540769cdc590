//! The FiveM responder: `getinfo` answered from the server state, as a CitizenFX server does.
//!
//! - `getinfo <challenge>` → one `infoResponse` datagram: the challenge echoed first, then
//!   `hostname`, `mapname`, `gametype`, `gamename` (`CitizenFX`), `clients`,
//!   `sv_maxclients` and `protocol` (4). A `getinfo` without a challenge is answered too, as
//!   real servers do. `getstatus` is not FiveM's and is dropped.
//! - Strict about the challenge: at most 64 bytes, and no backslash (it would break the
//!   pair line).
//! - Text goes out as UTF-8; the backslash and the newline become `?` and every value is cut
//!   to 255 bytes, so a reply stays under 1 KiB whatever the state.
//!
//! The player list lives in the server's HTTP `/players.json` on the same port, which
//! [`FivemHttpResponder`](super::FivemHttpResponder) serves over TCP.

use std::borrow::Cow;
use std::net::SocketAddr;

use query_specs::fivem::{Info, GAME_NAME};
use query_specs::quake3::{Challenge, InfoHeader, Request};
use query_wire::kv::KvLine;
use query_wire::{Encode, TextEncoding, Writer};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// Values are cut to this many bytes.
const MAX_TEXT: usize = 255;
/// The network protocol CitizenFX servers report.
const PROTOCOL: u32 = 4;

/// How a [`FivemResponder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FivemConfig {}

/// Answers FiveM `getinfo` queries from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::fivem::{FivemConfig, FivemResponder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
///
/// let state = SharedState::new(ServerState { name: "^1RP".into(), max_players: 32, ..ServerState::default() });
/// let mut service = Service::new(FivemResponder::new(state, FivemConfig::default())).rate_limit(None);
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let replies: Vec<Vec<u8>> = service.handle(from, b"\xff\xff\xff\xffgetinfo xyz").map(<[u8]>::to_vec).collect();
/// assert_eq!(
///     replies,
///     [b"\xff\xff\xff\xffinfoResponse\n\\challenge\\xyz\\hostname\\^1RP\\gamename\\CitizenFX\\clients\\0\\sv_maxclients\\32\\protocol\\4\n".to_vec()]
/// );
/// ```
#[derive(Debug)]
pub struct FivemResponder {
    state: SharedState,
    info: SnapshotCache<Info<'static>>,
}

impl FivemResponder {
    /// Answers from `state`.
    pub fn new(state: SharedState, _config: FivemConfig) -> Self {
        FivemResponder {
            state,
            info: SnapshotCache::new(),
        }
    }
}

impl Responder for FivemResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let request = match Request::decode(datagram) {
            Ok(request @ Request::Info(_)) => request,
            _ => return Verdict::Dropped(DropReason::Malformed),
        };
        let challenge = request.challenge();
        if challenge.is_some_and(|c| c.contains(&b'\\')) {
            return Verdict::Dropped(DropReason::Malformed);
        }
        let built = self
            .info
            .get(&self.state, (), |state, _| Ok::<_, ()>(info(state)));
        let Ok((_, info)) = built else {
            return Verdict::Dropped(DropReason::Unsupported);
        };
        let line = KvLine((Challenge { challenge }, &*info));
        let sent = replies.push_with(|buf| {
            let mut w = Writer::new(buf);
            InfoHeader {}.encode(&mut w, ())?;
            line.encode(&mut w, TextEncoding::Utf8)?;
            Ok::<_, query_wire::Error>(w.position())
        });
        Verdict::pushed(sent)
    }
}

/// The pairs of `state`, without the challenge.
fn info(state: &ServerState) -> Info<'static> {
    let text = |s: &str| {
        let cut = fit::cut(s, TextEncoding::Utf8, MAX_TEXT);
        Cow::Owned(fit::replace_unsendable(cut, TextEncoding::Utf8, &['\\', '\n']).into_owned())
    };
    let non_empty = |s: &str| (!s.is_empty()).then(|| text(s));
    Info {
        challenge: None,
        hostname: Some(text(&state.name)),
        map: non_empty(&state.map),
        game_type: non_empty(&state.game_type),
        game_name: Some(Cow::Borrowed(GAME_NAME)),
        clients: Some(state.num_players()),
        max_clients: Some(state.max_players),
        protocol: Some(PROTOCOL),
        iv: None,
        rules: Vec::new(),
    }
}
