//! Properties of the A2S packets: random values round-trip with an exact `encoded_len`; every
//! truncation either fails with `UnexpectedEnd` at the cut or, where the format lets a packet
//! end early (the rows of an `until_end` list, the trailing Extra Data block), decodes to a
//! packet that re-encodes to exactly the bytes kept; random bytes never panic a decoder.

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use query_specs::a2s::{
    Challenge, ExtraData, Info, InfoDetailed, InfoRequest, ModInfo, Player, PlayerList, Players,
    Reassembly, Reply, Request, Rule, Rules, ShipPlayers, ShipStats, Spectator, TheShip,
    EDF_GAME_ID, EDF_KEYWORDS, EDF_PORT, EDF_SPECTATOR, EDF_STEAM_ID, INFO_PAYLOAD, THE_SHIP,
};
use query_wire::{Decode, Encode, ErrorKind, Padding, Text};

/// NUL-terminated text: any bytes but NUL.
fn text() -> impl Strategy<Value = Text<'static>> {
    vec(1u8..=255, 0..24).prop_map(|bytes| Text(bytes.into()))
}

fn extra() -> impl Strategy<Value = ExtraData<'static>> {
    (
        option::of(any::<u16>()),
        option::of(any::<u64>()),
        option::of((any::<u16>(), text())),
        option::of(text()),
        option::of(any::<u64>()),
    )
        .prop_map(|(port, steam_id, spectator, keywords, game_id)| {
            let bit = |present: bool, bit: u8| if present { bit } else { 0 };
            ExtraData {
                flags: bit(port.is_some(), EDF_PORT)
                    | bit(steam_id.is_some(), EDF_STEAM_ID)
                    | bit(spectator.is_some(), EDF_SPECTATOR)
                    | bit(keywords.is_some(), EDF_KEYWORDS)
                    | bit(game_id.is_some(), EDF_GAME_ID),
                port,
                steam_id,
                spectator: spectator.map(|(port, name)| Spectator { port, name }),
                keywords,
                game_id,
            }
        })
}

fn info() -> impl Strategy<Value = Info<'static>> {
    (
        (any::<u8>(), text(), text(), text(), text()),
        (prop_oneof![Just(THE_SHIP), any::<u16>()], any::<[u8; 7]>()),
        (any::<[u8; 3]>(), text(), option::of(extra())),
    )
        .prop_map(
            |((protocol, name, map, folder, game), (app_id, b), (ship, version, extra))| Info {
                protocol,
                name,
                map,
                folder,
                game,
                app_id,
                players: b[0],
                max_players: b[1],
                bots: b[2],
                server_type: b[3],
                environment: b[4],
                visibility: b[5],
                vac: b[6],
                the_ship: (app_id == THE_SHIP).then_some(TheShip {
                    mode: ship[0],
                    witnesses: ship[1],
                    duration: ship[2],
                }),
                version,
                extra,
            },
        )
}

fn info_detailed() -> impl Strategy<Value = InfoDetailed<'static>> {
    (
        (text(), text(), text(), text(), text()),
        any::<[u8; 8]>(),
        option::of((text(), text(), any::<i32>(), any::<i32>(), any::<[u8; 2]>())),
    )
        .prop_map(
            |((address, name, map, folder, game), b, mod_info)| InfoDetailed {
                address,
                name,
                map,
                folder,
                game,
                players: b[0],
                max_players: b[1],
                protocol: b[2],
                server_type: b[3],
                environment: b[4],
                visibility: b[5],
                is_mod: u8::from(mod_info.is_some()),
                mod_info: mod_info.map(|(link, download_link, version, size, k)| ModInfo {
                    link,
                    download_link,
                    reserved: Padding,
                    version,
                    size,
                    kind: k[0],
                    dll: k[1],
                }),
                vac: b[6],
                bots: b[7],
            },
        )
}

fn player() -> impl Strategy<Value = Player<'static>> {
    (any::<u8>(), text(), any::<i32>(), -1e6f32..1e6).prop_map(|(index, name, score, duration)| {
        Player {
            index,
            name,
            score,
            duration,
        }
    })
}

fn reply() -> impl Strategy<Value = (u16, Reply<'static>)> {
    prop_oneof![
        any::<i32>().prop_map(|challenge| (0, Reply::Challenge(Challenge { challenge }))),
        info().prop_map(|info| (0, Reply::Info(info))),
        info_detailed().prop_map(|info| (0, Reply::InfoDetailed(info))),
        (any::<u8>(), vec(player(), 0..6)).prop_map(|(count, players)| (
            0,
            Reply::Players(PlayerList::Standard(Players { count, players }))
        )),
        vec((player(), any::<i32>(), any::<i32>()), 0..6).prop_map(|rows| {
            let count = rows.len() as u8;
            let (players, stats) = rows
                .into_iter()
                .map(|(p, deaths, money)| (p, ShipStats { deaths, money }))
                .unzip();
            (
                THE_SHIP,
                Reply::Players(PlayerList::TheShip(ShipPlayers {
                    count,
                    players,
                    stats,
                })),
            )
        }),
        (any::<u16>(), vec((text(), text()), 0..6)).prop_map(|(count, pairs)| (
            0,
            Reply::Rules(Rules {
                count,
                rules: pairs
                    .into_iter()
                    .map(|(name, value)| Rule { name, value })
                    .collect(),
            })
        )),
    ]
}

fn request() -> impl Strategy<Value = Request<'static>> {
    prop_oneof![
        option::of(any::<i32>()).prop_map(|challenge| Request::Info(InfoRequest {
            payload: INFO_PAYLOAD,
            challenge,
        })),
        any::<i32>().prop_map(|challenge| Request::Players(Challenge { challenge })),
        any::<i32>().prop_map(|challenge| Request::Rules(Challenge { challenge })),
    ]
}

/// Round trip, exact length, and what every truncation gives (see the module docs).
fn check<'a, T>(value: &T, ctx: <T as Encode>::Ctx, bytes: &'a [u8])
where
    T: Encode + Decode<'a, Ctx = <T as Encode>::Ctx> + PartialEq + std::fmt::Debug,
    <T as Encode>::Ctx: Copy,
{
    assert_eq!(value.encoded_len(ctx), bytes.len());
    assert_eq!(&T::from_bytes_with(bytes, ctx).unwrap(), value);
    for cut in 0..bytes.len() {
        match T::from_bytes_with(&bytes[..cut], ctx) {
            Ok(shorter) => assert_eq!(shorter.to_vec_with(ctx).unwrap(), &bytes[..cut]),
            Err(err) => {
                let ErrorKind::UnexpectedEnd { have, .. } = *err.kind() else {
                    panic!("cut at {cut}: {err}");
                };
                assert_eq!(err.offset() + have, cut, "{err}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn replies_roundtrip((app_id, reply) in reply()) {
        let bytes = reply.to_vec_with(app_id).unwrap();
        check(&reply, app_id, &bytes);
    }

    #[test]
    fn requests_roundtrip(request in request()) {
        let bytes = request.to_vec().unwrap();
        check(&request, (), &bytes);
    }

    #[test]
    fn decoders_never_panic(bytes in vec(any::<u8>(), 0..300), app_id in prop_oneof![Just(THE_SHIP), Just(0u16)]) {
        let single = [b"\xff\xff\xff\xff".as_slice(), &bytes].concat();
        let _ = Reply::from_bytes_with(&single, app_id);
        let _ = Request::from_bytes(&single);
        let split = [b"\xfe\xff\xff\xff".as_slice(), &bytes].concat();
        let mut parts = Reassembly::new();
        let _ = parts.push(&split);
        let _ = parts.push(&split);
    }
}
