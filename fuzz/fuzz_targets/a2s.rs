//! A2S decoders, the split reassembler and its decompression on arbitrary bytes. The first byte
//! picks the app id the PLAYER reply is read for (The Ship or another game); the rest is fed as
//! a whole reply, as a request, and cut into split parts for one reassembly. Whatever decodes
//! must re-encode to a packet that decodes and encodes to the same bytes again: INFO's Extra
//! Data Flag is written from the fields present (unknown bits dropped, once), GoldSrc's part
//! nibbles are bit fields, and the heads a cut PLAYER or RULES reply is salvaged after decode.
#![no_main]

use libfuzzer_sys::fuzz_target;
use query_specs::a2s::{
    GoldSrcPart, PlayersHead, Reassembly, Reply, Request, RulesHead, SourcePart, THE_SHIP,
};
use query_wire::{Decode, Encode};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, data)) = data.split_first() else {
        return;
    };
    let app_id = if selector & 1 == 1 { THE_SHIP } else { 0 };
    if let Ok(reply) = Reply::from_bytes_with(data, app_id) {
        let once = reply.to_vec_with(app_id).expect("decoded reply re-encodes");
        let again = Reply::from_bytes_with(&once, app_id).expect("re-encoded reply decodes");
        assert_eq!(again.to_vec_with(app_id).expect("encodes again"), once);
    }
    if let Ok(part) = GoldSrcPart::from_bytes(data) {
        assert_eq!(part.to_vec().expect("decoded part re-encodes"), data);
        assert_eq!(data[SourcePart::ID_RANGE], part.id.to_le_bytes());
        assert_eq!(data[8], part.number << 4 | part.total);
    }
    if let Ok((head, _)) = PlayersHead::from_prefix(data, ()) {
        assert_eq!(head.to_vec().expect("head re-encodes"), data[..6]);
    }
    if let Ok((head, _)) = RulesHead::from_prefix(data, ()) {
        assert_eq!(head.to_vec().expect("head re-encodes"), data[..7]);
    }
    if let Ok(request) = Request::from_bytes(data) {
        let once = request.to_vec().expect("decoded request re-encodes");
        let again = Request::from_bytes(&once).expect("re-encoded request decodes");
        assert_eq!(again.to_vec().expect("encodes again"), once);
    }
    // Parts cut at every occurrence of the selector byte, each given the split marker.
    let mut parts = Reassembly::new();
    for part in data.split(|&b| b == selector) {
        let datagram = [b"\xfe\xff\xff\xff".as_slice(), part].concat();
        if let Ok(Some(whole)) = parts.push(&datagram) {
            let _ = Reply::from_bytes_with(&whole, app_id);
            parts = Reassembly::new();
        }
    }
});
