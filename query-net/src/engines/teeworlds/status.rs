//! A Teeworlds / DDNet reply as a [`ServerStatus`]; the mapping is described in the
//! [parent module](super)'s docs.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::teeworlds::seven::{InfoReply, CLIENT_BOT, CLIENT_SPECTATOR};
use query_specs::teeworlds::{Client, Info, Reply, FLAG_PASSWORD};
use query_wire::{Decode, Text, TextEncoding};
use serde_json::json;

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// What every form of the reply carries, read from `inf3` or `iext`.
struct Header<'t> {
    version: &'t Text<'t>,
    name: &'t Text<'t>,
    map: &'t Text<'t>,
    game_type: &'t Text<'t>,
    flags: u32,
    num_players: u32,
    max_players: u32,
    num_clients: u32,
    max_clients: u32,
}

/// The [`Header`] of any reply form: 0.6's `inf3`, DDNet's `iext` and 0.7's info reply declare
/// these fields under the same names.
macro_rules! header {
    ($info:expr) => {
        Header {
            version: &$info.version,
            name: &$info.name,
            map: &$info.map,
            game_type: &$info.game_type,
            flags: $info.flags,
            num_players: $info.num_players,
            max_players: $info.max_players,
            num_clients: $info.num_clients,
            max_clients: $info.max_clients,
        }
    };
}

/// The status of a 0.6 `inf3` reply, which came back after `rtt`.
pub(crate) fn from_info(
    target: SocketAddr,
    info: &Info<'_>,
    encoding: TextEncoding,
    rtt: Duration,
) -> ServerStatus {
    let header = header!(info);
    let players = players(&info.clients, encoding);
    let mut status = build(target, &header, players, encoding, rtt, Vec::new());
    status.raw["reply"] = json!("inf3");
    status
}

/// The status of a 0.7 info reply, which came back `rtt` after the info request.
pub(crate) fn from_seven(
    target: SocketAddr,
    info: &InfoReply<'_>,
    encoding: TextEncoding,
    rtt: Duration,
) -> ServerStatus {
    let header = header!(info);
    let players = info
        .clients
        .iter()
        .map(|client| {
            let mut player = player(
                &client.name,
                &client.clan,
                client.country,
                client.score,
                client.flags & CLIENT_SPECTATOR == 0,
                encoding,
            );
            if client.flags & CLIENT_BOT != 0 {
                player.extra.insert("bot".to_owned(), "1".to_owned());
            }
            player
        })
        .collect();
    let mut status = build(target, &header, players, encoding, rtt, Vec::new());
    status
        .rules
        .insert("skill_level".to_owned(), info.skill_level.to_string());
    let hostname = info.hostname.decode(encoding);
    if !hostname.is_empty() {
        status
            .rules
            .insert("hostname".to_owned(), hostname.into_owned());
    }
    status.raw["reply"] = json!("inf3 0.7");
    status
}

/// The status of DDNet's extended reply from its datagrams in number order (`iext` first),
/// the first of which came back after `rtt`. `dropped` names what the session left out; with
/// clients missing from the list, it makes the status `complete: false`.
pub(crate) fn from_extended(
    target: SocketAddr,
    datagrams: &[&[u8]],
    encoding: TextEncoding,
    rtt: Duration,
    dropped: Vec<String>,
) -> Result<ServerStatus, query_wire::Error> {
    let replies = datagrams
        .iter()
        .map(|d| Reply::from_bytes(d))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(Reply::Extended(first)) = replies.first() else {
        return Err(query_wire::Error::new(
            query_wire::ErrorKind::Invalid("an extended reply starts with its iext datagram"),
            0,
        ));
    };
    let clients: Vec<Client<'_>> = replies
        .iter()
        .flat_map(|reply| reply.clients().iter().cloned())
        .collect();
    let header = header!(first);
    let mut status = build(
        target,
        &header,
        players(&clients, encoding),
        encoding,
        rtt,
        dropped,
    );
    status
        .rules
        .insert("map_crc".to_owned(), first.map_crc.to_string());
    status
        .rules
        .insert("map_size".to_owned(), first.map_size.to_string());
    status.raw["reply"] = json!("iext");
    status.raw["datagrams"] = json!(datagrams.len());
    Ok(status)
}

/// The players of a 0.6 or DDNet reply.
fn players(clients: &[Client<'_>], encoding: TextEncoding) -> Vec<Player> {
    clients
        .iter()
        .map(|client| {
            player(
                &client.name,
                &client.clan,
                client.country,
                client.score,
                client.is_player != 0,
                encoding,
            )
        })
        .collect()
}

/// One client as a player: the score, and clan (when set), country and `is_player` in
/// `extra`.
fn player(
    name: &Text<'_>,
    clan: &Text<'_>,
    country: i32,
    score: i32,
    is_player: bool,
    encoding: TextEncoding,
) -> Player {
    let mut extra = IndexMap::new();
    let clan = clan.decode(encoding);
    if !clan.is_empty() {
        extra.insert("clan".to_owned(), clan.into_owned());
    }
    extra.insert("country".to_owned(), country.to_string());
    extra.insert("is_player".to_owned(), u8::from(is_player).to_string());
    Player {
        name: name.decode(encoding).into_owned(),
        score: Some(i64::from(score)),
        extra,
        ..Player::default()
    }
}

fn build(
    target: SocketAddr,
    header: &Header<'_>,
    players: Vec<Player>,
    encoding: TextEncoding,
    rtt: Duration,
    mut dropped: Vec<String>,
) -> ServerStatus {
    let text = |t: &Text<'_>| t.decode(encoding).into_owned();
    let non_empty = |t: &Text<'_>| Some(text(t)).filter(|s| !s.is_empty());
    let mut rules = IndexMap::new();
    rules.insert("num_clients".to_owned(), header.num_clients.to_string());
    rules.insert("max_clients".to_owned(), header.max_clients.to_string());
    rules.insert("flags".to_owned(), header.flags.to_string());
    let listed = players.len();
    let counted = header.num_clients as usize;
    let mut raw = json!({ "clients": listed, "encoding": encoding.name() });
    if listed < counted {
        raw["players_missing"] = json!(counted - listed);
        dropped.push(format!(
            "the reply lists {listed} of the {counted} clients the server counts"
        ));
    }
    let complete = dropped.is_empty();
    if !complete {
        raw["incomplete"] = json!(dropped);
    }
    ServerStatus {
        protocol: Protocol::Teeworlds,
        address: target,
        name: text(header.name),
        map: non_empty(header.map),
        game_type: non_empty(header.game_type),
        version: non_empty(header.version),
        num_players: header.num_players,
        max_players: header.max_players,
        password: Some(header.flags & FLAG_PASSWORD != 0),
        players,
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete,
        raw,
    }
}
