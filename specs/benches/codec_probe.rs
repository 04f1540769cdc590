//! Fixed-count loops over the codecs of `sqp_full_codec`, `samp_codec`, `a2s_codec` and
//! `gamespy1_codec`, on the same packets, for counting instructions rather than timing (as
//! `sqp_probe` does for `sqp_codec`): criterion's sampling is noisy on a shared machine, an
//! instruction count is not, so it can tell two builds apart by a percent.
//!
//! Each codec runs in its own `#[inline(never)]` function that does what the benchmark times,
//! the value built and dropped inside it: `<packet>_decode_derived`, `<packet>_decode_handwritten`
//! (the benchmark's hand-written decoder) and `<packet>_encode_derived` (the derived encoder
//! writing the decoded value back into a buffer, which the benchmarks do not time); the A2S
//! INFO and PLAYER replies share `a2s_decode_derived` and `a2s_encode_derived`. One test per
//! packet (`sqp_full`, `samp`, `a2s_info`, `a2s_players`, `gamespy1`) runs each function
//! exactly `PROBE_ITERS` times (1000 when unset; its checks call the codecs directly), so the
//! count divided by `PROBE_ITERS` is the cost of one call:
//!
//! ```text
//! cargo bench -p query-specs --bench codec_probe --no-run
//! PROBE_ITERS=1000 valgrind --tool=callgrind --toggle-collect='codec_probe::samp_decode_derived' \
//!     target/release/deps/codec_probe-<hash> --exact samp
//! ```
//!
//! `scripts/codec-before-after.sh` does this for every function and compares two commits.
//! Before counting, each test checks that the derived and hand-written decoders build equal
//! values and that the derived encoder writes the packet back byte for byte.
//!
//! The SA:MP, A2S and GameSpy replies are read from the test vectors as their benchmarks read
//! them (`$QUERY_VECTORS`, or `../shared/vectors` beside the workspace); without them those
//! tests say so and count nothing.

use std::hint::black_box;

use query_specs::{a2s, gamespy1, samp, sqp};
use query_wire::kv::{FromKeyValues, ToKeyValues};
use query_wire::{Decode, Encode};

mod capture;
// Its rows with borrowed names are not counted here.
#[allow(dead_code)]
mod handwritten_a2s;
mod handwritten_gamespy1;
mod handwritten_samp;
mod handwritten_sqp_full;
mod sqp_full_fixture;

/// The app id the A2S client passes before it knows the server's.
const APP_ID: u16 = 0;
/// Big enough for every packet here; the encoders write into its front.
const OUT_LEN: usize = 4096;

fn iterations() -> usize {
    std::env::var("PROBE_ITERS").map_or(1000, |n| n.parse().expect("PROBE_ITERS is a number"))
}

/// The datagrams of a capture in the test vectors, or `None` (said on stderr) without them.
fn read_capture(name: &str) -> Option<Vec<Vec<u8>>> {
    capture::datagrams(name, "counting this codec").map(|(_, datagrams)| datagrams)
}

/// Runs `f` `iters` times on inputs the optimiser cannot see through.
fn repeat<T: ?Sized, R>(iters: usize, input: &T, mut f: impl FnMut(&T) -> R) {
    for _ in 0..iters {
        black_box(f(black_box(input)));
    }
}

#[inline(never)]
fn sqp_full_decode_derived(packet: &[u8]) -> bool {
    let value = sqp::Response::from_bytes_with(packet, sqp::ChunkSet::all());
    black_box(&value).is_ok()
}

#[inline(never)]
fn sqp_full_decode_handwritten(packet: &[u8]) -> bool {
    let value = handwritten_sqp_full::decode_response(packet);
    black_box(&value).is_some()
}

#[inline(never)]
fn sqp_full_encode_derived(value: &sqp::Response<'_>, out: &mut [u8]) -> Option<usize> {
    value.encode_into_with(out, sqp::ChunkSet::all()).ok()
}

#[test]
fn sqp_full() {
    let value = sqp_full_fixture::response();
    let packet = value.to_vec_with(sqp::ChunkSet::all()).unwrap();
    assert_eq!(
        sqp::Response::from_bytes_with(&packet, sqp::ChunkSet::all()).unwrap(),
        value
    );
    assert_eq!(
        handwritten_sqp_full::decode_response(&packet).as_ref(),
        Some(&value)
    );
    let mut out = [0u8; OUT_LEN];
    let n = value
        .encode_into_with(&mut out, sqp::ChunkSet::all())
        .unwrap();
    assert_eq!(out[..n], packet[..]);

    let iters = iterations();
    repeat(iters, &packet[..], sqp_full_decode_derived);
    repeat(iters, &packet[..], sqp_full_decode_handwritten);
    repeat(iters, &value, |v| sqp_full_encode_derived(v, &mut out));
}

#[inline(never)]
fn samp_decode_derived(datagram: &[u8]) -> bool {
    let value = samp::Reply::from_bytes(datagram);
    black_box(&value).is_ok()
}

#[inline(never)]
fn samp_decode_handwritten(datagram: &[u8]) -> bool {
    let value = handwritten_samp::decode_players(datagram);
    black_box(&value).is_some()
}

#[inline(never)]
fn samp_encode_derived(value: &samp::Reply<'_>, out: &mut [u8]) -> Option<usize> {
    value.encode_into(out).ok()
}

#[test]
fn samp() {
    let Some(datagrams) = read_capture("captures/samp_1_response.txt") else {
        return;
    };
    let reply = datagrams
        .into_iter()
        .find(|d| d.get(10) == Some(&samp::OP_PLAYERS))
        .expect("the capture has a `d` reply");
    let value = samp::Reply::from_bytes(&reply).unwrap();
    assert_eq!(
        handwritten_samp::decode_players(&reply).as_ref(),
        Some(&value)
    );
    let mut out = [0u8; OUT_LEN];
    let n = value.encode_into(&mut out).unwrap();
    assert_eq!(out[..n], reply[..]);

    let iters = iterations();
    repeat(iters, &reply[..], samp_decode_derived);
    repeat(iters, &reply[..], samp_decode_handwritten);
    repeat(iters, &value, |v| samp_encode_derived(v, &mut out));
}

/// The CS:GO capture's single-packet reply of `kind`.
fn a2s_reply(kind: u8) -> Option<Vec<u8>> {
    let datagrams = read_capture("captures/gameq/a2s/csgo_1_response.txt")?;
    let found = datagrams
        .into_iter()
        .find(|d| d.starts_with(b"\xff\xff\xff\xff") && d.get(4) == Some(&kind))
        .expect("the capture has the reply");
    Some(found)
}

/// Checks the derived decoder against `hand` and the derived encoder on `datagram`.
fn a2s_check(datagram: &[u8], hand: impl FnOnce(&a2s::Reply<'_>) -> bool) -> a2s::Reply<'_> {
    let value = a2s::Reply::from_bytes_with(datagram, APP_ID).unwrap();
    assert!(hand(&value), "the hand-written decoder agrees");
    let mut out = [0u8; OUT_LEN];
    let n = value.encode_into_with(&mut out, APP_ID).unwrap();
    assert_eq!(
        out[..n],
        datagram[..],
        "the derived encoder writes the reply back"
    );
    value
}

/// The INFO and PLAYER replies' derived decode: one function, as the client has one (two of the
/// same body would be folded into one symbol by the linker).
#[inline(never)]
fn a2s_decode_derived(datagram: &[u8]) -> bool {
    let value = a2s::Reply::from_bytes_with(datagram, APP_ID);
    black_box(&value).is_ok()
}

/// The INFO and PLAYER replies' derived encode.
#[inline(never)]
fn a2s_encode_derived(value: &a2s::Reply<'_>, out: &mut [u8]) -> Option<usize> {
    value.encode_into_with(out, APP_ID).ok()
}

#[inline(never)]
fn a2s_info_decode_handwritten(datagram: &[u8]) -> bool {
    let value = handwritten_a2s::decode_info(datagram);
    black_box(&value).is_ok()
}

#[test]
fn a2s_info() {
    let Some(info) = a2s_reply(a2s::KIND_INFO) else {
        return;
    };
    let value = a2s_check(&info, |derived| {
        let hand = handwritten_a2s::decode_info(&info).unwrap();
        matches!(derived, a2s::Reply::Info(d) if d.name.as_bytes() == hand.name
            && d.version.as_bytes() == hand.version
            && d.extra.as_ref().map(|e| e.game_id) == hand.extra.as_ref().map(|e| e.game_id))
    });

    let iters = iterations();
    let mut out = [0u8; OUT_LEN];
    repeat(iters, &info[..], a2s_decode_derived);
    repeat(iters, &info[..], a2s_info_decode_handwritten);
    repeat(iters, &value, |v| a2s_encode_derived(v, &mut out));
}

#[inline(never)]
fn a2s_players_decode_handwritten(datagram: &[u8]) -> bool {
    let value = handwritten_a2s::decode_players(datagram);
    black_box(&value).is_ok()
}

#[test]
fn a2s_players() {
    let Some(players) = a2s_reply(a2s::KIND_PLAYERS) else {
        return;
    };
    let value = a2s_check(&players, |derived| {
        let hand = handwritten_a2s::decode_players(&players).unwrap();
        matches!(derived, a2s::Reply::Players(a2s::PlayerList::Standard(d)) if *d == hand)
    });

    let iters = iterations();
    let mut out = [0u8; OUT_LEN];
    repeat(iters, &players[..], a2s_decode_derived);
    repeat(iters, &players[..], a2s_players_decode_handwritten);
    repeat(iters, &value, |v| a2s_encode_derived(v, &mut out));
}

/// The three parts pushed in order, then the reply decoded, as `gamespy1_codec` times it.
#[inline(never)]
fn gamespy1_decode_derived(parts: &[Vec<u8>]) -> bool {
    let mut reassembly = gamespy1::Reassembly::new();
    for part in parts {
        if reassembly.push(black_box(part)).is_err() {
            return false;
        }
    }
    let value = reassembly.reply();
    black_box(&value).is_ok()
}

#[inline(never)]
fn gamespy1_decode_handwritten(parts: &[Vec<u8>]) -> bool {
    let mut held = handwritten_gamespy1::Parts::new();
    for part in parts {
        if held.push(black_box(part)).is_none() {
            return false;
        }
    }
    let value = held.reply();
    black_box(&value).is_some()
}

/// The decoded reply's pairs written back (the payload a responder splits into datagrams).
#[inline(never)]
fn gamespy1_encode_derived(value: &gamespy1::Reply<'_>, out: &mut [u8]) -> Option<usize> {
    value.encode_into(out).ok()
}

#[test]
fn gamespy1() {
    let Some(parts) = read_capture("captures/ut_1_response.txt") else {
        return;
    };
    assert_eq!(parts.len(), 3, "the UT99 reply has 3 parts");
    let mut reassembly = gamespy1::Reassembly::new();
    for part in &parts {
        reassembly.push(part).unwrap();
    }
    let assembled = reassembly.reply().unwrap();
    let mut held = handwritten_gamespy1::Parts::new();
    for part in &parts {
        held.push(part).unwrap();
    }
    assert_eq!(held.reply().as_ref(), Some(&assembled));
    let value = &assembled.reply;
    let mut out = [0u8; OUT_LEN];
    let n = value.encode_into(&mut out).unwrap();
    assert_eq!(
        gamespy1::Reply::from_bytes(&out[..n]).as_ref(),
        Ok(value),
        "the encoded pairs decode to the same reply"
    );

    let iters = iterations();
    repeat(iters, &parts[..], gamespy1_decode_derived);
    repeat(iters, &parts[..], gamespy1_decode_handwritten);
    repeat(iters, value, |v| gamespy1_encode_derived(v, &mut out));
}
