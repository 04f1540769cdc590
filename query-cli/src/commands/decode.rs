//! `gsq decode`: captured bytes in, the declared packet out as JSON.
//!
//! The bytes are tried as a request and as a reply; when only one reading decodes, that is
//! the answer. When both do (an SQP challenge, a SA:MP ping, most GameSpy text) a rule per
//! protocol picks one and a note says `--as` can pick the other. When neither does, the error
//! that got furthest into the bytes is reported, with its offset and field path.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use query_net::Protocol;
use query_specs::{gamespy1, onequery, samp, sqp};
use query_wire::{Decode, TextEncoding};
use serde::Serialize;
use serde_json::{json, Value};

use crate::cli::{DecodeArgs, PacketKind};
use crate::exit::{Category, Failure, Outcome};
use crate::output::{print_line, to_json};

/// One input file's bytes.
#[derive(Debug)]
struct Datagram {
    source: PathBuf,
    bytes: Vec<u8>,
}

impl Datagram {
    fn name(&self) -> String {
        self.source.display().to_string()
    }
}

/// Runs `gsq decode`.
pub fn run(args: &DecodeArgs, quiet: bool) -> Outcome {
    let datagrams = read_inputs(&args.files, args.hex)?;
    let encoding = args.encoding.unwrap_or(TextEncoding::Windows1252);
    let decoded = match args.protocol {
        Protocol::Sqp => decode_sqp(&datagrams, args),
        Protocol::OneQuery => each_datagram(&datagrams, |d| decode_onequery(d, args.as_kind)),
        Protocol::Samp => each_datagram(&datagrams, |d| decode_samp(d, args.as_kind, encoding)),
        Protocol::GameSpy1 => decode_gamespy1(&datagrams, args.as_kind, encoding),
    }?;
    if !quiet {
        for note in &decoded.notes {
            eprintln!("gsq: note: {note}");
        }
    }
    let mut document = json!({ "protocol": args.protocol });
    if let (Value::Object(out), Value::Object(body)) = (&mut document, decoded.body) {
        out.extend(body);
    }
    print_line(&to_json(&document, args.pretty)?)
}

/// What a decode produced: the JSON fields after `protocol`, and remarks for stderr.
#[derive(Debug, Default)]
struct Decoded {
    body: Value,
    notes: Vec<String>,
}

fn read_inputs(files: &[PathBuf], hex: bool) -> Outcome<Vec<Datagram>> {
    let mut stdin_used = false;
    let mut datagrams = Vec::with_capacity(files.len());
    for path in files {
        let raw = if path.as_os_str() == "-" {
            if stdin_used {
                return Err(Failure::usage("stdin ('-') can be read only once"));
            }
            stdin_used = true;
            let mut buf = Vec::new();
            io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| Failure::usage(format!("cannot read stdin: {e}")))?;
            buf
        } else {
            fs::read(path).map_err(|e| {
                Failure::usage(format!("cannot read {}: {e}", path.display()))
                    .hint("check the file name")
            })?
        };
        let bytes = if hex { parse_hex(path, &raw)? } else { raw };
        datagrams.push(Datagram {
            source: path.clone(),
            bytes,
        });
    }
    Ok(datagrams)
}

/// Hex text to bytes; white space anywhere is ignored.
fn parse_hex(path: &Path, text: &[u8]) -> Outcome<Vec<u8>> {
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    hex::decode(&digits).map_err(|e| {
        let reason = match e {
            hex::FromHexError::InvalidHexCharacter { c, index } => {
                format!("{c:?} is not a hex digit (digit {} of the file)", index + 1)
            }
            hex::FromHexError::OddLength => "an odd number of hex digits".to_owned(),
            other => other.to_string(),
        };
        Failure::new(
            Category::Malformed,
            format!("{}: not hex text: {reason}", path.display()),
        )
        .hint("drop --hex for raw bytes")
    })
}

/// Decodes datagrams one by one, for protocols whose replies are single datagrams.
fn each_datagram(
    datagrams: &[Datagram],
    decode: impl Fn(&Datagram) -> Outcome<Decoded>,
) -> Outcome<Decoded> {
    if let [only] = datagrams {
        return decode(only);
    }
    let mut items = Vec::with_capacity(datagrams.len());
    let mut notes = Vec::new();
    for datagram in datagrams {
        let mut one = decode(datagram)?;
        if let Value::Object(fields) = &mut one.body {
            fields.insert("file".into(), Value::String(datagram.name()));
        }
        items.push(one.body);
        notes.extend(one.notes);
    }
    Ok(Decoded {
        body: json!({ "datagrams": items }),
        notes,
    })
}

/// The outcome of trying one reading.
type Attempt = Result<Value, query_wire::Error>;

fn serialize<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| json!({ "unserializable": e.to_string() }))
}

/// Picks the reading(s) that decoded. `prefer` breaks a tie: which kind these bytes most
/// likely are when both readings fit.
fn choose(
    datagram: &Datagram,
    protocol: Protocol,
    forced: Option<PacketKind>,
    request: impl FnOnce() -> Attempt,
    reply: impl FnOnce() -> Attempt,
    prefer: PacketKind,
) -> Outcome<Decoded> {
    let packet = |kind: PacketKind, value: Value| json!({ "type": kind.name(), "packet": value });
    let malformed = |kind: PacketKind, error: &query_wire::Error| {
        Failure::new(
            Category::Malformed,
            format!(
                "{}: malformed {protocol} {}: {error}",
                datagram.name(),
                kind.name()
            ),
        )
    };
    match forced {
        Some(kind @ PacketKind::Request) => request()
            .map(|v| Decoded {
                body: packet(kind, v),
                notes: Vec::new(),
            })
            .map_err(|e| malformed(kind, &e)),
        Some(kind @ PacketKind::Reply) => reply()
            .map(|v| Decoded {
                body: packet(kind, v),
                notes: Vec::new(),
            })
            .map_err(|e| malformed(kind, &e)),
        None => match (request(), reply()) {
            (Ok(req), Ok(rep)) => {
                let (kind, value, other) = match prefer {
                    PacketKind::Request => (PacketKind::Request, req, PacketKind::Reply),
                    PacketKind::Reply => (PacketKind::Reply, rep, PacketKind::Request),
                };
                Ok(Decoded {
                    body: packet(kind, value),
                    notes: vec![format!(
                        "{}: these bytes also decode as a {protocol} {}; --as {} shows that reading",
                        datagram.name(),
                        other.name(),
                        other.name()
                    )],
                })
            }
            (Ok(req), Err(_)) => Ok(Decoded {
                body: packet(PacketKind::Request, req),
                notes: Vec::new(),
            }),
            (Err(_), Ok(rep)) => Ok(Decoded {
                body: packet(PacketKind::Reply, rep),
                notes: Vec::new(),
            }),
            (Err(req), Err(rep)) => {
                // The reading that got further is more likely the intended one.
                let (kind, error, other_kind, other) = if req.offset() > rep.offset() {
                    (PacketKind::Request, req, PacketKind::Reply, rep)
                } else {
                    (PacketKind::Reply, rep, PacketKind::Request, req)
                };
                Err(malformed(kind, &error).hint(format!("as a {}: {other}", other_kind.name())))
            }
        },
    }
}

// ---------------------------------------------------------------------------------------------
// SQP

/// Every chunk set, most chunks first: the order in which a reply's unknown chunk set is
/// guessed. All chunks is the usual request, and a larger set that decodes exactly is a
/// better explanation of the bytes than a smaller one.
fn chunk_sets_to_try() -> Vec<sqp::ChunkSet> {
    let mut sets: Vec<sqp::ChunkSet> = (0..=sqp::ChunkSet::all().bits())
        .filter_map(sqp::ChunkSet::from_bits)
        .collect();
    sets.sort_by_key(|s| (std::cmp::Reverse(s.bits().count_ones()), s.bits()));
    sets
}

fn chunk_names(set: sqp::ChunkSet) -> Vec<&'static str> {
    let mut names = Vec::new();
    for (flag, name) in [
        (sqp::ChunkSet::SERVER_INFO, "info"),
        (sqp::ChunkSet::SERVER_RULES, "rules"),
        (sqp::ChunkSet::PLAYER_INFO, "players"),
        (sqp::ChunkSet::TEAM_INFO, "teams"),
        (sqp::ChunkSet::METRICS, "metrics"),
    ] {
        if set.contains(flag) {
            names.push(name);
        }
    }
    names
}

/// Decodes with the given chunk set, or finds one: the first in [`chunk_sets_to_try`] that
/// decodes every byte. On failure, the error that got furthest.
fn with_chunk_set<T>(
    given: Option<sqp::ChunkSet>,
    decode: impl Fn(sqp::ChunkSet) -> Result<T, query_wire::Error>,
) -> Result<(T, sqp::ChunkSet), query_wire::Error> {
    if let Some(set) = given {
        return decode(set).map(|v| (v, set));
    }
    let mut furthest: Option<query_wire::Error> = None;
    for set in chunk_sets_to_try() {
        match decode(set) {
            Ok(value) => return Ok((value, set)),
            Err(e) => {
                if furthest.as_ref().is_none_or(|f| e.offset() > f.offset()) {
                    furthest = Some(e);
                }
            }
        }
    }
    Err(furthest.unwrap_or_else(|| {
        query_wire::Error::new(query_wire::ErrorKind::Invalid("no chunk set to try"), 0)
    }))
}

fn decode_sqp(datagrams: &[Datagram], args: &DecodeArgs) -> Outcome<Decoded> {
    if let [only] = datagrams {
        return decode_sqp_datagram(only, args);
    }
    if args.as_kind == Some(PacketKind::Request) {
        return Err(Failure::usage(
            "several files are the parts of one reply; decode requests one file at a time",
        ));
    }
    decode_sqp_split_reply(datagrams, args.chunks)
}

fn decode_sqp_datagram(datagram: &Datagram, args: &DecodeArgs) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    let inferred = std::cell::Cell::new(None);
    let request = || sqp::Request::from_bytes(bytes).map(|r| serialize(&r));
    let reply = || {
        with_chunk_set(args.chunks, |set| {
            sqp::Response::from_bytes_with(bytes, set).map(|r| serialize(&r))
        })
        .map(|(value, set)| {
            if value.get("Query").is_some() {
                inferred.set(Some(set));
            }
            value
        })
    };
    // `00` + 4 bytes is a challenge request (zero padding) or a challenge response.
    let prefer = if bytes.len() == 5 && bytes[0] == 0 && bytes[1..].iter().any(|&b| b != 0) {
        PacketKind::Reply
    } else {
        PacketKind::Request
    };
    let mut decoded = choose(
        datagram,
        Protocol::Sqp,
        args.as_kind,
        request,
        reply,
        prefer,
    )?;
    let is_reply = decoded.body["type"] == "reply";
    if let (true, Some(set)) = (is_reply, inferred.get()) {
        decoded.body["chunks"] = json!(chunk_names(set));
        if args.chunks.is_none() && set != sqp::ChunkSet::all() {
            decoded.notes.push(format!(
                "{}: the reply decodes with chunks {} (not all chunks); --chunks sets them",
                datagram.name(),
                chunk_names(set).join(",")
            ));
        }
    }
    Ok(decoded)
}

/// Several datagrams of one query response: each is a fragment; the payloads joined in
/// `current_packet` order decode as the chunks.
fn decode_sqp_split_reply(
    datagrams: &[Datagram],
    chunks: Option<sqp::ChunkSet>,
) -> Outcome<Decoded> {
    let mut fragments = Vec::with_capacity(datagrams.len());
    for datagram in datagrams {
        let fragment = sqp::QueryResponseFragment::from_bytes(&datagram.bytes).map_err(|e| {
            Failure::new(
                Category::Malformed,
                format!(
                    "{}: not a part of an SQP query response: {e}",
                    datagram.name()
                ),
            )
        })?;
        fragments.push((datagram, fragment));
    }
    fragments.sort_by_key(|(_, f)| f.current_packet);
    let (first, head) = &fragments[0];
    let inconsistent = |what: String| {
        Failure::new(
            Category::Malformed,
            format!("the parts of the SQP reply {what}"),
        )
    };
    for (datagram, f) in &fragments {
        if (f.challenge, f.version, f.last_packet)
            != (head.challenge, head.version, head.last_packet)
        {
            return Err(inconsistent(format!(
                "disagree: {} has challenge {}, version {}, last packet {}; {} has {}, {}, {}",
                datagram.name(),
                f.challenge,
                f.version,
                f.last_packet,
                first.name(),
                head.challenge,
                head.version,
                head.last_packet
            )));
        }
    }
    let numbers: Vec<u8> = fragments.iter().map(|(_, f)| f.current_packet).collect();
    let expected: Vec<u8> = (0..=head.last_packet).collect();
    if numbers != expected {
        return Err(inconsistent(format!(
            "are not packets 0 to {} once each: got {numbers:?}",
            head.last_packet
        ))
        .hint("give every part of the reply, each once"));
    }
    let payload: Vec<u8> = fragments
        .iter()
        .flat_map(|(_, f)| f.payload.iter().copied())
        .collect();
    let (value, set) = with_chunk_set(chunks, |set| {
        sqp::Chunks::from_bytes_with(&payload, set).map(|c| serialize(&c))
    })
    .map_err(|e| {
        Failure::new(
            Category::Malformed,
            format!("malformed sqp reply (the parts' payloads joined in packet order): {e}"),
        )
    })?;
    Ok(Decoded {
        body: json!({
            "type": "reply",
            "chunks": chunk_names(set),
            "packet": {
                "challenge": head.challenge,
                "version": head.version,
                "packets": fragments.len(),
                "chunks": value,
            },
        }),
        notes: Vec::new(),
    })
}

// ---------------------------------------------------------------------------------------------
// OneQuery

fn decode_onequery(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::OneQuery,
        forced,
        || onequery::Request::from_bytes(bytes).map(|r| serialize(&r)),
        || onequery::Reply::from_bytes(bytes).map(|r| serialize(&r)),
        // The magic tells them apart; both cannot decode.
        PacketKind::Reply,
    )
}

// ---------------------------------------------------------------------------------------------
// SA:MP

fn decode_samp(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    let mut decoded = choose(
        datagram,
        Protocol::Samp,
        forced,
        || samp::Request::from_bytes(bytes).map(|r| serialize(&r)),
        || samp::Reply::from_bytes(bytes).map(|r| serialize(&r)),
        // Only a ping decodes both ways, and its reply is byte for byte its request.
        PacketKind::Request,
    )?;
    if encoding != TextEncoding::Windows1252 {
        reread_strings(&mut decoded.body["packet"], encoding);
    }
    Ok(decoded)
}

/// SA:MP text serializes as Windows-1252. That code page (as WHATWG and encoding_rs define
/// it) gives every byte a distinct character, so encoding the JSON strings back to 1252
/// recovers the wire bytes exactly, which are then read in the chosen encoding. Every string
/// in a SA:MP packet is such text.
fn reread_strings(value: &mut Value, encoding: TextEncoding) {
    match value {
        Value::String(text) => {
            if let Some(bytes) = TextEncoding::Windows1252.encode(text) {
                let reread = encoding.decode_lossy(&bytes).into_owned();
                *text = reread;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| reread_strings(v, encoding)),
        Value::Object(fields) => fields
            .values_mut()
            .for_each(|v| reread_strings(v, encoding)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// GameSpy v1

fn decode_gamespy1(
    datagrams: &[Datagram],
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let reply = || gamespy1_reply(datagrams, encoding);
    if let [only] = datagrams {
        let bytes = &only.bytes;
        // Any key/value text is a valid reply; a request is one made only of query keywords.
        let requests = gamespy1::Request::decode_all(bytes);
        let prefer = match &requests {
            Ok(queries)
                if !queries.is_empty()
                    && !queries
                        .iter()
                        .any(|q| matches!(q, gamespy1::Request::Other(..))) =>
            {
                PacketKind::Request
            }
            _ => PacketKind::Reply,
        };
        return choose(
            only,
            Protocol::GameSpy1,
            forced,
            || requests.map(|r| serialize(&r)),
            reply,
            prefer,
        );
    }
    if forced == Some(PacketKind::Request) {
        return Err(Failure::usage(
            "several files are the parts of one reply; decode requests one file at a time",
        ));
    }
    let value = reply().map_err(|e| {
        Failure::new(
            Category::Malformed,
            format!("malformed gamespy1 reply: {e}"),
        )
    })?;
    Ok(Decoded {
        body: json!({ "type": "reply", "packet": value }),
        notes: Vec::new(),
    })
}

/// The reply in the datagrams, put together by part number.
fn gamespy1_reply(datagrams: &[Datagram], encoding: TextEncoding) -> Attempt {
    let mut parts = gamespy1::Reassembly::new();
    for datagram in datagrams {
        match parts.push(&datagram.bytes)? {
            gamespy1::Pushed::New => {}
            gamespy1::Pushed::Duplicate => {
                tracing::warn!("{}: a part given twice", datagram.name())
            }
            gamespy1::Pushed::OtherQuery => tracing::warn!(
                "{}: a part of another query (different queryid), left out",
                datagram.name()
            ),
        }
    }
    parts
        .reply_with(encoding)
        .map(|assembled| serialize(&assembled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_1252_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let text = TextEncoding::Windows1252.decode_lossy(&all);
        let back = TextEncoding::Windows1252.encode(&text).expect("encodable");
        assert_eq!(&*back, &all[..]);
    }

    #[test]
    fn strings_are_reread_in_the_chosen_encoding() {
        // "Привет" in Windows-1251, as it serializes (read as 1252).
        let wire = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2];
        let as_1252 = TextEncoding::Windows1252.decode_lossy(&wire).into_owned();
        let mut value = json!({ "name": as_1252, "n": 3, "list": [as_1252] });
        reread_strings(&mut value, TextEncoding::Windows1251);
        assert_eq!(
            value,
            json!({ "name": "Привет", "n": 3, "list": ["Привет"] })
        );
    }

    #[test]
    fn chunk_sets_are_tried_largest_first_and_all_of_them() {
        let sets = chunk_sets_to_try();
        assert_eq!(sets.len(), 32);
        assert_eq!(sets[0], sqp::ChunkSet::all());
        assert_eq!(sets[31], sqp::ChunkSet::empty());
        assert_eq!(sets[1].bits().count_ones(), 4);
    }

    #[test]
    fn hex_ignores_white_space_and_names_bad_digits() {
        assert_eq!(
            parse_hex(Path::new("x"), b"00 0a\nFF\t").unwrap(),
            [0, 10, 255]
        );
        let err = parse_hex(Path::new("x"), b"00 zz").unwrap_err();
        assert_eq!(err.category(), Category::Malformed);
        assert!(err.message().contains("'z'"), "{err}");
        assert!(parse_hex(Path::new("x"), b"abc")
            .unwrap_err()
            .message()
            .contains("odd"));
    }
}
