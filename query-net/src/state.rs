//! What a responder tells the world: the game's state, swappable at any time without blocking
//! the replies that read it.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use arc_swap::ArcSwap;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Everything the responders of all protocols may report about a server.
///
/// One struct serves every protocol: each responder picks the fields its packets carry. It
/// deserializes from the TOML or JSON a sidecar loads; unknown keys are an error, so a typo in a
/// config file is reported rather than ignored.
///
/// ```
/// use query_net::state::ServerState;
///
/// let state: ServerState = serde_json::from_str(r#"{
///     "name": "My Server", "map": "Highrise", "max_players": 16, "port": 7777,
///     "players": [{"name": "Alice", "score": 3}],
///     "rules": {"difficulty": "hard", "round_time": 300}
/// }"#)?;
/// assert_eq!(state.num_players(), 1);
/// assert_eq!(state.rules["round_time"].to_string(), "300");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerState {
    /// Server name (SQP server name, OneQuery server name, SA:MP host name, GameSpy `hostname`).
    pub name: String,
    /// Current map.
    pub map: String,
    /// Game type or game mode (A2S sends it as the game's name unless one is configured).
    pub game_type: String,
    /// Version or build id (SQP build id, OneQuery version, SA:MP `version` rule, A2S version).
    pub version: String,
    /// Language (the third string of SA:MP's `i` reply).
    pub language: String,
    /// Message of the day (OneQuery).
    pub motd: String,
    /// Player slots.
    pub max_players: u32,
    /// Players online.
    pub players: Vec<PlayerState>,
    /// Reported instead of `players.len()` when set: counts over a network of servers, or a
    /// list deliberately cut short.
    pub player_count: Option<u32>,
    /// Teams (SQP TeamInfo, GameSpy `teamname_N`).
    pub teams: Vec<TeamState>,
    /// Numbers whose meaning the game defines (SQP's Metrics chunk, at most
    /// [`MAX_METRICS`](query_specs::sqp::MAX_METRICS) of them; more are not sent).
    pub metrics: Vec<f32>,
    /// Server rules in the order they are sent.
    pub rules: IndexMap<String, RuleValue>,
    /// Whether joining needs a password.
    pub password: bool,
    /// The game port players connect to (SQP, GameSpy `hostport`, A2S Extra Data).
    pub port: u16,
    /// Host name or address advertised to clients (OneQuery `FLAG_HAS_ADDRESS`); not sent when
    /// `None`.
    pub host: Option<String>,
    /// Whether the counts are aggregated over a network of servers (OneQuery `FLAG_IS_NETWORK`).
    pub is_network: bool,
    /// Game protocol version (OneQuery).
    pub protocol_version: u32,
    /// Game protocol hash (OneQuery).
    pub protocol_hash: String,
}

impl ServerState {
    /// The player count to report: `player_count` if set, else the length of the list.
    pub fn num_players(&self) -> u32 {
        self.player_count
            .unwrap_or_else(|| u32::try_from(self.players.len()).unwrap_or(u32::MAX))
    }
}

/// One player as a responder reports them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlayerState {
    /// Player name.
    pub name: String,
    /// Score or frags.
    pub score: i64,
    /// Ping in milliseconds.
    pub ping: u32,
    /// The id SA:MP's `d` list reports; the list position when `None`.
    pub id: Option<u32>,
    /// Account id (OneQuery PLAYER_LIST).
    pub uuid: Option<Uuid>,
    /// The player's team: a name (`"red"`, one of [`ServerState::teams`]) or, as protocols
    /// that number teams send it, a number (`team = 1` in a state file, kept as its text).
    #[serde(deserialize_with = "team_name_or_number")]
    pub team: Option<String>,
}

/// A team as a state file writes it: a name, or a number kept as its decimal text.
fn team_name_or_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Team {
        Name(String),
        Number(i64),
    }
    Ok(
        Option::<Team>::deserialize(deserializer)?.map(|team| match team {
            Team::Name(name) => name,
            Team::Number(number) => number.to_string(),
        }),
    )
}

/// One team as a responder reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TeamState {
    /// Team name.
    pub name: String,
    /// Team score.
    pub score: i64,
}

/// A rule's value. SQP sends typed rule values; the text protocols send everything as text.
/// Untagged, so a config file writes plain values: `round_time = 300`, `friendly_fire = false`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RuleValue {
    /// A flag, sent as `true`/`false` text or as a byte 0/1.
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Text(String),
}

impl fmt::Display for RuleValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RuleValue::Bool(b) => write!(f, "{b}"),
            RuleValue::Integer(i) => write!(f, "{i}"),
            RuleValue::Float(x) => write!(f, "{x}"),
            RuleValue::Text(s) => f.write_str(s),
        }
    }
}

impl RuleValue {
    /// The value as the text protocols send it: text as it is, numbers and flags as their
    /// [`Display`](fmt::Display) form (`true`, `42`, `1.5`).
    pub fn as_text(&self) -> Cow<'_, str> {
        match self {
            RuleValue::Text(text) => Cow::Borrowed(text),
            other => Cow::Owned(other.to_string()),
        }
    }
}

impl From<&str> for RuleValue {
    fn from(s: &str) -> Self {
        RuleValue::Text(s.to_owned())
    }
}

impl From<String> for RuleValue {
    fn from(s: String) -> Self {
        RuleValue::Text(s)
    }
}

impl From<i64> for RuleValue {
    fn from(i: i64) -> Self {
        RuleValue::Integer(i)
    }
}

impl From<bool> for RuleValue {
    fn from(b: bool) -> Self {
        RuleValue::Bool(b)
    }
}

/// The current [`ServerState`], shared between the game and its responders.
///
/// Readers get a consistent snapshot without locking; the game replaces or edits the state at
/// any time, and a reply being built keeps the snapshot it started with. Clones share the state.
///
/// ```
/// use query_net::state::{PlayerState, ServerState, SharedState};
///
/// let shared = SharedState::new(ServerState { name: "Lobby".into(), ..ServerState::default() });
/// let responder_view = shared.clone();
/// shared.update(|s| s.players.push(PlayerState { name: "Bob".into(), ..PlayerState::default() }));
/// assert_eq!(responder_view.load().num_players(), 1);
/// ```
#[derive(Debug, Clone, Default)]
pub struct SharedState(Arc<ArcSwap<ServerState>>);

impl SharedState {
    /// Shares `state`.
    pub fn new(state: ServerState) -> Self {
        SharedState(Arc::new(ArcSwap::from_pointee(state)))
    }

    /// A snapshot for the duration of one reply: lock-free, and cheaper than [`snapshot`]
    /// because it usually avoids touching the reference count.
    ///
    /// [`snapshot`]: SharedState::snapshot
    pub fn load(&self) -> arc_swap::Guard<Arc<ServerState>> {
        self.0.load()
    }

    /// A snapshot to keep.
    pub fn snapshot(&self) -> Arc<ServerState> {
        self.0.load_full()
    }

    /// Replaces the whole state.
    pub fn store(&self, state: ServerState) {
        self.0.store(Arc::new(state));
    }

    /// Edits a copy of the current state and publishes it. If another writer published in the
    /// meantime, `edit` runs again on the newer state, so no update is lost.
    pub fn update(&self, edit: impl Fn(&mut ServerState)) {
        self.0.rcu(|current| {
            let mut next = ServerState::clone(current);
            edit(&mut next);
            next
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_values_go_out_as_text() {
        assert!(matches!(RuleValue::from("x").as_text(), Cow::Borrowed("x")));
        assert_eq!(RuleValue::Integer(-3).as_text(), "-3");
        assert_eq!(RuleValue::Bool(true).as_text(), "true");
        assert_eq!(RuleValue::Float(1.5).as_text(), "1.5");
    }

    const TOML: &str = r#"
name = "Sidecar Test"
map = "Highrise"
game_type = "TeamDeathMatch"
version = "1.0.3"
max_players = 16
port = 7777
password = true
motd = "Welcome!"
protocol_version = 2
protocol_hash = "1A2B3C4D"
host = "play.example.com"

[rules]
round_time = 300
difficulty = "hard"
friendly_fire = false
gravity = 9.81

[[players]]
name = "Alice"
score = 10
ping = 35
uuid = "00112233-4455-6677-8899-aabbccddeeff"
team = "red"

[[players]]
name = "Bob"
score = -7

[[teams]]
name = "red"
score = 10
"#;

    #[test]
    fn loads_from_toml_with_rules_in_file_order() {
        let state: ServerState = toml::from_str(TOML).unwrap();
        assert_eq!(state.name, "Sidecar Test");
        assert_eq!(state.num_players(), 2);
        assert_eq!(state.players[0].uuid.unwrap().as_u128() >> 120, 0x00);
        assert_eq!(state.players[1].score, -7);
        assert_eq!(state.host.as_deref(), Some("play.example.com"));
        let rules: Vec<(String, String)> = state
            .rules
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect();
        assert_eq!(
            rules,
            [
                ("round_time".to_owned(), "300".to_owned()),
                ("difficulty".to_owned(), "hard".to_owned()),
                ("friendly_fire".to_owned(), "false".to_owned()),
                ("gravity".to_owned(), "9.81".to_owned()),
            ]
        );
        assert_eq!(state.rules["round_time"], RuleValue::Integer(300));
    }

    #[test]
    fn unknown_keys_are_reported() {
        let err = serde_json::from_str::<ServerState>(r#"{"nmae": "typo"}"#).unwrap_err();
        assert!(err.to_string().contains("nmae"), "{err}");
    }

    #[test]
    fn json_round_trip() {
        let state: ServerState = toml::from_str(TOML).unwrap();
        let json = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<ServerState>(&json).unwrap(), state);
    }

    #[test]
    fn player_count_overrides_the_list_length() {
        let state = ServerState {
            players: vec![PlayerState::default()],
            player_count: Some(250),
            ..ServerState::default()
        };
        assert_eq!(state.num_players(), 250);
    }

    #[test]
    fn a_snapshot_stays_consistent_while_the_game_updates() {
        let shared = SharedState::new(ServerState {
            name: "one".to_owned(),
            ..ServerState::default()
        });
        let held = shared.load();
        shared.store(ServerState {
            name: "two".to_owned(),
            ..ServerState::default()
        });
        assert_eq!(held.name, "one");
        assert_eq!(shared.load().name, "two");
    }

    #[test]
    fn concurrent_updates_are_not_lost() {
        let shared = SharedState::default();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let shared = shared.clone();
                scope.spawn(move || {
                    for _ in 0..250 {
                        shared.update(|s| s.max_players += 1);
                    }
                });
            }
        });
        assert_eq!(shared.snapshot().max_players, 1000);
    }
}
