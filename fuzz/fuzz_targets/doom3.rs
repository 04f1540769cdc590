//! Doom 3 engine decoders and the client on arbitrary bytes: the input is read as a `getInfo`
//! request and as a reply (`infoResponse` in Doom 3's or ETQW's form, or ETQW's
//! `infoExResponse`, by its header and what follows the challenge). What
//! decodes re-encodes to bytes that decode and re-encode to the same bytes; the client
//! session, replayed with the datagram (its challenge written in), ends with a status or an
//! error, never a panic, and lists every player the reply holds; the responder answers a
//! request in every layout within its datagram cap, with a reply the specs decode.
#![no_main]

use std::net::SocketAddr;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use query_net::engines::doom3::{Doom3Config, Doom3Responder, Layout};
use query_net::service::Service;
use query_net::state::{PlayerState, ServerState, SharedState};
use query_net::{replay, Options, Protocol};
use query_specs::doom3::{GetInfo, Reply};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    if let Ok(request) = GetInfo::from_bytes(data) {
        let bytes = request.to_vec().expect("a decoded request re-encodes");
        assert_eq!(bytes, data);
    }
    if let Ok(reply) = Reply::decode(data) {
        let encode = |reply: &Reply| match reply {
            Reply::Info(r) => r.to_vec(),
            Reply::EtqwInfo(r) => r.to_vec(),
            Reply::InfoEx(r) => r.to_vec(),
        };
        let bytes = encode(&reply).expect("a decoded reply re-encodes");
        // Compared as bytes: an ETQW experience value may be NaN, never equal to itself.
        let again = Reply::decode(&bytes).expect("and decodes");
        assert_eq!(encode(&again).expect("and re-encodes"), bytes);
        let options = Options {
            timeout: Duration::from_millis(100),
            retries: 1,
            deadline: Duration::from_millis(500),
            ..Options::default()
        };
        let target = SocketAddr::from(([127, 0, 0, 1], Protocol::Doom3.default_port()));
        let status =
            replay::status_from_replies(Protocol::Doom3, target, &[data.to_vec()], &options)
                .expect("a reply that decodes is an answer");
        assert_eq!(status.players.len(), reply.players().len());
    }
    // The responder: the input as the request and as the names of the state it serves.
    let name = String::from_utf8_lossy(data).into_owned();
    let state = SharedState::new(ServerState {
        name: name.clone(),
        players: vec![PlayerState { name, ..PlayerState::default() }; 3],
        ..ServerState::default()
    });
    for layout in [Layout::Doom3, Layout::Quake4, Layout::Etqw] {
        let responder = Doom3Responder::new(state.clone(), Doom3Config::of(layout));
        let mut service = Service::new(responder).rate_limit(None);
        let from = SocketAddr::from(([192, 0, 2, 1], 5000));
        let request = [b"\xff\xffgetInfo\0", data].concat();
        for reply in service.handle(from, &request) {
            assert!(reply.len() <= 1400);
            let decoded = Reply::decode(reply).expect("the responder's reply decodes");
            assert_eq!(&decoded.challenge()[..], &data[..4]);
        }
    }
});
