//! The Bedrock responder: unconnected pings answered from the server state.
//!
//! A ping (`01`, time, magic, client GUID: exactly 33 bytes) gets one pong: the time echoed,
//! [`BedrockConfig::server_guid`], the magic and the server string
//! `MCPE;name;protocol;version;online;max;server id;map;game mode;game mode number;port;port;`
//! built from the state: name → first MOTD line, map → second line (the world name on vanilla
//! servers), game type → game mode (`Survival` when empty), `protocol_version` → protocol,
//! `port` → both ports. A `;` in a text becomes `:`, and text is cut so that the server string
//! stays within 512 bytes.
//!
//! RakNet has no challenge: a pong goes to an address nobody verified, so every pong is
//! charged to the byte budget of unproven sources by the [`Service`](crate::service::Service)
//! that runs the responder, as other challenge-less replies are. The server string is built
//! once per state snapshot; answering then allocates nothing.

use std::net::SocketAddr;

use query_specs::bedrock::{OfflineMagic, ServerId, UnconnectedPing, UnconnectedPong};
use query_wire::{Decode, Text};

use crate::clock::Now;
use crate::engine::{DropReason, ReplySink, Responder, Verdict};
use crate::engines::fit::cut_utf8;
use crate::snapshot::SnapshotCache;
use crate::state::{ServerState, SharedState};

/// The longest server string a responder sends.
pub const MAX_SERVER_STRING: usize = 512;
/// The longest MOTD line or other text field sent.
const MAX_FIELD: usize = 128;

/// How a [`BedrockResponder`] presents the server, beyond the [`ServerState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BedrockConfig {
    /// The server's RakNet GUID, also sent as its server id.
    pub server_guid: u64,
    /// `MCPE` (Bedrock) or `MCEE` (Education Edition).
    pub edition: String,
}

impl Default for BedrockConfig {
    /// A random GUID, `MCPE`.
    fn default() -> Self {
        BedrockConfig {
            server_guid: rand::random(),
            edition: "MCPE".to_owned(),
        }
    }
}

/// Answers Bedrock pings from a [`SharedState`]; see the [module](self) docs.
///
/// ```
/// use query_net::engines::bedrock::{BedrockConfig, BedrockResponder};
/// use query_net::service::Service;
/// use query_net::state::{ServerState, SharedState};
/// use query_specs::bedrock::{OfflineMagic, UnconnectedPing, UnconnectedPong};
/// use query_wire::{Decode, Encode};
///
/// let state = SharedState::new(ServerState { name: "Island".into(), max_players: 10, ..ServerState::default() });
/// let config = BedrockConfig { server_guid: 7, ..BedrockConfig::default() };
/// let mut service = Service::new(BedrockResponder::new(state, config)).rate_limit(None);
/// let ping = UnconnectedPing { time: 42, magic: OfflineMagic {}, client_guid: 1 }.to_vec()?;
/// let from = "192.0.2.1:5000".parse().unwrap();
/// let reply = service.handle(from, &ping).next().unwrap().to_vec();
/// let pong = UnconnectedPong::from_bytes(&reply)?;
/// assert_eq!((pong.time, pong.server_guid), (42, 7));
/// assert_eq!(pong.server_text(), "MCPE;Island;0;;0;10;7;;Survival;1;;;");
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug)]
pub struct BedrockResponder {
    state: SharedState,
    config: BedrockConfig,
    /// The server string of the current snapshot.
    server_string: SnapshotCache<String>,
}

impl BedrockResponder {
    /// Answers from `state` as `config` says.
    pub fn new(state: SharedState, config: BedrockConfig) -> Self {
        BedrockResponder {
            state,
            config,
            server_string: SnapshotCache::new(),
        }
    }

    fn server_string(&mut self) -> &str {
        let config = &self.config;
        let (_, text) = self
            .server_string
            .get_infallible(&self.state, (), |state, _| server_string(state, config));
        text
    }
}

/// The server string for `state`.
fn server_string(state: &ServerState, config: &BedrockConfig) -> String {
    let field = |text: &str| cut_utf8(text, MAX_FIELD).to_owned().into();
    let optional = |text: &str| (!text.is_empty()).then(|| field(text));
    let game_mode = if state.game_type.is_empty() {
        "Survival"
    } else {
        state.game_type.as_str()
    };
    let port = (state.port != 0).then_some(state.port);
    let id = ServerId {
        edition: field(&config.edition),
        motd: field(&state.name),
        protocol: i64::from(state.protocol_version),
        version: field(&state.version),
        online: state.num_players(),
        max: state.max_players,
        server_unique_id: Some(config.server_guid.to_string().into()),
        motd2: optional(&state.map),
        game_mode: Some(field(game_mode)),
        game_mode_number: Some(game_mode_number(game_mode)),
        port_v4: port,
        port_v6: port,
    };
    let mut text = id.to_text();
    if text.len() > MAX_SERVER_STRING {
        text = cut_utf8(&text, MAX_SERVER_STRING).to_owned();
    }
    text
}

/// The number sent beside the game mode's name (`Survival;1` in the captured servers' pongs;
/// clients show the name).
fn game_mode_number(mode: &str) -> i64 {
    match mode.to_ascii_lowercase().as_str() {
        "creative" => 2,
        "adventure" => 3,
        "spectator" => 4,
        _ => 1,
    }
}

impl Responder for BedrockResponder {
    fn handle(
        &mut self,
        _from: SocketAddr,
        datagram: &[u8],
        _now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        let Ok(ping) = UnconnectedPing::from_bytes(datagram) else {
            return Verdict::Dropped(DropReason::Malformed);
        };
        let server_guid = self.config.server_guid;
        let text = self.server_string();
        let pong = UnconnectedPong {
            time: ping.time,
            server_guid,
            magic: OfflineMagic {},
            server_id: Text::from_bytes(text.as_bytes()),
        };
        Verdict::pushed(replies.push_encoded(&pong, ()))
    }
}
