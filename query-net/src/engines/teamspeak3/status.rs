//! The answers of a ServerQuery server mapped to a [`ServerStatus`].
//!
//! - `serverinfo` gives the name, version, slots and password flag; every other field is a
//!   rule, unescaped, in the server's order.
//! - `clientlist` gives the players: people only (`client_type=0`); query clients (bots,
//!   status pages, this query) are listed in `raw.query_clients` and not counted in
//!   `num_players`, which is `virtualserver_clientsonline` less
//!   `virtualserver_queryclientsonline`.
//! - `channellist` is kept in `raw.channels`, and names each player's channel
//!   (`extra.channel`).

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::teamspeak3::{ChannelEntry, ClientEntry, ServerInfo, CLIENT_TYPE_VOICE};
use query_wire::kv::{decode_rows, FromKeyValues};
use serde_json::{json, Map, Value};

use crate::error::QueryError;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The data lines of each answer, in order.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// `serverinfo`.
    pub server_info: Vec<Vec<u8>>,
    /// `clientlist`.
    pub clients: Vec<Vec<u8>>,
    /// `channellist`.
    pub channels: Vec<Vec<u8>>,
}

fn rows<'a, T: FromKeyValues<'a>>(lines: &'a [Vec<u8>]) -> Result<Vec<T>, QueryError> {
    let mut out = Vec::new();
    for line in lines {
        out.extend(decode_rows::<T>(line)?);
    }
    Ok(out)
}

/// The status of a server whose answers are `answers`; `rtt` is the first command's round
/// trip.
pub fn from_answers(
    address: SocketAddr,
    answers: &Answers,
    rtt: Duration,
) -> Result<ServerStatus, QueryError> {
    let [info_line] = answers.server_info.as_slice() else {
        return Err(QueryError::protocol(format!(
            "serverinfo answered with {} lines instead of one",
            answers.server_info.len()
        )));
    };
    let info = ServerInfo::from_bytes(info_line)?;
    let clients: Vec<ClientEntry<'_>> = rows(&answers.clients)?;
    let channels: Vec<ChannelEntry<'_>> = rows(&answers.channels)?;

    let channel_name = |cid: u32| {
        channels
            .iter()
            .find(|c| c.cid == cid)
            .map(|c| c.channel_name.to_string())
    };
    let (people, query_clients): (Vec<_>, Vec<_>) = clients
        .iter()
        .partition(|c| c.client_type == CLIENT_TYPE_VOICE);
    let players = people
        .iter()
        .map(|c| {
            let mut extra = IndexMap::new();
            extra.insert("cid".to_owned(), c.cid.to_string());
            if let Some(channel) = channel_name(c.cid) {
                extra.insert("channel".to_owned(), channel);
            }
            if let Some(id) = c.client_database_id {
                extra.insert("client_database_id".to_owned(), id.to_string());
            }
            for (k, v) in &c.rest {
                extra.insert(k.to_string(), v.to_string());
            }
            Player {
                name: c.client_nickname.to_string(),
                id: Some(c.clid),
                extra,
                ..Player::default()
            }
        })
        .collect();
    let query_count = info
        .virtualserver_queryclientsonline
        .unwrap_or(u32::try_from(query_clients.len()).unwrap_or(u32::MAX));

    let mut rules = IndexMap::new();
    for (key, value) in [
        ("virtualserver_platform", &info.virtualserver_platform),
        (
            "virtualserver_welcomemessage",
            &info.virtualserver_welcomemessage,
        ),
    ] {
        if let Some(value) = value {
            rules.insert(key.to_owned(), value.to_string());
        }
    }
    for (key, value) in [
        (
            "virtualserver_queryclientsonline",
            info.virtualserver_queryclientsonline.map(u64::from),
        ),
        (
            "virtualserver_channelsonline",
            info.virtualserver_channelsonline.map(u64::from),
        ),
        ("virtualserver_uptime", info.virtualserver_uptime),
        ("virtualserver_port", info.virtualserver_port.map(u64::from)),
        (
            "virtualserver_reserved_slots",
            info.virtualserver_reserved_slots.map(u64::from),
        ),
    ] {
        if let Some(value) = value {
            rules.insert(key.to_owned(), value.to_string());
        }
    }
    for (key, value) in &info.rest {
        rules.insert(key.to_string(), value.to_string());
    }

    let channel_json: Vec<Value> = channels
        .iter()
        .map(|c| {
            let mut channel = json!({
                "cid": c.cid,
                "pid": c.pid,
                "name": c.channel_name.as_str(),
                "topic": c.channel_topic.as_ref().map(|t| t.as_str()),
                "total_clients": c.total_clients,
            });
            if let Value::Object(fields) = &mut channel {
                for (k, v) in &c.rest {
                    fields.insert(k.to_string(), v.as_str().into());
                }
            }
            channel
        })
        .collect();
    let mut raw = Map::new();
    raw.insert("channels".to_owned(), channel_json.into());
    raw.insert(
        "query_clients".to_owned(),
        query_clients
            .iter()
            .map(|c| json!({"clid": c.clid, "name": c.client_nickname.as_str()}))
            .collect::<Vec<_>>()
            .into(),
    );
    raw.insert(
        "virtualserver_clientsonline".to_owned(),
        info.virtualserver_clientsonline.into(),
    );

    Ok(ServerStatus {
        protocol: Protocol::TeamSpeak3,
        address,
        name: info.virtualserver_name.to_string(),
        map: None,
        game_type: None,
        version: info.virtualserver_version.as_ref().map(ToString::to_string),
        num_players: info.virtualserver_clientsonline.saturating_sub(query_count),
        max_players: info.virtualserver_maxclients,
        password: info.virtualserver_flag_password,
        players,
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: Value::Object(raw),
    })
}
