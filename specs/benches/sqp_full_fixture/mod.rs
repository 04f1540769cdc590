//! The SQP query response with every chunk that `sqp_full_codec` times and `codec_probe` counts.

use query_specs::sqp::{
    Chunks, FieldHeader, Metrics, QueryResponse, Response, Rule, ServerInfo, Table, Value,
};

/// Player and team names, as a real server list shows them.
const NAMES: [&str; 10] = [
    "Vex",
    "kalimba",
    "Dr. Tortoise",
    "ńoname",
    "xXx_sniper_xXx",
    "Mara",
    "Zed",
    "hollow",
    "Pixel Pete",
    "オオカミ",
];

/// The response the benchmark decodes: every chunk, 30 players, 2 teams.
pub fn response() -> Response<'static> {
    let rules = vec![
        rule("friendlyFire", Value::Byte(0)),
        rule("roundTime", Value::U16(600)),
        rule("seed", Value::U32(1_234_567)),
        rule("worldId", Value::U64(0x0123_4567_89ab_cdef)),
        rule("motd", Value::Str("Welcome! Be nice, no cheats.")),
        rule("gravity", Value::F32(9.81)),
        rule("maxPing", Value::U16(250)),
        rule("region", Value::Str("eu-west")),
        rule("hardcore", Value::Byte(1)),
        rule("tickRate", Value::U16(64)),
        rule("mapCycle", Value::Str("dust,harbor,crater,summit")),
        rule("uptime", Value::U32(86_400)),
    ];
    let player_fields = vec![
        field("name", 4),
        field("score", 2),
        field("ping", 1),
        field("team", 0),
    ];
    let player_values = (0..30u32)
        .flat_map(|i| {
            [
                Value::Str(NAMES[i as usize % NAMES.len()]),
                Value::U32(i * 37 % 500),
                Value::U16((20 + i * 7 % 180) as u16),
                Value::Byte((i % 2) as u8),
            ]
        })
        .collect();
    let team_values = vec![
        Value::Str("Red"),
        Value::U32(1200),
        Value::Str("Blue"),
        Value::U32(1350),
    ];
    Response::Query(QueryResponse {
        challenge: 0x1234_5678,
        version: 1,
        current_packet: 0,
        last_packet: 0,
        chunks: Chunks {
            server_info: Some(ServerInfo {
                current_players: 30,
                max_players: 64,
                server_name: "Official EU #3 | Hardcore | 64 tick",
                game_type: "Team Deathmatch",
                build_id: "2024.11.2-r51812",
                map: "harbor",
                port: 7777,
            }),
            server_rules: Some(rules),
            player_info: Some(Table {
                count: 30,
                fields: Some(player_fields),
                values: player_values,
            }),
            team_info: Some(Table {
                count: 2,
                fields: Some(vec![field("name", 4), field("score", 2)]),
                values: team_values,
            }),
            metrics: Some(Metrics {
                values: vec![0.42, 61.9, 128.0, 3.5, 0.0],
            }),
        },
    })
}

fn rule(key: &'static str, value: Value<'static>) -> Rule<'static> {
    Rule {
        key,
        kind: value.tag(),
        value,
    }
}

fn field(name: &'static str, kind: u8) -> FieldHeader<'static> {
    FieldHeader { name, kind }
}
