//! Frostbite over a stream on arbitrary bytes, split wherever the input says: the client (the
//! header framing with its cap, packets, events, the answers' words read per game and the
//! player table by column name), the recorded-stream reader that tells answers apart by their
//! shape, and the responder's side of a connection. Each must end with a result or close,
//! never panic or loop, and answer a request with a bounded reply.
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use query_net::engines::frostbite::{FrostbiteResponder, FrostbiteSession};
use query_net::state::SharedState;
use query_net::stream::{replay, StreamResponder};

fuzz_target!(|data: &[u8]| {
    let target: SocketAddr = "127.0.0.1:47200".parse().unwrap();
    // The input's pieces are split at `0xf7` bytes, as the network might have split them.
    let pieces: Vec<&[u8]> = data.split(|&b| b == 0xf7).collect();
    let now = Instant::now();
    let _ = replay(FrostbiteSession::new(target), &pieces, now);
    let _ = replay(FrostbiteSession::replaying(target), &pieces, now);

    let mut responder = FrostbiteResponder::new(SharedState::default());
    let mut written = 0usize;
    for piece in &pieces {
        responder.handle_bytes(piece, now);
        while let Some(bytes) = responder.poll_transmit() {
            written += bytes.len();
        }
        if responder.is_closed() {
            break;
        }
    }
    // An empty state's answers are under 512 bytes each, and a request at least 12 bytes.
    assert!(written <= 512 * (1 + data.len() / 12), "replies stay bounded");
});
