//! Minecraft over streams on arbitrary bytes, split wherever the input says: the Java status
//! client (the VarInt frame decoder, the status JSON with hostile nesting, huge numbers and
//! bad text, the pong), the legacy client (the UTF-16 kick), the responder's side of a
//! connection, and the Bedrock pong's server string. Each must end with a result or close,
//! never panic or loop, and hold no more than its caps.
#![no_main]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use query_net::engines::minecraft::{status, JavaResponder, JavaSession, LegacyPing, LegacySession};
use query_net::state::SharedState;
use query_net::stream::{replay, StreamResponder};
use query_net::Options;
use query_specs::bedrock::{ServerId, UnconnectedPong};
use query_wire::Decode;

fuzz_target!(|data: &[u8]| {
    let target: SocketAddr = "127.0.0.1:25565".parse().unwrap();
    // The input's pieces are split at `0xf7` bytes, as the network might have split them.
    let pieces: Vec<&[u8]> = data.split(|&b| b == 0xf7).collect();
    let now = Instant::now();
    let options = Options::default();
    let _ = replay(JavaSession::new(target, "fuzz", &options), &pieces, now);
    let _ = replay(LegacySession::with_request(target, LegacyPing::V1_4), &pieces, now);

    let mut responder = JavaResponder::new(SharedState::default());
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
    responder.handle_timeout(now + Duration::from_secs(1));
    while let Some(bytes) = responder.poll_transmit() {
        written += bytes.len();
    }
    assert!(written < 64 * 1024, "a reply stays small");

    if let Ok(text) = std::str::from_utf8(data) {
        let _ = status::from_json(target, text, Duration::ZERO);
        let _ = ServerId::parse(text);
    }
    if let Ok(pong) = UnconnectedPong::from_bytes(data) {
        let _ = ServerId::parse(&pong.server_text());
    }
});
