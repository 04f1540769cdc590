//! Source and Minecraft RCON on arbitrary bytes, split wherever the input says: the packet
//! decoder, the client session (authentication, then a command whose answer is joined) of
//! both flavours, and the server's connection state (authentication, lockout, pipelined
//! commands, end markers). Each must end with a result or close, never panic or loop, and
//! hold no more than its caps.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use query_net::rcon::server::{AuthGate, Connection, LockoutPolicy, ServerConfig};
use query_net::rcon::{Flavour, Reply, Session};
use query_specs::rcon::Frame;
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(frame) = Frame::from_bytes(data) {
        // What decodes encodes back to the same bytes, the size word computed.
        assert_eq!(frame.to_vec().unwrap(), data);
    }
    // The input's pieces are split at `0xf7` bytes, as the network might have split them.
    let pieces: Vec<&[u8]> = data.split(|&b| b == 0xf7).collect();
    let now = Instant::now();

    const MAX_ANSWER: usize = 64 * 1024;
    for flavour in Flavour::ALL {
        let mut session = Session::new(flavour, MAX_ANSWER);
        session.authenticate(b"fuzz").unwrap();
        let _ = session.poll_transmit();
        for piece in &pieces {
            session.handle_bytes(piece);
            while let Some(reply) = session.poll_reply() {
                match reply {
                    Ok(Reply::Authenticated) => {
                        // Refused only when bytes after the auth response broke the session.
                        if session.command(b"status").is_err() {
                            assert!(session.is_failed());
                        }
                    }
                    Ok(Reply::Output(output)) => assert!(output.len() <= MAX_ANSWER),
                    Err(_) => assert!(session.is_failed()),
                }
            }
            let _ = session.poll_transmit();
        }
        session.handle_eof();
        while session.poll_reply().is_some() {}
    }

    let policy = LockoutPolicy {
        max_failures: 3,
        ..LockoutPolicy::default()
    };
    let gate = Arc::new(AuthGate::new("fuzz", policy));
    let config = ServerConfig::default();
    let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let mut connection = Connection::new(gate, peer, now, &config);
    let mut written = 0usize;
    for piece in &pieces {
        connection.handle_bytes(piece, now);
        while let Some(command) = connection.poll_command() {
            assert!(connection.is_authenticated());
            connection.answer(&command.text, now);
        }
        while let Some(bytes) = connection.poll_transmit() {
            written += bytes.len();
        }
        if connection.is_closed() {
            break;
        }
    }
    connection.handle_timeout(now + Duration::from_secs(3600));
    assert!(connection.is_authenticated() || connection.is_closed());
    // Each packet in is at most one answer of its own size (plus framing) or two small ones.
    assert!(written <= 4 * data.len() + 64, "{written} bytes for {} in", data.len());
});
