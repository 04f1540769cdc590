//! `gsq decode` for the TCP families whose files hold a stream in one direction: Frostbite
//! packets, and TeamSpeak 3 ServerQuery lines.

use query_net::Protocol;
use query_specs::frostbite::{self, FROM_SERVER, IS_RESPONSE, SEQUENCE_MASK};
use query_specs::teamspeak3::{self, ErrorLine};
use query_wire::kv::{decode_rows, FromKeyValues};
use query_wire::{Decode, Error, ErrorKind, Reader};
use serde_json::{json, Value};

use super::{choose, serialize, Attempt, Datagram, Decoded};
use crate::cli::PacketKind;
use crate::exit::Outcome;

/// Frostbite packets, one after the other: a client's requests, or a server's answers and
/// events (`origin` and `response` from the sequence word's top bits).
pub(super) fn decode_frostbite(
    datagram: &Datagram,
    forced: Option<PacketKind>,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::Frostbite,
        forced,
        || frostbite_packets(bytes, true),
        || frostbite_packets(bytes, false),
        PacketKind::Reply,
    )
}

fn frostbite_packets(bytes: &[u8], requests: bool) -> Attempt {
    let mut reader = Reader::new(bytes);
    let mut packets = Vec::new();
    while !reader.is_empty() || packets.is_empty() {
        let start = reader.offset();
        let packet = frostbite::Packet::decode(&mut reader, ())?;
        let from_server = packet.sequence & FROM_SERVER != 0;
        let response = packet.sequence & IS_RESPONSE != 0;
        if requests && (from_server || response) {
            return Err(Error::new(
                ErrorKind::Invalid("a packet of the server among the client's"),
                start,
            ));
        }
        let words: Vec<String> = packet
            .words
            .iter()
            .map(|w| String::from_utf8_lossy(w.text.as_bytes()).into_owned())
            .collect();
        packets.push(json!({
            "sequence": packet.sequence & SEQUENCE_MASK,
            "origin": if from_server { "server" } else { "client" },
            "response": response,
            "words": words,
        }));
    }
    Ok(serialize(&packets))
}

/// ServerQuery lines: a client's commands, or a server's banner, data rows and error lines.
pub(super) fn decode_teamspeak3(
    datagram: &Datagram,
    forced: Option<PacketKind>,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    let server_like = bytes.starts_with(teamspeak3::BANNER)
        || bytes
            .split(|&b| b == b'\n')
            .any(|l| l.trim_ascii_start().starts_with(b"error id="));
    choose(
        datagram,
        Protocol::TeamSpeak3,
        forced,
        || teamspeak3_lines(bytes, false),
        || teamspeak3_lines(bytes, true),
        if server_like {
            PacketKind::Reply
        } else {
            PacketKind::Request
        },
    )
}

fn teamspeak3_lines(bytes: &[u8], server: bool) -> Attempt {
    let mut reader = Reader::new(bytes);
    let mut lines = Vec::new();
    while !reader.is_empty() {
        let start = reader.offset();
        let text = match teamspeak3::Line::decode(&mut reader, ()) {
            Ok(line) => line.text(),
            // The last line may lack its `\n`, and a server's last `\n\r` leaves a `\r`.
            Err(_) => {
                let rest = &bytes[start..];
                reader = Reader::new(&[]);
                rest.strip_prefix(b"\r").unwrap_or(rest)
            }
        };
        if text.is_empty() {
            continue;
        }
        let at = |e: Error| e.at_index(lines.len());
        let line: Value = if server && text == teamspeak3::BANNER {
            json!({ "banner": "TS3" })
        } else if server && (text == b"error" || text.starts_with(b"error ")) {
            serde_json::to_value(ErrorLine::from_bytes(text).map_err(at)?).unwrap_or(Value::Null)
        } else if server && !text.contains(&b'=') {
            json!({ "text": String::from_utf8_lossy(text) })
        } else {
            let rows: Vec<teamspeak3::Command<'_>> = decode_rows(text).map_err(at)?;
            let rows: Vec<Value> = rows
                .iter()
                .map(|row| {
                    Value::Object(
                        row.fields
                            .iter()
                            .map(|(k, v)| (k.to_string(), Value::from(v.as_str())))
                            .collect(),
                    )
                })
                .collect();
            json!({ "rows": rows })
        };
        lines.push(line);
    }
    if lines.is_empty() {
        return Err(Error::new(ErrorKind::Invalid("no line"), 0));
    }
    Ok(serialize(&lines))
}
