//! BattlEye RCon sessions on arbitrary datagrams: the client session (login, a command whose
//! answer may come in parts, server messages, resends, keep-alives) and the server (logins,
//! commands, acknowledgements, resends, cut-offs). The input is split at `0xf7` bytes into
//! datagrams; the first byte of each picks whether its checksum is fixed up (to reach the
//! payloads), whether it comes from a second address, and whether time moves on first. Each
//! side must never panic or loop, and hold no more than its caps.
#![no_main]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use query_net::rcon::battleye::server::{BattlEyeConfig, Server};
use query_net::rcon::battleye::{Event, Session};
use query_net::rcon::server::AuthGate;

const MAX_ANSWER: usize = 16 * 1024;

fuzz_target!(|data: &[u8]| {
    let t0 = Instant::now();
    let mut now = t0;
    let mut session = Session::new(Duration::from_millis(500), 3, MAX_ANSWER);
    session.login(b"fuzz").unwrap();
    let config = BattlEyeConfig {
        max_admins: 2,
        ..BattlEyeConfig::default()
    };
    let mut server = Server::new(Arc::new(AuthGate::new("fuzz", config.lockout)), config);
    let peers: [SocketAddr; 2] = [([127, 0, 0, 1], 1).into(), ([127, 0, 0, 2], 2).into()];
    let mut commands = 0u32;

    for piece in data.split(|&b| b == 0xf7) {
        let Some((&control, datagram)) = piece.split_first() else {
            continue;
        };
        let mut datagram = datagram.to_vec();
        if control & 1 == 1 && datagram.len() >= 6 {
            let crc = crc32fast::hash(&datagram[6..]);
            datagram[2..6].copy_from_slice(&crc.to_le_bytes());
        }
        if control & 2 == 2 {
            now += Duration::from_millis(u64::from(control >> 2) * 100);
            session.handle_timeout(now);
            server.handle_timeout(now);
        }
        let from = peers[usize::from(control >> 7)];

        session.handle_datagram(&datagram, now);
        while session.poll_transmit(now).is_some() {}
        while let Some(event) = session.poll_event() {
            match event {
                Ok(Event::LoggedIn) => assert!(session.is_ready()),
                Ok(Event::Output(output)) => assert!(output.len() <= MAX_ANSWER),
                Ok(Event::Message(message)) => assert!(message.len() < datagram.len()),
                Err(_) => {}
            }
        }
        if session.is_ready() && commands < 8 {
            session.command(b"players").unwrap();
            commands += 1;
        }

        server.handle_datagram(from, &datagram, now);
        while let Some(command) = server.poll_command() {
            server.answer(&command, &"x".repeat(usize::from(command.sequence) * 100));
        }
        if control & 0x40 == 0x40 {
            server.broadcast("fuzz", now);
        }
        let mut sent = 0;
        while server.poll_transmit().is_some() {
            sent += 1;
        }
        // Answers of at most 19 parts, and resends of at most 256 messages per admin.
        assert!(sent <= 2 * (256 + 19) + 2, "{sent} datagrams for one");
        assert!(server.admins() <= 2);
    }
});
