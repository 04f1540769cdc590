//! A2S replies as a [`ServerStatus`].

use std::net::SocketAddr;

use indexmap::IndexMap;
use query_specs::a2s::{
    Info, InfoDetailed, Player as WirePlayer, PlayerList, PlayersHead, Rule, RulesHead, ShipStats,
};
use query_wire::{Decode, Text, TextEncoding};
use serde_json::{json, Map, Value};

use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus};

/// The server's answer to INFO: Source's `S2A_INFO` or GoldSrc's `S2A_INFO_DETAILED`.
#[derive(Debug, Clone, Copy)]
pub enum InfoReply<'r, 'a> {
    /// `S2A_INFO`.
    Info(&'r Info<'a>),
    /// `S2A_INFO_DETAILED`.
    Detailed(&'r InfoDetailed<'a>),
}

/// Maps an INFO reply into a [`ServerStatus`] without players or rules (see
/// [`add_players`] and [`add_rules`]), text decoded with `encoding`, `ping_ms` 0.
///
/// - Name, map, game (the game's description, `Counter-Strike 2`) as the game type, version,
///   players and slots: Rust writes counts past 255 in the keywords as `cp<N>` and `mp<N>`,
///   which win over the u8 fields ([`Info::player_count`], [`Info::slots`]).
/// - `password` is the visibility byte.
/// - `raw` keeps the rest: the game folder, app id, network protocol, bots, server type and
///   environment (as the letters sent), VAC, and each Extra Data field sent (game port, Steam
///   id and game id as decimal text, since they pass JavaScript's exact integers; SourceTV's
///   port and name; keywords); The Ship's mode, witnesses and duration; GoldSrc's address and
///   mod block.
pub fn status_from_info(
    address: SocketAddr,
    info: InfoReply<'_, '_>,
    encoding: TextEncoding,
) -> ServerStatus {
    let text = |t: &Text<'_>| t.decode(encoding).into_owned();
    let letter = |b: u8| char::from(b).to_string();
    let (name, map, game, version, players, slots, visibility, raw) = match info {
        InfoReply::Info(info) => {
            let mut raw = Map::new();
            raw.insert("folder".into(), text(&info.folder).into());
            raw.insert("app_id".into(), info.app_id.into());
            raw.insert("protocol".into(), info.protocol.into());
            raw.insert("bots".into(), info.bots.into());
            raw.insert("server_type".into(), letter(info.server_type).into());
            raw.insert("environment".into(), letter(info.environment).into());
            raw.insert("vac".into(), (info.vac != 0).into());
            if let Some(ship) = &info.the_ship {
                raw.insert(
                    "the_ship".into(),
                    json!({"mode": ship.mode, "witnesses": ship.witnesses, "duration": ship.duration}),
                );
            }
            if let Some(extra) = &info.extra {
                raw.insert("extra_data_flag".into(), extra.flags.into());
                if let Some(port) = extra.port {
                    raw.insert("port".into(), port.into());
                }
                if let Some(steam_id) = extra.steam_id {
                    raw.insert("steam_id".into(), steam_id.to_string().into());
                }
                if let Some(spectator) = &extra.spectator {
                    raw.insert("spectator_port".into(), spectator.port.into());
                    raw.insert("spectator_name".into(), text(&spectator.name).into());
                }
                if let Some(keywords) = &extra.keywords {
                    raw.insert("keywords".into(), text(keywords).into());
                }
                if let Some(game_id) = extra.game_id {
                    raw.insert("game_id".into(), game_id.to_string().into());
                }
            }
            (
                &info.name,
                &info.map,
                &info.game,
                Some(text(&info.version)),
                info.player_count(),
                info.slots(),
                info.visibility,
                raw,
            )
        }
        InfoReply::Detailed(info) => {
            let mut raw = Map::new();
            raw.insert("address".into(), text(&info.address).into());
            raw.insert("folder".into(), text(&info.folder).into());
            raw.insert("protocol".into(), info.protocol.into());
            raw.insert("bots".into(), info.bots.into());
            raw.insert("server_type".into(), letter(info.server_type).into());
            raw.insert("environment".into(), letter(info.environment).into());
            raw.insert("vac".into(), (info.vac != 0).into());
            raw.insert("is_mod".into(), (info.is_mod != 0).into());
            if let Some(m) = &info.mod_info {
                raw.insert(
                    "mod".into(),
                    json!({
                        "link": text(&m.link),
                        "download_link": text(&m.download_link),
                        "version": m.version,
                        "size": m.size,
                        "multiplayer_only": m.kind == 1,
                        "own_dll": m.dll == 1,
                    }),
                );
            }
            (
                &info.name,
                &info.map,
                &info.game,
                None,
                u32::from(info.players),
                u32::from(info.max_players),
                info.visibility,
                raw,
            )
        }
    };
    ServerStatus {
        protocol: Protocol::A2s,
        address,
        name: text(name),
        map: Some(text(map)),
        game_type: Some(text(game)),
        version,
        num_players: players,
        max_players: slots,
        password: Some(visibility != 0),
        players: Vec::new(),
        teams: Vec::new(),
        rules: IndexMap::new(),
        ping_ms: 0.0,
        complete: true,
        raw: Value::Object(raw),
    }
}

/// Adds a player list: every row sent, unnamed ones (players still connecting) too, with
/// score and seconds on the server; The Ship's deaths and money go to [`Player::extra`].
/// `raw.players_count` is the count byte as sent.
pub fn add_players(status: &mut ServerStatus, list: &PlayerList<'_>, encoding: TextEncoding) {
    let (count, rows, stats): (u8, &[WirePlayer<'_>], &[ShipStats]) = match list {
        PlayerList::Standard(list) => (list.count, &list.players, &[]),
        PlayerList::TheShip(list) => (list.count, &list.players, &list.stats),
    };
    add_rows(status, count, rows, encoding);
    for (player, stats) in status.players.iter_mut().zip(stats) {
        player
            .extra
            .insert("deaths".into(), stats.deaths.to_string());
        player.extra.insert("money".into(), stats.money.to_string());
    }
}

/// Sets the players to `rows` (score and seconds on the server) and `raw.players_count` to
/// the count byte as sent.
pub(super) fn add_rows(
    status: &mut ServerStatus,
    count: u8,
    rows: &[WirePlayer<'_>],
    encoding: TextEncoding,
) {
    status.players = rows
        .iter()
        .map(|row| Player {
            name: row.name.decode(encoding).into_owned(),
            score: Some(i64::from(row.score)),
            duration: Some(f64::from(row.duration)),
            ..Player::default()
        })
        .collect();
    set_raw(status, "players_count", count.into());
    status.note_cut_player_list();
}

/// Adds the rules, in the order sent; `raw.rules_count` is the count as sent.
pub fn add_rules(
    status: &mut ServerStatus,
    count: u16,
    rules: &[Rule<'_>],
    encoding: TextEncoding,
) {
    status.rules = rules
        .iter()
        .map(|rule| {
            (
                rule.name.decode(encoding).into_owned(),
                rule.value.decode(encoding).into_owned(),
            )
        })
        .collect();
    set_raw(status, "rules_count", count.into());
}

/// The rows of a player list cut short (a lost part, a server that stops mid-row): every row
/// that arrived whole, and the count byte. `None` when not even the count arrived.
pub fn players_before_cut(reply: &[u8]) -> Option<(u8, Vec<WirePlayer<'_>>)> {
    let (head, rest) = PlayersHead::from_prefix(reply, ()).ok()?;
    Some((head.count, whole_rows(rest)))
}

/// The pairs of a rules reply cut short: every pair that arrived whole, and the count.
pub fn rules_before_cut(reply: &[u8]) -> Option<(u16, Vec<Rule<'_>>)> {
    let (head, rest) = RulesHead::from_prefix(reply, ()).ok()?;
    Some((head.count, whole_rows(rest)))
}

/// The rows at the start of `rest` that decode whole, each through its declared type.
fn whole_rows<'a, T: Decode<'a, Ctx = ()>>(mut rest: &'a [u8]) -> Vec<T> {
    let mut rows = Vec::new();
    while let Ok((row, after)) = T::from_prefix(rest, ()) {
        rows.push(row);
        rest = after;
    }
    rows
}

/// Records `value` under `key` in the status's `raw` object.
pub fn set_raw(status: &mut ServerStatus, key: &str, value: Value) {
    if let Value::Object(raw) = &mut status.raw {
        raw.insert(key.to_owned(), value);
    }
}
