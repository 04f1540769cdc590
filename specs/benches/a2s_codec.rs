//! The cost of the derived A2S decoder against a hand-written one and the `a2s` crate, on real
//! replies of one CS:GO server: its `S2A_INFO` (216 bytes, with the Extra Data Flag block:
//! port, SteamID, keywords, game id) and its `S2A_PLAYER` (602 bytes, exactly 30 players, 7
//! names with non-ASCII bytes), each a single datagram, so no reassembly is needed.
//!
//! Two criterion groups, `a2s_info` and `a2s_players`, hold these benchmarks:
//!
//! - `derived`: `query_specs::a2s::Reply::from_bytes_with(datagram, 0)`, as the client calls it,
//!   into the borrowed `Reply` (strings are `Text`, borrowed; the players a `Vec` that the
//!   derived `until_end` repeat allocates once, sized from its first row).
//! - `handwritten`: `handwritten_a2s`, a decoder written by hand for these two replies with the
//!   same checks, finding NULs with `memchr` as query-wire does. Its INFO borrows `&[u8]`
//!   strings into types of its own; its player list is the specs' `Players`, the value the
//!   derived decoder builds (names are `Text`), so the two compare how the bytes are read. Its
//!   one allocation is the players' `Vec`, sized once from the count byte.
//! - `a2s_players/handwritten_borrowed`: the same hand-written decoder building rows of its own
//!   with `&[u8]` names. Not a baseline: it shows what the `Text` row type costs.
//! - `a2s_crate`: `a2s::info::Info::from_cursor` and `a2s::players::Player::from_cursor` of the
//!   `a2s` crate (0.6.1), the parsers its socket client calls. They take the datagram after the
//!   `FF FF FF FF` header as an owned `Cursor<Vec<u8>>`, which is copied outside the timing
//!   (a user of the crate gets it from the crate's socket; the parser frees it, inside the
//!   timing), read strings a byte at a time into owned `String`s made with `from_utf8_lossy`,
//!   and check less: the count byte is trusted and trailing bytes are ignored.
//!
//! Every decode starts from the datagram's bytes and ends with the value dropped, inside the
//! timing. Before measuring, the three decoders are run on the replies and must agree on every
//! field (the crate's lossy names compared with the bytes made lossy), and the derived and
//! hand-written decoders must accept and refuse the same damaged copies, so the numbers compare
//! the same work.
//!
//! The replies are read at run time from the test vectors
//! (`captures/gameq/a2s/csgo_1_response.txt`), which may not be copied into the repository:
//! from `$QUERY_VECTORS`, or `../shared/vectors` beside the workspace, as the tests find them.
//! Without them the benchmark says so and measures nothing.
//!
//! ```text
//! cargo bench -p query-specs --bench a2s_codec -- --measurement-time 3
//! ```

use std::borrow::Cow;
use std::hint::black_box;
use std::io::Cursor;
use std::sync::OnceLock;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use query_specs::a2s::{Info, PlayerList, Players, Reply};
use query_wire::{Decode, Text};

mod capture;
mod handwritten_a2s;

/// The capture both replies come from, relative to the vectors folder.
const CAPTURE: &str = "captures/gameq/a2s/csgo_1_response.txt";
/// The app id the client passes before it knows the server's (not The Ship's).
const APP_ID: u16 = 0;

/// The two datagrams, or `None` when the vectors are absent.
struct Replies {
    info: Vec<u8>,
    players: Vec<u8>,
}

fn replies() -> Option<&'static Replies> {
    static REPLIES: OnceLock<Option<Replies>> = OnceLock::new();
    REPLIES.get_or_init(load).as_ref()
}

fn load() -> Option<Replies> {
    let (path, datagrams) = capture::datagrams(CAPTURE, "the A2S codec benchmark")?;
    let find = |kind: u8| {
        let found = datagrams
            .iter()
            .find(|d| d.starts_with(b"\xff\xff\xff\xff") && d.get(4) == Some(&kind))
            .unwrap_or_else(|| panic!("{} has no single-packet reply {kind:#x}", path.display()));
        found.to_vec()
    };
    Some(Replies {
        info: find(query_specs::a2s::KIND_INFO),
        players: find(query_specs::a2s::KIND_PLAYERS),
    })
}

/// The derived INFO out of its `Reply`, for the checks (the timing decodes the `Reply` alone).
fn decode_info(datagram: &[u8]) -> query_wire::Result<Info<'_>> {
    match Reply::from_bytes_with(datagram, APP_ID)? {
        Reply::Info(info) => Ok(info),
        other => panic!("not an INFO reply: {other:?}"),
    }
}

/// The derived player list out of its `Reply`, for the checks.
fn decode_players(datagram: &[u8]) -> query_wire::Result<Players<'_>> {
    match Reply::from_bytes_with(datagram, APP_ID)? {
        Reply::Players(PlayerList::Standard(players)) => Ok(players),
        other => panic!("not a PLAYER reply: {other:?}"),
    }
}

/// The crate's INFO parser on the datagram after its header, for the checks.
fn a2s_info(datagram: &[u8]) -> a2s::errors::Result<a2s::info::Info> {
    a2s::info::Info::from_cursor(Cursor::new(datagram[4..].to_vec()))
}

/// The crate's PLAYER parser on the datagram after its header, for the checks.
fn a2s_players(datagram: &[u8]) -> a2s::errors::Result<Vec<a2s::players::Player>> {
    a2s::players::Player::from_cursor(Cursor::new(datagram[4..].to_vec()), APP_ID)
}

fn bytes<'t>(text: &'t Text<'_>) -> &'t [u8] {
    text.as_bytes()
}

fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// Whether the derived and hand-written INFO hold the same fields.
fn same_info(derived: &Info<'_>, hand: &handwritten_a2s::Info<'_>) -> bool {
    let extra_agrees = match (&derived.extra, &hand.extra) {
        (None, None) => true,
        (Some(d), Some(h)) => {
            d.flags == h.flags
                && d.port == h.port
                && d.steam_id == h.steam_id
                && d.spectator.as_ref().map(|s| (s.port, bytes(&s.name))) == h.spectator
                && d.keywords.as_ref().map(bytes) == h.keywords
                && d.game_id == h.game_id
        }
        _ => false,
    };
    derived.protocol == hand.protocol
        && bytes(&derived.name) == hand.name
        && bytes(&derived.map) == hand.map
        && bytes(&derived.folder) == hand.folder
        && bytes(&derived.game) == hand.game
        && derived.app_id == hand.app_id
        && derived.players == hand.players
        && derived.max_players == hand.max_players
        && derived.bots == hand.bots
        && derived.server_type == hand.server_type
        && derived.environment == hand.environment
        && derived.visibility == hand.visibility
        && derived.vac == hand.vac
        && derived.the_ship.map(|s| [s.mode, s.witnesses, s.duration]) == hand.the_ship
        && bytes(&derived.version) == hand.version
        && extra_agrees
}

/// Whether the derived and hand-written (borrowed) player lists hold the same count and rows.
fn same_players(derived: &Players<'_>, hand: &handwritten_a2s::Players<'_>) -> bool {
    derived.count == hand.count
        && derived.players.len() == hand.players.len()
        && derived.players.iter().zip(&hand.players).all(|(d, h)| {
            d.index == h.index
                && bytes(&d.name) == h.name
                && d.score == h.score
                && d.duration.to_bits() == h.duration.to_bits()
        })
}

/// Whether the derived and hand-written lists of the specs' type are equal, bit for bit.
fn equal_players(derived: &Players<'_>, hand: &Players<'_>) -> bool {
    derived.count == hand.count
        && derived.players.len() == hand.players.len()
        && derived.players.iter().zip(&hand.players).all(|(d, h)| {
            d.index == h.index
                && d.name == h.name
                && d.score == h.score
                && d.duration.to_bits() == h.duration.to_bits()
        })
}

/// The crate's INFO against the hand-written one, its strings made lossy as the crate does.
fn crate_agrees_on_info(krate: &a2s::info::Info, hand: &handwritten_a2s::Info<'_>) {
    assert_eq!(krate.protocol, hand.protocol);
    assert_eq!(krate.name, lossy(hand.name));
    assert_eq!(krate.map, lossy(hand.map));
    assert_eq!(krate.folder, lossy(hand.folder));
    assert_eq!(krate.game, lossy(hand.game));
    assert_eq!(krate.app_id, hand.app_id);
    assert_eq!(krate.players, hand.players);
    assert_eq!(krate.max_players, hand.max_players);
    assert_eq!(krate.bots, hand.bots);
    assert_eq!(krate.server_type as u8, hand.server_type);
    assert_eq!(krate.server_os as u8, hand.environment);
    assert_eq!(krate.visibility, hand.visibility != 0);
    assert_eq!(krate.vac, hand.vac != 0);
    assert!(krate.the_ship.is_none() && hand.the_ship.is_none());
    assert_eq!(krate.version, lossy(hand.version));
    let extra = hand.extra.as_ref().expect("the reply has the EDF block");
    assert_eq!(krate.edf, extra.flags);
    let ext = &krate.extended_server_info;
    assert_eq!(ext.port, extra.port);
    assert_eq!(ext.steam_id, extra.steam_id);
    assert_eq!(
        ext.keywords.as_deref(),
        extra.keywords.map(lossy).as_deref()
    );
    assert_eq!(ext.game_id, extra.game_id);
    assert!(krate.source_tv.is_none() && extra.spectator.is_none());
}

/// The crate's players against the hand-written rows, names made lossy as the crate does.
fn crate_agrees_on_players(krate: &[a2s::players::Player], hand: &handwritten_a2s::Players<'_>) {
    assert_eq!(krate.len(), hand.players.len());
    for (k, h) in krate.iter().zip(&hand.players) {
        assert_eq!(k.index, h.index);
        assert_eq!(k.name, lossy(h.name));
        assert_eq!(k.score, h.score);
        assert_eq!(k.duration.to_bits(), h.duration.to_bits());
        assert!(k.the_ship.is_none());
    }
}

/// What a case must do: decode, be refused, or either as long as both decoders do the same.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    Decodes,
    Refused,
    Alike,
}

/// The datagram and damaged copies of it, with what each must do.
fn cases(
    datagram: &[u8],
    more: Vec<(&'static str, Vec<u8>, Expect)>,
) -> Vec<(&'static str, Vec<u8>, Expect)> {
    let mut all = vec![
        ("the captured reply", datagram.to_vec(), Expect::Decodes),
        (
            "one byte short",
            datagram[..datagram.len() - 1].to_vec(),
            Expect::Refused,
        ),
        (
            "a trailing byte",
            [datagram, &[7]].concat(),
            Expect::Refused,
        ),
        (
            "a split header",
            [&[0xfe], &datagram[1..]].concat(),
            Expect::Refused,
        ),
    ];
    all.extend(more);
    all
}

/// Runs both decoders on each case: each must do what the case expects, and values decoded
/// by both must agree.
fn agree<'a, D: std::fmt::Debug, H: std::fmt::Debug>(
    reply: &str,
    cases: &'a [(&'static str, Vec<u8>, Expect)],
    derived: impl Fn(&'a [u8]) -> Result<D, query_wire::Error>,
    hand: impl Fn(&'a [u8]) -> Result<H, handwritten_a2s::Malformed>,
    same: impl Fn(&D, &H) -> bool,
) {
    for (what, bytes, expect) in cases {
        let d = derived(bytes);
        let h = hand(bytes);
        assert_eq!(
            d.is_ok(),
            h.is_ok(),
            "{reply} on {what}: derived {d:?}, hand-written {h:?}"
        );
        match expect {
            Expect::Decodes => assert!(d.is_ok(), "{reply} on {what}: {d:?}"),
            Expect::Refused => assert!(d.is_err(), "{reply} on {what}: {d:?}"),
            Expect::Alike => {}
        }
        if let (Ok(d), Ok(h)) = (d, h) {
            assert!(
                same(&d, &h),
                "{reply} decoded alike on {what}: {d:?} vs {h:?}"
            );
        }
    }
}

/// Panics unless the decoders agree, so that they are timed doing the same work.
fn check_same_work(replies: &Replies) {
    let info = &replies.info;
    let hand = handwritten_a2s::decode_info(info).expect("the INFO reply decodes");
    assert!(hand.extra.is_some(), "the INFO reply has the EDF block");
    // After the header, the protocol byte and four strings with their NULs.
    let app_id_at = 6 + [hand.name, hand.map, hand.folder, hand.game]
        .iter()
        .map(|s| s.len() + 1)
        .sum::<usize>();
    // After the app id and seven one-byte fields (no Ship block), the version and its NUL.
    let version_nul = app_id_at + 2 + 7 + hand.version.len();
    let mut ship = info.clone();
    ship[app_id_at..app_id_at + 2].copy_from_slice(&query_specs::a2s::THE_SHIP.to_le_bytes());
    let mut no_nul = info[..=version_nul].to_vec();
    no_nul[version_nul] = b'x';
    let info_cases = cases(
        info,
        vec![
            (
                "no EDF block",
                info[..=version_nul].to_vec(),
                Expect::Decodes,
            ),
            ("The Ship's app id", ship, Expect::Alike),
            ("no NUL after the version", no_nul, Expect::Refused),
        ],
    );
    agree(
        "INFO",
        &info_cases,
        decode_info,
        handwritten_a2s::decode_info,
        same_info,
    );

    let players = &replies.players;
    let hand = handwritten_a2s::decode_players_borrowed(players).expect("the PLAYER reply decodes");
    // The first row again: index, name and NUL, score, duration.
    let row = players[6..6 + 1 + hand.players[0].name.len() + 1 + 8].to_vec();
    let mut miscounted = players.clone();
    miscounted[5] = 3;
    let player_cases = cases(
        players,
        vec![
            ("no rows", players[..6].to_vec(), Expect::Decodes),
            ("a count byte that disagrees", miscounted, Expect::Decodes),
            (
                "a row more than counted",
                [players, &row[..]].concat(),
                Expect::Decodes,
            ),
            (
                "half a row more",
                [players, &row[..row.len() / 2]].concat(),
                Expect::Refused,
            ),
        ],
    );
    agree(
        "PLAYER",
        &player_cases,
        decode_players,
        handwritten_a2s::decode_players,
        equal_players,
    );
    agree(
        "PLAYER",
        &player_cases,
        decode_players,
        handwritten_a2s::decode_players_borrowed,
        same_players,
    );

    let hand_info = handwritten_a2s::decode_info(info).unwrap();
    crate_agrees_on_info(
        &a2s_info(info).expect("the crate decodes the INFO reply"),
        &hand_info,
    );
    let hand_players = handwritten_a2s::decode_players_borrowed(players).unwrap();
    assert_eq!(hand_players.players.len(), 30, "the capture has 30 players");
    assert_eq!(hand_players.count, 30);
    crate_agrees_on_players(
        &a2s_players(players).expect("the crate decodes the PLAYER reply"),
        &hand_players,
    );
}

/// Decodes `input` with `decode` and drops the result, inside the timing. The result is
/// handed to `black_box` by reference where it was built, rather than returned to criterion,
/// which would copy it (a few hundred bytes for an INFO reply) into its own `black_box`.
#[inline(always)]
fn decode_and_drop<'a, T>(input: &'a [u8], decode: impl Fn(&'a [u8]) -> T) {
    let value = decode(black_box(input));
    black_box(&value);
}

fn a2s_codec(c: &mut Criterion) {
    let Some(replies) = replies() else {
        return;
    };
    check_same_work(replies);

    let info = &replies.info[..];
    let mut group = c.benchmark_group("a2s_info");
    group.throughput(Throughput::Bytes(info.len() as u64));
    group.bench_function("derived", |b| {
        b.iter(|| decode_and_drop(info, |d| Reply::from_bytes_with(d, APP_ID)))
    });
    group.bench_function("handwritten", |b| {
        b.iter(|| decode_and_drop(info, handwritten_a2s::decode_info))
    });
    group.bench_function("a2s_crate", |b| {
        b.iter_batched(
            || Cursor::new(info[4..].to_vec()),
            |cursor| {
                let value = a2s::info::Info::from_cursor(black_box(cursor));
                black_box(&value);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();

    let players = &replies.players[..];
    let mut group = c.benchmark_group("a2s_players");
    group.throughput(Throughput::Bytes(players.len() as u64));
    group.bench_function("derived", |b| {
        b.iter(|| decode_and_drop(players, |d| Reply::from_bytes_with(d, APP_ID)))
    });
    group.bench_function("handwritten", |b| {
        b.iter(|| decode_and_drop(players, handwritten_a2s::decode_players))
    });
    group.bench_function("handwritten_borrowed", |b| {
        b.iter(|| decode_and_drop(players, handwritten_a2s::decode_players_borrowed))
    });
    group.bench_function("a2s_crate", |b| {
        b.iter_batched(
            || Cursor::new(players[4..].to_vec()),
            |cursor| {
                let value = a2s::players::Player::from_cursor(black_box(cursor), APP_ID);
                black_box(&value);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, a2s_codec);
criterion_main!(benches);
