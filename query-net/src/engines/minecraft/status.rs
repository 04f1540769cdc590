//! The status JSON of a Minecraft Java server, read with serde into typed fields, and its
//! mapping to a [`ServerStatus`].
//!
//! Lenient where servers differ: every field may be missing; counts that are negative, too
//! large or not integers are clamped (`max: 1e99` is `u32::MAX`); a sample that is no list is
//! ignored, and a sample player whose `id` is no UUID keeps its name; unknown fields are
//! ignored. Strict where it matters: text that is no JSON object (or holds a lone surrogate)
//! is an error. serde_json refuses nesting deeper than 128 levels, so a hostile description
//! cannot exhaust the stack, and the MOTD is flattened with a depth cap of its own.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::text::strip_codes;
use crate::error::QueryError;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The longest favicon kept, in bytes of its data URI (a 64×64 PNG is a few KiB).
pub const MAX_FAVICON: usize = 64 * 1024;
/// The most sample players read.
pub const MAX_SAMPLE: usize = 256;
/// How deep chat components are followed when flattening the MOTD.
const MAX_COMPONENT_DEPTH: usize = 32;

/// The status document.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct StatusJson {
    /// The version the server runs.
    pub version: Option<Version>,
    /// Player counts and the sample.
    pub players: Option<Players>,
    /// The MOTD: a string with `§` codes or a chat component.
    pub description: Option<Value>,
    /// `data:image/png;base64,...`.
    pub favicon: Option<String>,
    /// Whether the server requires signed chat (1.19.1 and later).
    #[serde(rename = "enforcesSecureChat")]
    pub enforces_secure_chat: Option<bool>,
    /// Whether the server previews chat (1.19 to 1.19.2).
    #[serde(rename = "previewsChat")]
    pub previews_chat: Option<bool>,
    /// Forge 1.13 and later.
    #[serde(rename = "forgeData")]
    pub forge_data: Option<ForgeData>,
    /// Forge before 1.13.
    pub modinfo: Option<ModInfo>,
}

/// `version`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Version {
    /// `1.21.4`, `Paper 1.20.1`, `Velocity 3.3.0`...
    pub name: Option<String>,
    /// The protocol number.
    pub protocol: Option<Value>,
}

/// `players`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Players {
    /// Slots.
    pub max: Option<Value>,
    /// Online.
    pub online: Option<Value>,
    /// Some of the players online, as the server chooses (`{name, id}` each).
    pub sample: Option<Value>,
}

/// `forgeData`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ForgeData {
    /// Network channels.
    pub channels: Vec<Value>,
    /// `{modId, modmarker}` per mod.
    pub mods: Vec<Value>,
    /// Whether the server cut the lists.
    pub truncated: Option<bool>,
    /// The FML network version.
    #[serde(rename = "fmlNetworkVersion")]
    pub fml_network_version: Option<Value>,
}

/// `modinfo`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ModInfo {
    /// `FML`.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// `{modid, version}` per mod.
    #[serde(rename = "modList")]
    pub mod_list: Vec<Value>,
}

/// A number as a count: clamped to `0..=u32::MAX`, `None` when not a number.
fn count(value: Option<&Value>) -> Option<u32> {
    let number = value?.as_number()?;
    let clamped = if let Some(n) = number.as_u64() {
        n.min(u64::from(u32::MAX))
    } else if number.as_i64().is_some() {
        0
    } else {
        number.as_f64()?.clamp(0.0, f64::from(u32::MAX)) as u64
    };
    u32::try_from(clamped).ok()
}

/// The MOTD as plain text: chat components (`text`, `translate` where there is no text,
/// `extra`, and arrays of components) joined, `§` codes removed.
///
/// ```
/// use query_net::engines::minecraft::status::flatten_motd;
/// use serde_json::json;
///
/// let motd = json!({"text": "", "extra": [{"text": "A ", "bold": true}, "\u{a7}aMinecraft", {"text": " Server"}]});
/// assert_eq!(flatten_motd(&motd), "A Minecraft Server");
/// ```
pub fn flatten_motd(description: &Value) -> String {
    let mut text = String::new();
    flatten_into(description, &mut text, 0);
    strip_codes(&text)
}

fn flatten_into(component: &Value, out: &mut String, depth: usize) {
    if depth > MAX_COMPONENT_DEPTH {
        return;
    }
    match component {
        Value::String(s) => out.push_str(s),
        Value::Array(parts) => {
            for part in parts {
                flatten_into(part, out, depth + 1);
            }
        }
        Value::Object(fields) => {
            match (fields.get("text"), fields.get("translate")) {
                (Some(text), _) => flatten_into(text, out, depth + 1),
                (None, Some(Value::String(key))) => out.push_str(key),
                _ => {}
            }
            if let Some(extra) = fields.get("extra") {
                flatten_into(extra, out, depth + 1);
            }
        }
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => {}
    }
}

fn sample_player(entry: &Value) -> Option<Player> {
    let name = entry.get("name")?.as_str()?;
    let uuid = entry
        .get("id")
        .and_then(Value::as_str)
        .and_then(|id| Uuid::parse_str(id).ok());
    Some(Player {
        name: name.to_owned(),
        uuid,
        ..Player::default()
    })
}

fn mods(json: &StatusJson) -> Vec<Value> {
    let forge = json.forge_data.iter().flat_map(|f| &f.mods).map(|m| {
        json!({
            "id": m.get("modId").or_else(|| m.get("modid")),
            "version": m.get("modmarker").or_else(|| m.get("version")),
        })
    });
    let old = json
        .modinfo
        .iter()
        .flat_map(|m| &m.mod_list)
        .map(|m| json!({ "id": m.get("modid"), "version": m.get("version") }));
    forge.chain(old).collect()
}

/// The status a JSON document gives; the round trip was `rtt`.
pub fn from_json(
    target: SocketAddr,
    text: &str,
    rtt: Duration,
) -> Result<ServerStatus, QueryError> {
    let json: StatusJson = serde_json::from_str(text)
        .map_err(|e| QueryError::protocol(format!("status JSON: {e}")))?;
    let players_json = json.players.as_ref();
    let players: Vec<Player> = players_json
        .and_then(|p| p.sample.as_ref())
        .and_then(Value::as_array)
        .map(|sample| {
            sample
                .iter()
                .take(MAX_SAMPLE)
                .filter_map(sample_player)
                .collect()
        })
        .unwrap_or_default();
    let protocol = json
        .version
        .as_ref()
        .and_then(|v| v.protocol.as_ref())
        .and_then(Value::as_i64);
    let mut rules = IndexMap::new();
    if let Some(protocol) = protocol {
        rules.insert("protocol".to_owned(), protocol.to_string());
    }
    if let Some(secure) = json.enforces_secure_chat {
        rules.insert("enforces_secure_chat".to_owned(), secure.to_string());
    }
    if let Some(previews) = json.previews_chat {
        rules.insert("previews_chat".to_owned(), previews.to_string());
    }
    let mods = mods(&json);
    if !mods.is_empty() {
        rules.insert("mods".to_owned(), mods.len().to_string());
    }
    let favicon = json.favicon.as_deref();
    let favicon_kept = favicon.filter(|f| f.len() <= MAX_FAVICON);
    let description = json.description.clone().unwrap_or(Value::Null);
    let raw = json!({
        "description": description,
        "version_protocol": protocol,
        "favicon": favicon_kept,
        "favicon_bytes": favicon.map(str::len),
        "enforces_secure_chat": json.enforces_secure_chat,
        "previews_chat": json.previews_chat,
        "mods": mods,
        "forge": json.forge_data.as_ref().map(|f| json!({
            "channels": f.channels,
            "truncated": f.truncated,
            "fml_network_version": f.fml_network_version,
        })),
        "modinfo_type": json.modinfo.as_ref().and_then(|m| m.kind.clone()),
    });
    Ok(ServerStatus {
        protocol: Protocol::Minecraft,
        address: target,
        name: flatten_motd(&description).trim().to_owned(),
        map: None,
        game_type: None,
        version: json.version.as_ref().and_then(|v| v.name.clone()),
        num_players: count(players_json.and_then(|p| p.online.as_ref())).unwrap_or(0),
        max_players: count(players_json.and_then(|p| p.max.as_ref())).unwrap_or(0),
        password: None,
        players,
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> SocketAddr {
        "127.0.0.1:25565".parse().unwrap()
    }

    #[test]
    fn a_vanilla_status_with_sample_and_secure_chat() {
        let text = r#"{"version":{"name":"1.21.4","protocol":769},
            "players":{"max":20,"online":2,"sample":[
                {"name":"Alice","id":"4566e69f-c907-48ee-8d71-d7ba5aa00d20"},
                {"name":"\u00a7cnot a player","id":"00000000-0000-0000-0000-000000000000"},
                {"name":"Bob","id":"not a uuid"}]},
            "description":{"text":"\u00a7aHello","extra":[{"text":" world","bold":true}]},
            "favicon":"data:image/png;base64,AAAA","enforcesSecureChat":true}"#;
        let status = from_json(target(), text, Duration::from_millis(5)).unwrap();
        assert_eq!(status.name, "Hello world");
        assert_eq!(status.version.as_deref(), Some("1.21.4"));
        assert_eq!((status.num_players, status.max_players), (2, 20));
        assert_eq!(status.players.len(), 3);
        assert_eq!(
            status.players[0].uuid.unwrap().to_string(),
            "4566e69f-c907-48ee-8d71-d7ba5aa00d20"
        );
        assert_eq!(status.players[2].uuid, None);
        assert_eq!(status.rules["protocol"], "769");
        assert_eq!(status.rules["enforces_secure_chat"], "true");
        assert_eq!(status.raw["favicon"], "data:image/png;base64,AAAA");
        assert_eq!(status.raw["description"]["text"], "\u{a7}aHello");
    }

    #[test]
    fn forge_and_old_mod_lists() {
        let text = r#"{"description":"\u00a76Modded","players":{"max":10,"online":0},
            "version":{"name":"1.20.1","protocol":763},
            "forgeData":{"channels":[],"mods":[{"modId":"forge","modmarker":"47.2.0"}],"truncated":false,"fmlNetworkVersion":3},
            "modinfo":{"type":"FML","modList":[{"modid":"jei","version":"1.0"}]}}"#;
        let status = from_json(target(), text, Duration::ZERO).unwrap();
        assert_eq!(status.name, "Modded");
        assert_eq!(status.rules["mods"], "2");
        assert_eq!(status.raw["mods"][0]["id"], "forge");
        assert_eq!(status.raw["mods"][1]["version"], "1.0");
        assert_eq!(status.raw["forge"]["fml_network_version"], 3);
    }

    #[test]
    fn hostile_documents_fail_or_clamp_without_panicking() {
        let deep = format!(
            "{{\"description\":{}{}}}",
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(from_json(target(), &deep, Duration::ZERO).is_err());
        let huge = r#"{"players":{"max":1e99,"online":-5,"sample":"no"}}"#;
        let status = from_json(target(), huge, Duration::ZERO).unwrap();
        assert_eq!((status.num_players, status.max_players), (0, u32::MAX));
        assert!(
            status.players.is_empty(),
            "a sample that is no list is ignored"
        );
        let lone_surrogate = r#"{"description":"\ud800"}"#;
        assert!(from_json(target(), lone_surrogate, Duration::ZERO).is_err());
        assert!(from_json(target(), "[1,2]", Duration::ZERO).is_err());
        let big_icon = format!(r#"{{"favicon":"{}"}}"#, "A".repeat(MAX_FAVICON + 1));
        let status = from_json(target(), &big_icon, Duration::ZERO).unwrap();
        assert_eq!(status.raw["favicon"], Value::Null);
        assert_eq!(status.raw["favicon_bytes"], MAX_FAVICON + 1);
        // Components nested within serde's limit but past the flattening cap.
        let nested = (0..100).fold(json!("deep"), |inner, _| json!({ "extra": [inner] }));
        assert_eq!(flatten_motd(&nested), "");
    }
}
