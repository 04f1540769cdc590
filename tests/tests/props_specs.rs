//! Properties of every declared binary packet: random values round-trip through encode and
//! decode, `encoded_len` is exact, every truncation fails with `UnexpectedEnd` at the cut and a
//! field path, and random bytes never panic a decoder.

use proptest::collection::vec;
use proptest::prelude::*;
use query_specs::{onequery, samp, sqp};
use query_wire::{Decode, Encode, ErrorKind, Text, Uuid};

/// Text of at most `max_chars` characters of any script: up to four bytes each.
fn text(max_chars: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("\\PC{{0,{max_chars}}}")).unwrap()
}

/// Raw bytes of undeclared encoding.
fn raw(max: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(any::<u8>(), 0..=max)
}

/// Encodes, checks the length, decodes, compares; then checks every truncation fails.
///
/// Every packet type here ends with a field whose length is known before it is read (a
/// fixed width, a prefix, a count, or a frame around an `until_end` repeat), so no strict
/// prefix of an encoding is itself a packet: each one fails with `UnexpectedEnd`, reported
/// where the missing bytes start, with `have` reaching exactly to the cut, and with a path
/// that starts with the type's name.
fn check_roundtrip<'a, T>(value: &T, ctx: <T as Encode>::Ctx, buf: &'a mut Vec<u8>) -> T
where
    T: Encode + Decode<'a, Ctx = <T as Encode>::Ctx> + PartialEq + std::fmt::Debug,
{
    *buf = value.to_vec_with(ctx).expect("a valid value encodes");
    assert_eq!(value.encoded_len(ctx), buf.len(), "encoded_len is exact");
    let bytes: &'a [u8] = buf;
    for cut in 0..bytes.len() {
        let err = T::from_bytes_with(&bytes[..cut], ctx)
            .expect_err("every truncation of a complete packet fails");
        let ErrorKind::UnexpectedEnd { need, have } = *err.kind() else {
            panic!("truncation at {cut} gave another error than UnexpectedEnd: {err}");
        };
        assert!(need > have, "{err} (cut at {cut})");
        assert_eq!(
            err.offset() + have,
            cut,
            "{err}: the missing bytes start at the error's offset + have (cut at {cut})"
        );
        let path = err.path_string();
        assert!(
            path.starts_with(<T as Decode<'a>>::NAME),
            "{err}: the path starts with the type's name (cut at {cut})"
        );
    }
    T::from_bytes_with(bytes, ctx).expect("an encoded value decodes")
}

// ---- SQP ----

fn sqp_value(kind: u8, strings: &[String]) -> BoxedStrategy<sqp::Value<'_>> {
    match kind {
        0 => any::<u8>().prop_map(sqp::Value::Byte).boxed(),
        1 => any::<u16>().prop_map(sqp::Value::U16).boxed(),
        2 => any::<u32>().prop_map(sqp::Value::U32).boxed(),
        3 => any::<u64>().prop_map(sqp::Value::U64).boxed(),
        4 => proptest::sample::select(strings.to_vec())
            .prop_map(|s| sqp::Value::Str(Box::leak(s.into_boxed_str())))
            .boxed(),
        _ => (-1.0e6f32..1.0e6).prop_map(sqp::Value::F32).boxed(),
    }
}

/// Leaks a test string so borrowed packet types can hold it for the test's lifetime.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn sqp_server_info() -> impl Strategy<Value = sqp::ServerInfo<'static>> {
    (
        any::<u16>(),
        any::<u16>(),
        text(60),
        text(60),
        text(20),
        text(60),
        any::<u16>(),
    )
        .prop_map(|(cur, max, name, game, build, map, port)| sqp::ServerInfo {
            current_players: cur,
            max_players: max,
            server_name: leak(name),
            game_type: leak(game),
            build_id: leak(build),
            map: leak(map),
            port,
        })
}

fn sqp_rule() -> impl Strategy<Value = sqp::Rule<'static>> {
    (text(20), 0u8..=5, vec(text(30), 1..3)).prop_flat_map(|(key, kind, strings)| {
        let key = leak(key);
        sqp_value(kind, Box::leak(strings.into_boxed_slice())).prop_map(move |value| sqp::Rule {
            key,
            kind,
            value,
        })
    })
}

fn sqp_table() -> impl Strategy<Value = sqp::Table<'static>> {
    let empty = Just(sqp::Table::default());
    let filled = (1u16..4, vec((text(12), 0u8..=5), 1..5), vec(text(20), 1..3)).prop_flat_map(
        |(count, headers, strings)| {
            let strings: &'static [String] = Box::leak(strings.into_boxed_slice());
            let fields: Vec<sqp::FieldHeader<'static>> = headers
                .into_iter()
                .map(|(name, kind)| sqp::FieldHeader {
                    name: leak(name),
                    kind,
                })
                .collect();
            let values: Vec<_> = (0..usize::from(count))
                .flat_map(|_| fields.iter().map(|f| sqp_value(f.kind, strings)))
                .collect();
            values.prop_map(move |values| sqp::Table {
                count,
                fields: Some(fields.clone()),
                values,
            })
        },
    );
    prop_oneof![empty, filled]
}

fn sqp_chunks() -> impl Strategy<Value = (sqp::ChunkSet, sqp::Chunks<'static>)> {
    (0u8..32).prop_flat_map(|bits| {
        let requested = sqp::ChunkSet::from_bits_truncate(bits);
        let want = move |flag| requested.contains(flag);
        (
            sqp_server_info().prop_map(move |v| want(sqp::ChunkSet::SERVER_INFO).then_some(v)),
            vec(sqp_rule(), 0..5).prop_map(move |v| want(sqp::ChunkSet::SERVER_RULES).then_some(v)),
            sqp_table().prop_map(move |v| want(sqp::ChunkSet::PLAYER_INFO).then_some(v)),
            sqp_table().prop_map(move |v| want(sqp::ChunkSet::TEAM_INFO).then_some(v)),
            vec(-1.0e6f32..1.0e6, 0..=25)
                .prop_map(move |v| want(sqp::ChunkSet::METRICS).then_some(v)),
        )
            .prop_map(
                move |(server_info, server_rules, player_info, team_info, metrics)| {
                    (
                        requested,
                        sqp::Chunks {
                            server_info,
                            server_rules,
                            player_info,
                            team_info,
                            metrics: metrics.map(|values| sqp::Metrics { values }),
                        },
                    )
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn sqp_requests_roundtrip(challenge: u32, version: u16, bits: u8, is_challenge: bool) {
        let packet = if is_challenge {
            sqp::Request::Challenge(sqp::ChallengeRequest::default())
        } else {
            sqp::Request::Query(sqp::QueryRequest {
                challenge,
                version,
                requested: sqp::ChunkSet::from_bits_retain(bits),
            })
        };
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn sqp_responses_roundtrip(
        (requested, chunks) in sqp_chunks(),
        challenge: u32,
        version: u16,
    ) {
        let packet = sqp::Response::Query(sqp::QueryResponse {
            challenge,
            version,
            current_packet: 0,
            last_packet: 0,
            chunks,
        });
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, requested, &mut buf), packet);
    }

    #[test]
    fn sqp_challenge_response_roundtrips(challenge: u32) {
        let packet = sqp::Response::Challenge(sqp::ChallengeResponse { challenge });
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, sqp::ChunkSet::empty(), &mut buf), packet);
    }

    #[test]
    fn sqp_fragments_roundtrip(
        challenge: u32,
        version: u16,
        current_packet: u8,
        last_packet: u8,
        payload in raw(300),
    ) {
        let packet = sqp::QueryResponseFragment {
            challenge,
            version,
            current_packet,
            last_packet,
            payload: Box::leak(payload.into_boxed_slice()),
        };
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn sqp_decoders_never_panic(bytes in raw(300), bits: u8) {
        let requested = sqp::ChunkSet::from_bits_retain(bits);
        let _ = sqp::Request::from_bytes(&bytes);
        let _ = sqp::Response::from_bytes_with(&bytes, requested);
        let _ = sqp::Chunks::from_bytes_with(&bytes, requested);
        let _ = sqp::QueryResponseFragment::from_bytes(&bytes);
    }
}

// ---- OneQuery ----

fn oq_family() -> impl Strategy<Value = onequery::Family> {
    prop_oneof![
        Just(onequery::Family::OneQuery),
        Just(onequery::Family::HyQuery2)
    ]
}

fn oq_request() -> impl Strategy<Value = onequery::Request<'static>> {
    let query = (
        any::<[u8; 32]>(),
        any::<u32>(),
        any::<u32>(),
        proptest::option::of(text(30)),
    )
        .prop_map(|(token, request_id, offset, auth)| onequery::Query {
            token,
            request_id,
            flags: if auth.is_some() {
                onequery::RequestFlags::HAS_AUTH_TOKEN
            } else {
                onequery::RequestFlags::empty()
            },
            offset,
            auth_token: auth.map(leak),
        });
    (oq_family(), 0u8..=4, query).prop_map(|(family, kind, query)| onequery::Request {
        family,
        kind,
        query: (kind != onequery::KIND_CHALLENGE).then_some(query),
    })
}

fn oq_server_info(with_address: bool) -> impl Strategy<Value = onequery::ServerInfo<'static>> {
    (
        (text(30), text(60), any::<i32>(), any::<i32>()),
        (text(20), any::<i32>(), text(10), text(30), any::<u16>()),
    )
        .prop_map(
            move |((name, motd, count, max), (version, protocol, hash, host, port))| {
                onequery::ServerInfo {
                    server_name: leak(name),
                    motd: leak(motd),
                    player_count: count,
                    max_players: max,
                    version: leak(version),
                    protocol_version: protocol,
                    protocol_hash: leak(hash),
                    host: with_address.then(|| leak(host)),
                    port: with_address.then_some(port),
                }
            },
        )
}

fn oq_player_list() -> impl Strategy<Value = onequery::PlayerList<'static>> {
    (
        any::<u32>(),
        any::<u32>(),
        vec((text(16), any::<u128>()), 0..8),
    )
        .prop_map(|(total, offset, players)| onequery::PlayerList {
            total,
            count: players.len() as u32,
            offset,
            players: players
                .into_iter()
                .map(|(name, id)| onequery::Player {
                    username: leak(name),
                    uuid: Uuid::from_u128(id),
                })
                .collect(),
        })
}

fn oq_reply() -> impl Strategy<Value = onequery::Reply<'static>> {
    let family = prop_oneof![
        Just(onequery::ReplyFamily::OneReply),
        Just(onequery::ReplyFamily::HyReply2)
    ];
    let challenge = any::<[u8; 32]>().prop_map(|token| {
        onequery::ReplyBody::Challenge(onequery::ChallengeReply {
            token,
            reserved: query_wire::Reserved,
        })
    });
    let query = (any::<u16>(), any::<u32>()).prop_flat_map(|(bits, request_id)| {
        let flags = onequery::ReplyFlags::from_bits_retain(bits);
        let with_address = flags.contains(onequery::ReplyFlags::HAS_ADDRESS);
        let entry = prop_oneof![
            oq_server_info(with_address).prop_map(onequery::Payload::ServerInfo),
            oq_player_list().prop_map(onequery::Payload::PlayerList),
            (3u16.., raw(40)).prop_map(|(tag, body)| onequery::Payload::Unknown(
                tag,
                Box::leak(body.into_boxed_slice())
            )),
        ];
        vec(entry, 0..3).prop_map(move |payload| {
            onequery::ReplyBody::Query(onequery::QueryReply {
                flags,
                request_id,
                payload,
            })
        })
    });
    (family, prop_oneof![challenge, query])
        .prop_map(|(family, body)| onequery::Reply { family, body })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn onequery_requests_roundtrip(packet in oq_request()) {
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn onequery_replies_roundtrip(packet in oq_reply()) {
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn onequery_decoders_never_panic(bytes in raw(300), magic in 0usize..4) {
        // Random bytes rarely start with a magic; put one in front half of the time.
        let magics: [&[u8]; 4] = [b"ONEQUERY", b"ONEREPLY", b"HYREPLY2", b""];
        let input = [magics[magic], &bytes].concat();
        let _ = onequery::Request::from_bytes(&input);
        let _ = onequery::Reply::from_bytes(&input);
    }
}

// ---- SA:MP ----

fn samp_header(opcode: u8) -> impl Strategy<Value = samp::Header> {
    (any::<[u8; 4]>(), any::<u16>()).prop_map(move |(address, port)| samp::Header {
        address,
        port,
        opcode,
    })
}

fn text_raw(max: usize) -> impl Strategy<Value = Text<'static>> {
    raw(max).prop_map(|bytes| Text(bytes.into()))
}

fn samp_request() -> impl Strategy<Value = samp::Request<'static>> {
    let body = prop_oneof![
        Just(samp::RequestBody::Info),
        Just(samp::RequestBody::Rules),
        Just(samp::RequestBody::Clients),
        Just(samp::RequestBody::Players),
        Just(samp::RequestBody::Extra),
        any::<[u8; 4]>().prop_map(samp::RequestBody::Ping),
        (text_raw(30), text_raw(60))
            .prop_map(|(password, command)| samp::RequestBody::Rcon { password, command }),
    ];
    body.prop_flat_map(|body| {
        let opcode = body.tag();
        samp_header(opcode).prop_map(move |header| samp::Request {
            header,
            body: body.clone(),
        })
    })
}

fn samp_reply() -> impl Strategy<Value = samp::Reply<'static>> {
    let info = (
        any::<bool>(),
        any::<u16>(),
        any::<u16>(),
        text_raw(63),
        text_raw(39),
        text_raw(39),
    )
        .prop_map(
            |(password, players, max_players, hostname, gamemode, language)| {
                samp::ReplyBody::Info(samp::Info {
                    password,
                    players,
                    max_players,
                    hostname,
                    gamemode,
                    language,
                })
            },
        );
    let rules = vec((text_raw(20), text_raw(40)), 0..8).prop_map(|rules| {
        samp::ReplyBody::Rules(
            rules
                .into_iter()
                .map(|(name, value)| samp::Rule { name, value })
                .collect(),
        )
    });
    let clients = vec((text_raw(24), any::<i32>()), 0..8).prop_map(|clients| {
        samp::ReplyBody::Clients(
            clients
                .into_iter()
                .map(|(name, score)| samp::Client { name, score })
                .collect(),
        )
    });
    let players = vec(
        (any::<u8>(), text_raw(24), any::<i32>(), any::<u32>()),
        0..8,
    )
    .prop_map(|players| {
        samp::ReplyBody::Players(
            players
                .into_iter()
                .map(|(id, name, score, ping)| samp::Player {
                    id,
                    name,
                    score,
                    ping,
                })
                .collect(),
        )
    });
    let extra = (text_raw(30), text_raw(30), text_raw(30), text_raw(30)).prop_map(
        |(discord, light_banner, dark_banner, logo)| {
            samp::ReplyBody::Extra(samp::Extra {
                discord,
                light_banner,
                dark_banner,
                logo,
            })
        },
    );
    let body = prop_oneof![
        info,
        rules,
        clients,
        players,
        extra,
        any::<[u8; 4]>().prop_map(samp::ReplyBody::Ping),
        text_raw(80).prop_map(samp::ReplyBody::Rcon),
    ];
    body.prop_flat_map(|body| {
        let opcode = body.tag();
        samp_header(opcode).prop_map(move |header| samp::Reply {
            header,
            body: body.clone(),
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn samp_requests_roundtrip(packet in samp_request()) {
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn samp_replies_roundtrip(packet in samp_reply()) {
        let mut buf = Vec::new();
        prop_assert_eq!(check_roundtrip(&packet, (), &mut buf), packet);
    }

    #[test]
    fn samp_decoders_never_panic(bytes in raw(300), opcode in proptest::sample::select(b"ircdpox".to_vec())) {
        let input = [b"SAMP\x7f\x00\x00\x01\x61\x1e".as_slice(), &[opcode], &bytes].concat();
        let _ = samp::Request::from_bytes(&input);
        let _ = samp::Reply::from_bytes(&input);
        let _ = samp::Reply::from_bytes(&bytes);
    }

    #[test]
    fn samp_reply_with_mismatched_opcode_is_refused(packet in samp_reply(), other in proptest::sample::select(b"ircdpox".to_vec())) {
        prop_assume!(other != packet.header.opcode);
        let mut wrong = packet.clone();
        wrong.header.opcode = other;
        prop_assert!(wrong.to_vec().is_err(), "a body that contradicts its opcode does not encode");
    }
}
