//! A fixed-count loop over the SQP decoders and encoders, for counting instructions rather than
//! timing: criterion's sampling is noisy on a shared machine, an instruction count is not.
//!
//! Each codec runs in its own `#[inline(never)]` function, so a profiler can attribute the
//! instructions to it:
//!
//! ```text
//! cargo bench -p query-specs --bench sqp_probe --no-run
//! PROBE_ITERS=10000 valgrind --tool=callgrind --toggle-collect='sqp_probe::decode_derived' \
//!     target/release/deps/sqp_probe-<hash> --exact probe
//! ```
//!
//! The count divided by `PROBE_ITERS` (1000 when unset) is the cost of one decode. The probe
//! is also a test: every iteration's result must equal the hand-written decoder's.

use std::hint::black_box;

use query_specs::sqp::{ChunkSet, Response};
use query_wire::{Decode, Encode};

mod handwritten;

const REQUESTED: ChunkSet = ChunkSet::SERVER_INFO;

/// The Unity document's 102-byte QueryResponse, as in `fixtures/sqp/sqp_query_response.hex`.
fn fixture() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/sqp/sqp_query_response.hex"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    text.split_whitespace()
        .map(|pair| u8::from_str_radix(pair, 16).unwrap_or_else(|_| panic!("bad hex {pair:?}")))
        .collect()
}

#[inline(never)]
fn decode_derived(packet: &[u8]) -> query_wire::Result<Response<'_>> {
    Response::from_bytes_with(packet, REQUESTED)
}

#[inline(never)]
fn decode_handwritten(packet: &[u8]) -> Option<Response<'_>> {
    handwritten::decode_response(packet)
}

#[inline(never)]
fn encode_derived(value: &Response<'_>, out: &mut [u8]) -> query_wire::Result<usize> {
    value.encode_into_with(out, REQUESTED)
}

#[inline(never)]
fn encode_handwritten(
    value: &Response<'_>,
    out: &mut [u8],
) -> Result<usize, handwritten::Malformed> {
    handwritten::encode_response(value, out)
}

/// The fastest of 200 batches of `iters` calls, in ns per call.
fn fastest_ns(iters: usize, mut f: impl FnMut()) -> f64 {
    (0..200)
        .map(|_| {
            let start = std::time::Instant::now();
            for _ in 0..iters {
                f();
            }
            start.elapsed().as_secs_f64() * 1e9 / iters as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn iterations() -> usize {
    std::env::var("PROBE_ITERS").map_or(1000, |n| n.parse().expect("PROBE_ITERS is a number"))
}

#[test]
fn probe() {
    let packet = fixture();
    let iters = iterations();
    let expected = decode_handwritten(&packet).expect("the document's packet decodes");
    for _ in 0..iters {
        let derived = decode_derived(black_box(&packet));
        assert_eq!(derived.as_ref().ok(), Some(&expected));
        black_box(derived.ok());
    }
    for _ in 0..iters {
        black_box(decode_handwritten(black_box(&packet)));
    }
    let mut out = [0u8; 512];
    for _ in 0..iters {
        let n = encode_derived(black_box(&expected), black_box(&mut out));
        assert_eq!(n.as_ref().ok(), Some(&packet.len()));
    }
    for _ in 0..iters {
        black_box(encode_handwritten(black_box(&expected), black_box(&mut out)).ok());
    }
    assert_eq!(&out[..packet.len()], &packet[..]);
}

/// With `PROBE_TIMES` set, prints the fastest batch of each codec (a quick look, not a
/// substitute for the criterion benchmark).
#[test]
fn times() {
    if std::env::var_os("PROBE_TIMES").is_none() {
        return;
    }
    let packet = fixture();
    let value = decode_handwritten(&packet).expect("the document's packet decodes");
    let mut out = [0u8; 512];
    let iters = iterations();
    let decode = [
        fastest_ns(iters, || {
            black_box(decode_derived(black_box(&packet)).ok());
        }),
        fastest_ns(iters, || {
            black_box(decode_handwritten(black_box(&packet)));
        }),
    ];
    let encode = [
        fastest_ns(iters, || {
            black_box(encode_derived(black_box(&value), black_box(&mut out)).ok());
        }),
        fastest_ns(iters, || {
            black_box(encode_handwritten(black_box(&value), black_box(&mut out)).ok());
        }),
    ];
    for (what, [derived, handwritten]) in [("decode", decode), ("encode", encode)] {
        println!(
            "{what}: derived {derived:.1} ns, hand-written {handwritten:.1} ns, ratio {:.2}",
            derived / handwritten
        );
    }
}
