//! Unreal 2 decoders, the responder and the client on arbitrary bytes. The input is cut into
//! datagrams at `0xf7` bytes: each is decoded as a reply (details in either layout, rules,
//! players) and must re-encode to its own bytes; the responder answers it as a request within
//! its datagram cap with replies that decode; and the client session, replayed with every
//! datagram on a virtual clock, must end with a status or an error, listing only players it
//! read.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::engine::{ReplySink, Responder};
use query_net::engines::unreal2::{Unreal2Config, Unreal2Responder};
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{replay, Options, Protocol};
use query_specs::unreal2::{strip_colours, Reply, Request};
use query_wire::{Decode, Encode, TextEncoding};

fn encode(reply: &Reply) -> Vec<u8> {
    match reply {
        Reply::Info(info) => {
            let mut bytes = info.header.to_vec().expect("a header re-encodes");
            bytes.extend(info.info.to_vec_with(info.layout).expect("details re-encode"));
            bytes
        }
        Reply::Rules(part) => part.to_vec().expect("rules re-encode"),
        Reply::Players(part) => part.to_vec().expect("players re-encode"),
    }
}

fuzz_target!(|data: &[u8]| {
    let datagrams: Vec<Vec<u8>> = data.split(|&b| b == 0xf7).map(<[u8]>::to_vec).collect();
    let state = SharedState::new(ServerState {
        name: "\u{1b}\u{ff}\u{1}\u{1}Fuzz".into(),
        max_players: 8,
        players: vec![PlayerState {
            name: "Жук".into(),
            ..PlayerState::default()
        }],
        ..ServerState::default()
    });
    let mut responder = Unreal2Responder::new(state, Unreal2Config::default());
    let from = SocketAddr::from(([192, 0, 2, 1], 5000));
    let mut players = 0;
    for datagram in &datagrams {
        if let Ok(reply) = Reply::decode(datagram) {
            let bytes = encode(&reply);
            assert_eq!(&bytes, datagram, "a decoded datagram re-encodes to its bytes");
            match &reply {
                Reply::Info(info) => {
                    let _ = strip_colours(&info.info.name_text(TextEncoding::Latin1));
                }
                Reply::Players(part) => players += part.players.len(),
                Reply::Rules(_) => {}
            }
        }
        if let Ok(request) = Request::from_bytes(datagram) {
            assert_eq!(&request.to_vec().expect("re-encodes"), datagram);
        }
        let mut sink = ReplySink::new(1400);
        responder.handle(from, datagram, query_net::clock::Now::system(), &mut sink);
        for reply in sink.datagrams() {
            assert!(reply.len() <= 1400);
            Reply::decode(reply).expect("the responder's replies decode");
        }
    }
    let options = Options {
        timeout: Duration::from_millis(100),
        retries: 1,
        deadline: Duration::from_millis(500),
        ..Options::default()
    };
    let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Unreal2.default_port()));
    if let Ok(status) = replay::status_from_replies(Protocol::Unreal2, target, &datagrams, &options)
    {
        assert!(status.players.len() <= players);
    }
});
