//! A Quake 3 reply as a [`ServerStatus`]; the mapping is described in the
//! [parent module](super)'s docs.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::quake3::{strip_colours, Line, StatusHeader, StatusResponse};
use query_wire::kv::Pairs;
use query_wire::{Decode, Reader, TextEncoding};
use serde_json::{json, Value};

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The status from the datagrams of one reply, the first holding the pair line, decoded in
/// `encoding`; the first came back after `rtt`. `dropped` names what the session left out
/// (datagrams over the byte cap, a wait cut short); with the player lines that did not
/// decode, it makes the status `complete: false`, each reason in `raw.incomplete`.
pub(crate) fn from_datagrams(
    target: SocketAddr,
    datagrams: &[&[u8]],
    encoding: TextEncoding,
    rtt: Duration,
    mut dropped: Vec<String>,
) -> Result<ServerStatus, query_wire::Error> {
    let mut info = None;
    let mut rules = IndexMap::new();
    let mut players = Vec::new();
    let mut raw_players = Vec::new();
    for (part, datagram) in datagrams.iter().enumerate() {
        let (reply, unreadable) = StatusResponse::decode_lenient(datagram, encoding)?;
        dropped.extend(
            unreadable
                .iter()
                .map(|error| format!("datagram {part}: a player line left out: {error}")),
        );
        if let (None, Some(found)) = (&info, reply.info) {
            info = Some(found);
            // Every pair is a rule, in order and as sent (colour codes kept); a key sent
            // twice keeps its first place and its last value.
            let mut r = Reader::new(datagram);
            StatusHeader::decode(&mut r, ())?;
            let at = r.offset();
            let line = Line::decode(&mut r, ())?;
            for pair in Pairs::with_origin(line.text, at) {
                let pair = pair?;
                rules.insert(
                    encoding.decode_lossy(pair.key).into_owned(),
                    encoding.decode_lossy(pair.value).into_owned(),
                );
            }
        }
        for p in &reply.players {
            let raw_name = p.name.decode(encoding);
            let extra_fields = p.extra.decode(encoding);
            let mut extra = IndexMap::new();
            if !extra_fields.trim().is_empty() {
                extra.insert("fields".to_owned(), extra_fields.trim().to_owned());
            }
            let mut raw = json!({ "name": raw_name, "score": p.score, "ping": p.ping });
            if !p.more.is_empty() {
                raw["more"] = json!(p.more);
            }
            raw_players.push(raw);
            players.push(Player {
                name: strip_colours(&raw_name).into_owned(),
                score: Some(p.score),
                ping: u32::try_from(p.ping).ok(),
                extra,
                ..Player::default()
            });
        }
    }
    let info = info.unwrap_or_default();
    let owned = |s: Option<&str>| s.map(str::to_owned);
    let raw_hostname = info.hostname.as_deref().unwrap_or_default();
    let version = info
        .version
        .as_deref()
        .or_else(|| info.rule("shortversion"));
    let mut raw = json!({
        "hostname": raw_hostname,
        "players": Value::Array(raw_players),
        "datagrams": datagrams.len(),
        "encoding": encoding.name(),
    });
    let complete = dropped.is_empty();
    if !complete {
        raw["incomplete"] = json!(dropped);
    }
    Ok(ServerStatus {
        protocol: Protocol::Quake3,
        address: target,
        name: strip_colours(raw_hostname).into_owned(),
        map: owned(info.map.as_deref()),
        game_type: owned(info.game_type.as_deref()),
        version: owned(version),
        num_players: u32::try_from(players.len()).unwrap_or(u32::MAX),
        max_players: info.max_clients.unwrap_or(0),
        password: info.password(),
        players,
        teams: Vec::new(),
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete,
        raw,
    })
}
