//! TeamSpeak 3 ServerQuery on arbitrary bytes, split wherever the input says: the client (the
//! line framing with its cap, the banner, error lines, escapes, the declared rows) live and
//! reading a recorded stream, the responder's side of a connection, and the ServerQuery text
//! format itself: every row that decodes re-encodes, and decodes again to the same value.
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use libfuzzer_sys::fuzz_target;
use query_net::engines::teamspeak3::{Ts3Responder, Ts3Session, VirtualServer};
use query_net::state::SharedState;
use query_net::stream::{replay, StreamResponder};
use query_specs::teamspeak3::{ChannelEntry, ClientEntry, Command, ErrorLine, ServerInfo};
use query_wire::kv::{decode_rows, encode_rows, escape, unescape};

/// Rows of `$row` that decode from `$text` re-encode, and decode again to the same rows.
macro_rules! round_trip {
    ($row:ident, $text:expr) => {
        if let Ok(rows) = decode_rows::<$row<'_>>($text) {
            let bytes = encode_rows(&rows).expect("decoded rows re-encode");
            let again = decode_rows::<$row<'_>>(&bytes).expect("re-encoded rows decode");
            assert_eq!(format!("{rows:?}"), format!("{again:?}"));
        }
    };
}

fuzz_target!(|data: &[u8]| {
    let target: SocketAddr = "127.0.0.1:10011".parse().unwrap();
    let pieces: Vec<&[u8]> = data.split(|&b| b == 0xf7).collect();
    let now = Instant::now();
    let session = Ts3Session::new(target, VirtualServer::default(), None);
    let _ = replay(session, &pieces, now);
    let _ = replay(Ts3Session::replaying(target), &pieces, now);

    let mut responder = Ts3Responder::new(SharedState::default(), Some("pw".into()));
    for piece in &pieces {
        responder.handle_bytes(piece, now);
        while responder.poll_transmit().is_some() {}
        if responder.is_closed() {
            break;
        }
    }

    round_trip!(ServerInfo, data);
    round_trip!(ClientEntry, data);
    round_trip!(ChannelEntry, data);
    round_trip!(ErrorLine, data);
    round_trip!(Command, data);
    if let Ok(text) = unescape(data, 0) {
        assert_eq!(unescape(escape(&text).as_bytes(), 0).unwrap(), text);
    }
});
