//! Which game an answer came from.
//!
//! A server says more than its protocol: A2S reports its Steam app id and game folder,
//! GameSpy and Quake 3 servers a `gamename` (Minecraft a `game_id`). Those name the game
//! whatever the port; failing them, a port that only one game of the protocol uses by default
//! names it. Otherwise the game stays unnamed rather than guessed among many (port 27015 is
//! the default of a hundred A2S games).
//!
//! ```
//! use query_games::identify::identify;
//! use query_net::{Protocol, ServerStatus};
//!
//! let mut status = ServerStatus {
//!     protocol: Protocol::GameSpy3,
//!     address: "192.0.2.1:25600".parse().unwrap(),
//!     name: "A world".into(),
//!     map: None, game_type: Some("SMP".into()), version: None,
//!     num_players: 0, max_players: 20, password: None,
//!     players: vec![], teams: vec![], rules: Default::default(),
//!     ping_ms: 1.0, complete: true, raw: serde_json::json!({}),
//! };
//! assert!(identify(&status).is_none());
//! status.rules.insert("game_id".into(), "MINECRAFT".into());
//! assert_eq!(identify(&status).unwrap().id, "minecraft");
//! ```

use query_net::{Protocol, ServerStatus};

use crate::plan::answers_in;
use crate::{catalogue, Game};

/// The rules that carry a game's name in key/value protocols.
const GAMENAME_KEYS: [&str; 2] = ["gamename", "game_id"];

/// The game `status` came from, if the answer or its port says.
pub fn identify(status: &ServerStatus) -> Option<&'static Game> {
    by_reply(status).or_else(|| by_port(status))
}

/// The game the answer itself names (app id, folder, `gamename`), whatever its port; of
/// several, the one whose query port answered.
pub fn by_reply(status: &ServerStatus) -> Option<&'static Game> {
    let port = status.address.port();
    let fingerprinted: Vec<&'static Game> = catalogue()
        .games()
        .iter()
        .filter(|game| answers_in(game.protocol, status.protocol))
        .filter(|game| reports(game, status))
        .collect();
    fingerprinted
        .iter()
        .find(|game| game.default_query_port() == Some(port))
        .or(fingerprinted.first())
        .copied()
}

/// The one game of the answer's protocol whose default query port answered, if only one.
fn by_port(status: &ServerStatus) -> Option<&'static Game> {
    let port = status.address.port();
    let same_wire = |game: &&Game| answers_in(game.protocol, status.protocol);
    let on_port = |game: &&Game| game.default_query_port() == Some(port);
    let mut by_port = catalogue().games().iter().filter(same_wire).filter(on_port);
    match (by_port.next(), by_port.next()) {
        (Some(game), None) => Some(game),
        _ => None,
    }
}

/// Whether `status` carries `game`'s fingerprint: its A2S app id (from the 64-bit game id,
/// or INFO's own field) or folder, or its `gamename`.
fn reports(game: &Game, status: &ServerStatus) -> bool {
    if status.protocol == Protocol::A2s {
        let raw = &status.raw;
        let game_id = raw.get("game_id").and_then(|id| {
            id.as_str()
                .and_then(|s| s.parse::<u64>().ok())
                .or(id.as_u64())
        });
        // The low 24 bits of a 64-bit game id are the app id.
        let app_id = game_id
            .map(|id| id & 0x00ff_ffff)
            .or_else(|| raw.get("app_id").and_then(serde_json::Value::as_u64))
            .filter(|id| *id != 0);
        if let (Some(want), Some(got)) = (game.a2s_app_id, app_id) {
            return u64::from(want) == got
                && folder_agrees(game, raw.get("folder").and_then(|f| f.as_str()));
        }
        return match (&game.a2s_folder, raw.get("folder").and_then(|f| f.as_str())) {
            (Some(want), Some(got)) => want.eq_ignore_ascii_case(got.trim()),
            _ => false,
        };
    }
    GAMENAME_KEYS.iter().any(|key| {
        status.rules.get(*key).is_some_and(|value| {
            game.gamename
                .iter()
                .any(|name| name.eq_ignore_ascii_case(value.trim()))
        })
    })
}

/// Games that share an app id (CS:GO and CS2 both report 730) are told apart by folder only
/// when both are known and differ.
fn folder_agrees(game: &Game, folder: Option<&str>) -> bool {
    match (&game.a2s_folder, folder) {
        (Some(want), Some(got)) => want.eq_ignore_ascii_case(got.trim()),
        _ => true,
    }
}
