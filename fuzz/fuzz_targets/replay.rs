//! The client sessions of every protocol fed with arbitrary reply datagrams, through
//! `replay::replay_spaced`: challenges, split SQP replies, A2S split parts, GameSpy parts,
//! OneQuery pages and SA:MP opcodes in any order and shape, delivered at once or dripped one
//! every few milliseconds, with timeouts, a short deadline and a small byte cap on the virtual
//! clock. A session must end with a status or an error by its deadline, never panic or loop.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::{replay, Options, Protocol};
use query_specs::sqp::ChunkSet;

fuzz_target!(|data: &[u8]| {
    // Four bytes of settings: the protocol and the SQP chunks, the gap between answers, the
    // deadline and the byte cap; then the replies, split at `0xff` bytes.
    let Some((&[pick, gap, deadline, cap], rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let protocol = Protocol::ALL[usize::from(pick) % Protocol::ALL.len()];
    let replies: Vec<Vec<u8>> = rest.split(|&b| b == 0xff).map(<[u8]>::to_vec).collect();
    // Gaps up to 315 ms, past the 100 ms timeout; deadlines from 10 ms to about 2.6 s.
    let gap = Duration::from_millis(u64::from(gap % 64) * 5);
    let deadline = Duration::from_millis(10 + u64::from(deadline) * 10);
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        sqp_chunks: ChunkSet::from_bits_truncate(pick >> 2),
        deadline,
        // From 16 bytes (most replies pass it) to 4 KiB; 255 keeps the default.
        max_reply_bytes: match cap {
            255 => Options::DEFAULT_MAX_REPLY_BYTES,
            cap => 16 + usize::from(cap) * 16,
        },
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], protocol.default_port()));
    let replayed = replay::replay_spaced(protocol, target, &replies, gap, &options);
    assert!(
        replayed.took <= deadline,
        "{protocol}: ended after {:?}, past the {deadline:?} deadline",
        replayed.took
    );
    if let Err(error) = &replayed.result {
        assert!(
            !error.to_string().contains("did not finish"),
            "{protocol}: {error}"
        );
    }
});
