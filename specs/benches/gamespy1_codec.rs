//! The cost of the derived GameSpy v1 decoder against a hand-written one, on a real UT99
//! `\status\` reply of 3 datagrams (975, 958 and 297 bytes; 11 players with 8 keys each, Latin-1
//! bytes in a name, pings with a leading space, `gamever` twice).
//!
//! One criterion group, `gamespy1_ut99`, holds two benchmarks, each timing what a client does
//! with the three datagrams, from their bytes to the decoded value dropped:
//!
//! - `derived`: `query_specs::gamespy1::Reassembly::push` of each part (copying it, as the
//!   receive buffer is reused), then `Reassembly::reply`, the `#[derive(KeyValues)]` decode of
//!   the joined pairs into `Assembled`.
//! - `handwritten`: `handwritten_gamespy1::Parts`, the same two steps written by hand for speed
//!   (one buffer for the parts, the pairs walked in place twice), building the same `Assembled`.
//!
//! Before measuring, both run on the reply and on altered copies (parts out of order, twice,
//! missing, from another query; a malformed part, trailer or value) and must accept and refuse
//! the same ones, with equal values.
//!
//! The reply is read at run time from the test vectors (`captures/ut_1_response.txt`), which may
//! not be copied into the repository: from `$QUERY_VECTORS`, or `../shared/vectors` beside the
//! workspace. Without them the benchmark says so and measures nothing.
//!
//! ```text
//! cargo bench -p query-specs --bench gamespy1_codec -- --measurement-time 5
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use query_specs::gamespy1::{Assembled, Reassembly};

mod capture;
mod handwritten_gamespy1;

/// The capture the reply comes from, relative to the vectors folder.
const CAPTURE: &str = "captures/ut_1_response.txt";

/// The reply's datagrams, or `None` when the vectors are absent.
fn load() -> Option<Vec<Vec<u8>>> {
    let (path, datagrams) = capture::datagrams(CAPTURE, "the GameSpy v1 codec benchmark")?;
    assert_eq!(datagrams.len(), 3, "{} holds 3 datagrams", path.display());
    Some(datagrams)
}

/// The derived decoder: the parts pushed in the order given, then the reply decoded; `f` sees
/// the result while the parts are held. A part refused by `push` fails the whole reply.
#[inline(always)]
fn derived<R>(parts: &[Vec<u8>], f: impl FnOnce(query_wire::Result<Assembled<'_>>) -> R) -> R {
    let mut reassembly = Reassembly::new();
    for part in parts {
        if let Err(e) = reassembly.push(black_box(part)) {
            return f(Err(e));
        }
    }
    f(reassembly.reply())
}

/// The hand-written decoder, the same steps.
#[inline(always)]
fn handwritten<R>(parts: &[Vec<u8>], f: impl FnOnce(Option<Assembled<'_>>) -> R) -> R {
    let mut held = handwritten_gamespy1::Parts::new();
    for part in parts {
        if held.push(black_box(part)).is_none() {
            return f(None);
        }
    }
    f(held.reply())
}

/// Replaces the first `from` in `part` with `to`.
fn replace(part: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = part
        .windows(from.len())
        .position(|w| w == from)
        .unwrap_or_else(|| panic!("{:?} is in the part", String::from_utf8_lossy(from)));
    [&part[..at], to, &part[at + from.len()..]].concat()
}

/// The reply and altered copies, each with whether it must decode.
fn cases(parts: &[Vec<u8>]) -> Vec<(&'static str, Vec<Vec<u8>>, bool)> {
    let [one, two, three] = [&parts[0], &parts[1], &parts[2]];
    let with = |i: usize, part: Vec<u8>| {
        let mut all = parts.to_vec();
        all[i] = part;
        all
    };
    vec![
        ("the captured reply", parts.to_vec(), true),
        (
            "parts out of order",
            vec![three.clone(), one.clone(), two.clone()],
            true,
        ),
        (
            "a part twice",
            vec![one.clone(), two.clone(), one.clone(), three.clone()],
            true,
        ),
        ("part 2 missing", vec![one.clone(), three.clone()], true),
        (
            "a part of another query",
            with(1, replace(two, b"\\queryid\\20.2", b"\\queryid\\21.2")),
            true,
        ),
        (
            "a second player key of one player",
            with(1, replace(two, b"\\frags_2\\", b"\\score_2\\")),
            true,
        ),
        (
            "a team key",
            with(2, [&three[..], b"\\teamscore_0\\12"].concat()),
            true,
        ),
        (
            "a key of no player",
            with(2, [&three[..], b"\\mesh_40\\x"].concat()),
            true,
        ),
        (
            "a key without a value",
            with(2, [&three[..], b"\\odd"].concat()),
            false,
        ),
        ("no leading backslash", with(0, one[1..].to_vec()), false),
        (
            "part 65",
            with(2, replace(three, b"\\queryid\\20.3", b"\\queryid\\20.65")),
            false,
        ),
        (
            "a malformed query id",
            with(1, replace(two, b"\\queryid\\20.2", b"\\queryid\\20.x")),
            false,
        ),
        (
            "a ping that is no number",
            with(0, replace(one, b"\\ping_0\\ 152", b"\\ping_0\\ 15x")),
            false,
        ),
        (
            "frags out of range",
            with(
                0,
                replace(one, b"\\frags_0\\1\\", b"\\frags_0\\3000000000\\"),
            ),
            false,
        ),
        (
            "a password that is no flag",
            with(0, replace(one, b"\\password\\False", b"\\password\\Maybe")),
            false,
        ),
        (
            "a bare first part",
            vec![b"\\queryid\\20.1".to_vec(), two.clone(), three.clone()],
            false,
        ),
    ]
}

/// Panics unless both decoders accept and refuse the same cases with equal values.
fn check_same_work(parts: &[Vec<u8>]) {
    for (what, case, valid) in cases(parts) {
        derived(&case, |d| {
            handwritten(&case, |h| {
                assert_eq!(d.is_ok(), valid, "derived on {what}: {d:?}");
                assert_eq!(h.is_some(), valid, "hand-written on {what}: {h:?}");
                if let (Ok(d), Some(h)) = (d, h) {
                    assert_eq!(d, h, "decoded alike on {what}");
                }
            })
        });
    }
    derived(parts, |d| {
        let d = d.expect("the capture decodes");
        assert!(d.complete, "the capture is complete");
        assert_eq!(d.reply.players.len(), 11, "the capture has 11 players");
        assert!(
            d.reply.players.iter().all(|p| p.extra.len() == 4),
            "each player has 4 other keys"
        );
    });
}

/// One timed derived decode, not inlined so that a profiler can count its instructions
/// (`valgrind --tool=callgrind --toggle-collect='gamespy1_codec::run_derived'` on the bench
/// binary with `--profile-time 2`).
#[inline(never)]
fn run_derived(parts: &[Vec<u8>]) -> bool {
    derived(parts, |value| black_box(&value).is_ok())
}

/// One timed hand-written decode, as [`run_derived`].
#[inline(never)]
fn run_handwritten(parts: &[Vec<u8>]) -> bool {
    handwritten(parts, |value| black_box(&value).is_some())
}

fn gamespy1_codec(c: &mut Criterion) {
    let Some(parts) = load() else {
        return;
    };
    check_same_work(&parts);
    let mut group = c.benchmark_group("gamespy1_ut99");
    group.throughput(Throughput::Bytes(
        parts.iter().map(|p| p.len() as u64).sum(),
    ));
    group.bench_function("derived", |b| b.iter(|| run_derived(&parts)));
    group.bench_function("handwritten", |b| b.iter(|| run_handwritten(&parts)));
    group.finish();
}

criterion_group!(benches, gamespy1_codec);
criterion_main!(benches);
