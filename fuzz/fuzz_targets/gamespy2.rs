//! GameSpy 2 decoders on arbitrary bytes: the first byte picks which sections the reply is read
//! for (its low three bits: details, players, teams); the rest is fed as a reply and as a
//! request. Whatever decodes must re-encode (or fail to with an error) to bytes that decode and
//! encode to the same bytes again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::gamespy2::{Reply, Request, Requested};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    let requested = Requested {
        details: selector & 1 != 0,
        players: selector & 2 != 0,
        teams: selector & 4 != 0,
    };
    if let Ok(reply) = Reply::from_bytes_with(data, requested) {
        if let Ok(once) = reply.to_vec_with(requested) {
            assert_eq!(reply.encoded_len(requested), once.len());
            let again = Reply::from_bytes_with(&once, requested).expect("re-encoded reply decodes");
            assert_eq!(again.to_vec_with(requested).expect("encodes again"), once);
        }
    }
    if let Ok(request) = Request::from_bytes(data) {
        let once = request.to_vec().expect("decoded request re-encodes");
        assert_eq!(Request::from_bytes(&once).expect("decodes again"), request);
    }
});
