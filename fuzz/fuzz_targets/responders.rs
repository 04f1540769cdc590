//! The all-protocols responder's entry point on arbitrary datagrams from a few sources: it
//! must never panic, and every reply it sends fits a UDP datagram. The first input byte picks
//! the source address, so challenge state per source gets exercised too.
#![no_main]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::OnceLock;
use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use query_net::clock::Now;
use query_net::engine::{ReplySink, Responder};
use query_net::engines::all::AllProtocols;
use query_net::state::{PlayerState, ServerState, SharedState};

fn responder() -> &'static Mutex<(AllProtocols, ReplySink)> {
    static RESPONDER: OnceLock<Mutex<(AllProtocols, ReplySink)>> = OnceLock::new();
    RESPONDER.get_or_init(|| {
        let state = ServerState {
            name: "Fuzz Server ñ".into(),
            map: "de_dust".into(),
            max_players: 32,
            players: (0..40)
                .map(|i| PlayerState {
                    name: format!("Jürgen {i}"),
                    score: i,
                    ..PlayerState::default()
                })
                .collect(),
            ..ServerState::default()
        };
        Mutex::new((AllProtocols::new(SharedState::new(state)), ReplySink::default()))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&source, datagram)) = data.split_first() else {
        return;
    };
    let from = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, source % 4)), 40_000);
    let mut guard = responder().lock().unwrap();
    let (responder, sink) = &mut *guard;
    sink.clear();
    let _ = responder.handle(from, datagram, Now::system(), sink);
    for reply in sink.datagrams() {
        assert!(reply.len() <= ReplySink::MAX_UDP_PAYLOAD);
    }
});
