//! `gsq decode`: captured bytes in, the declared packet out as JSON.
//!
//! The bytes are tried as a request and as a reply; when only one reading decodes, that is
//! the answer. When both do (an SQP challenge, a SA:MP ping, most GameSpy text) a rule per
//! protocol picks one and a note says `--as` can pick the other. When neither does, the error
//! that got furthest into the bytes is reported, with its offset and field path.

use std::fs;
use std::io::{self, IsTerminal, Read};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use query_games::identify::by_reply;
use query_games::plan::Choice;
use query_net::engines::sqp::{chunk_names, find_chunks, ChunkSearchError};
use query_net::{replay, Options, Protocol, ServerStatus};
use query_specs::{
    a2s, ase, bedrock, doom3, fivem, gamespy1, gamespy2, gamespy3, minecraft_java,
    minecraft_legacy, mumble, onequery, quake2, quake3, samp, sqp, teeworlds, unreal2,
};
use query_wire::{Decode, Reader, TextEncoding};
use serde::Serialize;

use crate::cli::{DecodeArgs, PacketKind};
use crate::exit::{Category, Failure, Outcome};
use crate::output::{print_line, to_json, Format, OrderedJson};
use crate::target::Answer;

mod capture;
mod tcp_families;

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
    if let ([only], false) = (args.files.as_slice(), args.hex) {
        if let Some(bytes) = capture::read_if_capture(only)? {
            return capture::decode_capture(args, only, &bytes, quiet);
        }
    }
    let datagrams = read_inputs(&args.files, args.hex)?;
    if args.status {
        // Files say nothing of where they came from.
        let target = SocketAddr::new(IpAddr::from([0, 0, 0, 0]), args.protocol.default_port());
        let replies: Vec<Vec<u8>> = datagrams.into_iter().map(|d| d.bytes).collect();
        let status = replayed_status(args, target, &replies)
            .map_err(|e| replay_failure(&format!("{} replies", args.protocol), &e))?;
        return print_status(&status, args.pretty);
    }
    let (body, notes) = decode_datagrams(args, &datagrams)?;
    print_document(args, body, &notes, quiet)
}

/// Each datagram (or the parts of one reply) decoded as the protocol's packets.
fn decode_datagrams(args: &DecodeArgs, datagrams: &[Datagram]) -> Outcome<(Body, Vec<String>)> {
    let encoding = args.encoding.unwrap_or(TextEncoding::Windows1252);
    match args.protocol {
        Protocol::Sqp => decode_sqp(datagrams, args),
        Protocol::OneQuery => each_datagram(datagrams, |d| decode_onequery(d, args.as_kind)),
        Protocol::Samp => each_datagram(datagrams, |d| decode_samp(d, args.as_kind, encoding)),
        Protocol::GameSpy1 => decode_gamespy1(datagrams, args.as_kind, encoding),
        Protocol::A2s => {
            let encoding = args
                .encoding
                .unwrap_or(query_net::engines::a2s::DEFAULT_ENCODING);
            decode_a2s(datagrams, args.as_kind, encoding)
        }
        Protocol::Quake3 => each_datagram(datagrams, |d| decode_quake3(d, args.as_kind, encoding)),
        Protocol::Quake2 => {
            let encoding = args
                .encoding
                .unwrap_or(query_net::engines::quake2::DEFAULT_ENCODING);
            each_datagram(datagrams, |d| decode_quake2(d, args.as_kind, encoding))
        }
        Protocol::Fivem => each_datagram(datagrams, |d| decode_fivem(d, args.as_kind)),
        Protocol::Doom3 => {
            let encoding = args
                .encoding
                .unwrap_or(query_net::engines::doom3::DEFAULT_ENCODING);
            each_datagram(datagrams, |d| decode_doom3(d, args.as_kind, encoding))
        }
        Protocol::GameSpy2 => {
            each_datagram(datagrams, |d| decode_gamespy2(d, args.as_kind, encoding))
        }
        Protocol::GameSpy3 | Protocol::MinecraftQuery => {
            decode_gamespy3_datagrams(datagrams, args.protocol, args.as_kind, encoding)
        }
        Protocol::Bedrock => each_datagram(datagrams, |d| decode_bedrock(d, args.as_kind)),
        Protocol::Teeworlds => each_datagram(datagrams, |d| decode_teeworlds(d, args.as_kind)),
        Protocol::Mumble => each_datagram(datagrams, |d| decode_mumble(d, args.as_kind)),
        Protocol::Unreal2 => each_datagram(datagrams, |d| decode_unreal2(d, args.as_kind)),
        Protocol::Ase => {
            let encoding = args
                .encoding
                .unwrap_or(query_net::engines::ase::DEFAULT_ENCODING);
            each_datagram(datagrams, |d| decode_ase(d, args.as_kind, encoding))
        }
        Protocol::Minecraft => each_datagram(datagrams, |d| decode_minecraft(d, args.as_kind)),
        Protocol::Frostbite => each_datagram(datagrams, |d| {
            tcp_families::decode_frostbite(d, args.as_kind)
        }),
        Protocol::TeamSpeak3 => each_datagram(datagrams, |d| {
            tcp_families::decode_teamspeak3(d, args.as_kind)
        }),
    }
}

/// Prints what `decode` found, and its notes on stderr unless `quiet`.
fn print_document(args: &DecodeArgs, body: Body, notes: &[String], quiet: bool) -> Outcome {
    if !quiet {
        for note in notes {
            eprintln!("gsq: note: {note}");
        }
    }
    let document = Document {
        protocol: args.protocol,
        body,
    };
    let pretty = args.pretty || io::stdout().is_terminal();
    print_line(&to_json(&document, pretty)?)
}

/// The status the client session returns had `replies` arrived from `target`.
fn replayed_status(
    args: &DecodeArgs,
    target: SocketAddr,
    replies: &[Vec<u8>],
) -> Result<ServerStatus, query_net::QueryError> {
    let options = Options {
        sqp_chunks: args.chunks.unwrap_or(sqp::ChunkSet::all()),
        encoding: args.encoding,
        ..Options::default()
    };
    replay::status_from_replies(args.protocol, target, replies, &options)
}

/// Why replayed replies made no status. A request that nothing answered is a datagram missing
/// from the input, not a server to wait longer for: the message names the request whose
/// reply is missing (the challenge, a page, ...), in place of a network timeout's advice.
fn replay_failure(what: &str, error: &query_net::QueryError) -> Failure {
    use query_net::QueryError;
    match error {
        QueryError::Timeout { waiting_for, .. } | QueryError::Deadline { waiting_for, .. } => {
            Failure::new(
                Category::Timeout,
                format!(
                    "{what}: no datagram answers the {waiting_for}: the reply to it is missing"
                ),
            )
            .hint(format!(
                "add the datagram that answers the {waiting_for} (a capture must hold the whole \
                 exchange from the first request)"
            ))
        }
        other => Failure::from_query(what, other),
    }
}

fn print_status(status: &ServerStatus, pretty: bool) -> Outcome {
    let format = if pretty {
        Format::PrettyJson
    } else {
        Format::Json
    };
    // As `gsq query --json` prints it: with the game the replies name and their port. Files
    // come from no port (0.0.0.0), so only the replies themselves can name the game.
    let choice = Choice::Protocol(status.protocol);
    let answer = if status.address.ip().is_unspecified() {
        Answer::named(choice, status.clone(), by_reply(status))
    } else {
        Answer::new(choice, status.clone())
    };
    print_line(&to_json(&answer, format == Format::PrettyJson)?)
}

/// What `decode` prints.
#[derive(Debug, Serialize)]
struct Document {
    protocol: Protocol,
    #[serde(flatten)]
    body: Body,
}

/// One reading, or one per datagram.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Body {
    One(Reading),
    Many { datagrams: Vec<Reading> },
}

/// A datagram (or a reply put together from several) read as one kind of packet.
#[derive(Debug, Serialize)]
struct Reading {
    /// The file, when several were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    /// `request` or `reply`.
    #[serde(rename = "type")]
    kind: &'static str,
    /// SQP query responses: the chunk set the reply was decoded with.
    #[serde(skip_serializing_if = "Option::is_none")]
    chunks: Option<Vec<&'static str>>,
    /// The decoded packet, in declaration order.
    packet: OrderedJson,
}

/// A reading and remarks for stderr.
type Decoded = (Reading, Vec<String>);

/// The largest payload a UDP datagram can carry.
const MAX_DATAGRAM: usize = 65_535;

fn read_inputs(files: &[PathBuf], hex: bool) -> Outcome<Vec<Datagram>> {
    // Hex text takes at least two characters a byte, and white space besides.
    let limit = if hex { MAX_DATAGRAM * 4 } else { MAX_DATAGRAM };
    let mut stdin_used = false;
    let mut datagrams = Vec::with_capacity(files.len());
    for path in files {
        let raw = if path.as_os_str() == "-" {
            if stdin_used {
                return Err(Failure::usage("stdin ('-') can be read only once"));
            }
            stdin_used = true;
            read_limited(io::stdin(), limit)
                .map_err(|e| Failure::usage(format!("cannot read stdin: {e}")))?
        } else {
            fs::File::open(path)
                .and_then(|file| read_limited(file, limit))
                .map_err(|e| {
                    Failure::usage(format!("cannot read {}: {e}", path.display()))
                        .hint("check the file name")
                })?
        };
        if raw.len() > limit {
            return Err(too_long(path));
        }
        let bytes = if hex { parse_hex(path, &raw)? } else { raw };
        if bytes.len() > MAX_DATAGRAM {
            return Err(too_long(path));
        }
        datagrams.push(Datagram {
            source: path.clone(),
            bytes,
        });
    }
    Ok(datagrams)
}

/// Reads at most `limit + 1` bytes: enough to tell that an input is too long without reading
/// all of a large file given by mistake.
fn read_limited(reader: impl Read, limit: usize) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    reader.take(cap).read_to_end(&mut buf)?;
    Ok(buf)
}

fn too_long(path: &Path) -> Failure {
    Failure::usage(format!(
        "{}: more than {MAX_DATAGRAM} bytes, the most a UDP datagram holds",
        path.display()
    ))
    .hint("give one datagram per file")
}

/// Hex text to bytes; white space anywhere is ignored.
fn parse_hex(path: &Path, text: &[u8]) -> Outcome<Vec<u8>> {
    let failure = |reason: String| {
        Failure::new(
            Category::Malformed,
            format!("{}: not hex text: {reason}", path.display()),
        )
        .hint("drop --hex for raw bytes")
    };
    if let Some(reason) = first_non_hex(text) {
        return Err(failure(reason));
    }
    let digits: Vec<u8> = text
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    hex::decode(&digits).map_err(|e| {
        failure(match e {
            hex::FromHexError::OddLength => "an odd number of hex digits".to_owned(),
            other => other.to_string(),
        })
    })
}

/// The first character of `text` that is neither a hex digit nor white space, as read (UTF-8:
/// `'é'`, not the `'Ã'` of its first byte), with its position among the digits; a byte that is
/// no UTF-8 at all is shown as a byte.
fn first_non_hex(text: &[u8]) -> Option<String> {
    let mut digit = 0;
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_ascii_whitespace() {
                continue;
            }
            digit += 1;
            if !c.is_ascii_hexdigit() {
                return Some(format!(
                    "{c:?} is not a hex digit (digit {digit} of the file)"
                ));
            }
        }
        if let Some(&byte) = chunk.invalid().first() {
            return Some(format!(
                "byte 0x{byte:02x} is not a hex digit nor UTF-8 text (digit {} of the file)",
                digit + 1
            ));
        }
    }
    None
}

/// Decodes datagrams one by one, for protocols whose replies are single datagrams.
fn each_datagram(
    datagrams: &[Datagram],
    decode: impl Fn(&Datagram) -> Outcome<Decoded>,
) -> Outcome<(Body, Vec<String>)> {
    if let [only] = datagrams {
        let (reading, notes) = decode(only)?;
        return Ok((Body::One(reading), notes));
    }
    let mut readings = Vec::with_capacity(datagrams.len());
    let mut notes = Vec::new();
    for datagram in datagrams {
        let (mut reading, more) = decode(datagram)?;
        reading.file = Some(datagram.name());
        readings.push(reading);
        notes.extend(more);
    }
    Ok((
        Body::Many {
            datagrams: readings,
        },
        notes,
    ))
}

/// The outcome of trying one reading.
type Attempt = Result<OrderedJson, query_wire::Error>;

/// A decoded packet as ordered JSON. Serializing a declared packet cannot fail; if it ever
/// did, the error shows up in the output rather than being lost.
fn serialize<T: Serialize>(value: &T) -> OrderedJson {
    OrderedJson::of(value).unwrap_or_else(|e| OrderedJson::String(e.to_string()))
}

/// Picks the reading that decoded. `prefer` breaks a tie: which kind these bytes most
/// likely are when both readings fit.
fn choose(
    datagram: &Datagram,
    protocol: Protocol,
    forced: Option<PacketKind>,
    request: impl FnOnce() -> Attempt,
    reply: impl FnOnce() -> Attempt,
    prefer: PacketKind,
) -> Outcome<Decoded> {
    let reading = |kind: PacketKind, packet: OrderedJson| Reading {
        file: None,
        kind: kind.name(),
        chunks: None,
        packet,
    };
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
    let attempt = |kind: PacketKind, result: Attempt| {
        result
            .map(|packet| (reading(kind, packet), Vec::new()))
            .map_err(|e| malformed(kind, &e))
    };
    match forced {
        Some(PacketKind::Request) => attempt(PacketKind::Request, request()),
        Some(PacketKind::Reply) => attempt(PacketKind::Reply, reply()),
        None => match (request(), reply()) {
            (Ok(req), Ok(rep)) => {
                let (kind, packet, other) = match prefer {
                    PacketKind::Request => (PacketKind::Request, req, PacketKind::Reply),
                    PacketKind::Reply => (PacketKind::Reply, rep, PacketKind::Request),
                };
                let note = format!(
                    "{}: these bytes also decode as a {protocol} {}; --as {} shows that reading",
                    datagram.name(),
                    other.name(),
                    other.name()
                );
                Ok((reading(kind, packet), vec![note]))
            }
            (Ok(req), Err(_)) => Ok((reading(PacketKind::Request, req), Vec::new())),
            (Err(_), Ok(rep)) => Ok((reading(PacketKind::Reply, rep), Vec::new())),
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

/// [`choose`] for a protocol whose request and reply are both declared packets, each read
/// from the whole datagram.
fn choose_declared<'a, Q, R>(
    datagram: &'a Datagram,
    protocol: Protocol,
    forced: Option<PacketKind>,
    prefer: PacketKind,
) -> Outcome<Decoded>
where
    Q: Decode<'a, Ctx = ()> + Serialize,
    R: Decode<'a, Ctx = ()> + Serialize,
{
    let bytes = &datagram.bytes;
    choose(
        datagram,
        protocol,
        forced,
        || Q::from_bytes(bytes).map(|r| serialize(&r)),
        || R::from_bytes(bytes).map(|r| serialize(&r)),
        prefer,
    )
}

// ---------------------------------------------------------------------------------------------
// SQP

/// The chunk set to decode a query response's chunk bytes with: the one `--chunks` gives, or
/// the one the client finds from the bytes ([`find_chunks`]: the request, all chunks here, or
/// the one subset of it that explains every byte). When no set explains the bytes, the set of
/// the attempt that got furthest, whose decode then reports where and why it failed.
fn chunk_set_of(payload: &[u8], given: Option<sqp::ChunkSet>) -> Result<sqp::ChunkSet, String> {
    match given {
        Some(set) => Ok(set),
        None => match find_chunks(payload, sqp::ChunkSet::all()) {
            Ok(found) => Ok(found.present),
            Err(ChunkSearchError::NoFit { attempt, .. }) => Ok(attempt),
            Err(ambiguous) => Err(ambiguous.to_string()),
        },
    }
}

/// The note that says which chunks a reply was decoded with, when `gsq` found them.
fn found_chunks_note(datagram: &str, set: sqp::ChunkSet) -> String {
    let missing = sqp::ChunkSet::all() - set;
    let names = |set| match chunk_names(set) {
        names if names.is_empty() => "none".to_owned(),
        names => names.join(","),
    };
    format!(
        "{datagram}: the reply holds chunks {} (not {}); --chunks sets them",
        names(set),
        names(missing)
    )
}

fn decode_sqp(datagrams: &[Datagram], args: &DecodeArgs) -> Outcome<(Body, Vec<String>)> {
    if let [only] = datagrams {
        let (reading, notes) = decode_sqp_datagram(only, args)?;
        return Ok((Body::One(reading), notes));
    }
    if args.as_kind == Some(PacketKind::Request) {
        return Err(Failure::usage(
            "several files are the parts of one reply; decode requests one file at a time",
        ));
    }
    let (reading, notes) = decode_sqp_split_reply(datagrams, args.chunks)?;
    Ok((Body::One(reading), notes))
}

fn decode_sqp_datagram(datagram: &Datagram, args: &DecodeArgs) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    let used = std::cell::Cell::new(None);
    let ambiguous = std::cell::RefCell::new(None);
    let request = || sqp::Request::from_bytes(bytes).map(|r| serialize(&r));
    let reply = || {
        let set = match sqp::QueryResponseFragment::from_bytes(bytes) {
            Ok(fragment) => match chunk_set_of(fragment.payload, args.chunks) {
                Ok(set) => {
                    used.set(Some(set));
                    set
                }
                Err(why) => {
                    *ambiguous.borrow_mut() = Some(why);
                    return Err(query_wire::Error::new(
                        query_wire::ErrorKind::Invalid("no single chunk set fits the reply"),
                        0,
                    ));
                }
            },
            // Not a query response: a challenge, or bytes whose error the decode reports.
            Err(_) => args.chunks.unwrap_or(sqp::ChunkSet::all()),
        };
        sqp::Response::from_bytes_with(bytes, set).map(|r| serialize(&r))
    };
    // `00` + 4 bytes is a challenge request (zero padding) or a challenge response.
    let prefer = if bytes.len() == 5 && bytes[0] == 0 && bytes[1..].iter().any(|&b| b != 0) {
        PacketKind::Reply
    } else {
        PacketKind::Request
    };
    let chosen = choose(
        datagram,
        Protocol::Sqp,
        args.as_kind,
        request,
        reply,
        prefer,
    );
    let (mut reading, mut notes) = match (chosen, ambiguous.into_inner()) {
        (Ok(decoded), _) => decoded,
        (Err(_), Some(why)) => {
            return Err(Failure::new(
                Category::Malformed,
                format!("{}: malformed sqp reply: {why}", datagram.name()),
            )
            .hint("--chunks says which chunks the reply holds"))
        }
        (Err(failure), None) => return Err(failure),
    };
    if let (true, Some(set)) = (reading.kind == PacketKind::Reply.name(), used.get()) {
        reading.chunks = Some(chunk_names(set));
        if args.chunks.is_none() && set != sqp::ChunkSet::all() {
            notes.push(found_chunks_note(&datagram.name(), set));
        }
    }
    Ok((reading, notes))
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
    let malformed = |why: &dyn std::fmt::Display| {
        Failure::new(
            Category::Malformed,
            format!("malformed sqp reply (the parts' payloads joined in packet order): {why}"),
        )
    };
    let set = chunk_set_of(&payload, chunks)
        .map_err(|why| malformed(&why).hint("--chunks says which chunks the reply holds"))?;
    let value = sqp::Chunks::from_bytes_with(&payload, set)
        .map(|c| serialize(&c))
        .map_err(|e| malformed(&e))?;
    let mut notes = Vec::new();
    if chunks.is_none() && set != sqp::ChunkSet::all() {
        notes.push(found_chunks_note("the joined reply", set));
    }
    let packet = SplitReply {
        challenge: head.challenge,
        version: head.version,
        packets: fragments.len(),
        chunks: value,
    };
    let reading = Reading {
        file: None,
        kind: PacketKind::Reply.name(),
        chunks: Some(chunk_names(set)),
        packet: serialize(&packet),
    };
    Ok((reading, notes))
}

/// A query response put together from its parts.
#[derive(Debug, Serialize)]
struct SplitReply {
    challenge: u32,
    version: u16,
    /// How many datagrams it came in.
    packets: usize,
    chunks: OrderedJson,
}

// ---------------------------------------------------------------------------------------------
// OneQuery

fn decode_onequery(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    // The magic tells them apart; both cannot decode.
    choose_declared::<onequery::Request<'_>, onequery::Reply<'_>>(
        datagram,
        Protocol::OneQuery,
        forced,
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
    // Only a ping decodes both ways, and its reply is byte for byte its request.
    let decoded = choose_declared::<samp::Request<'_>, samp::Reply<'_>>(
        datagram,
        Protocol::Samp,
        forced,
        PacketKind::Request,
    );
    read_in(decoded, encoding)
}

/// An ASE request (`s`) or `EYE1` reply, its text read in `encoding` (UTF-8 unless told).
fn decode_ase(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    // No datagram decodes both ways: a reply starts with `EYE1`.
    let decoded = choose_declared::<ase::Request, ase::Reply<'_>>(
        datagram,
        Protocol::Ase,
        forced,
        PacketKind::Reply,
    );
    read_in(decoded, encoding)
}

/// A GameSpy 2 request or reply, its text read in `encoding`. A reply does not say which
/// sections it holds: the first combination that decodes the whole datagram is taken
/// (everything, the details, the tables, then the rest).
fn decode_gamespy2(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    use gamespy2::Requested;
    let bytes = &datagram.bytes;
    read_in(
        choose(
            datagram,
            Protocol::GameSpy2,
            forced,
            || gamespy2::Request::from_bytes(bytes).map(|r| serialize(&r)),
            || {
                let error = match gamespy2::Reply::from_bytes_with(bytes, Requested::ALL) {
                    Ok(reply) => return Ok(serialize(&reply)),
                    Err(error) => error,
                };
                let others =
                    [Requested::DETAILS, Requested::TABLES]
                        .into_iter()
                        .chain((0..7u8).map(|bits| Requested {
                            details: bits & 1 != 0,
                            players: bits & 2 != 0,
                            teams: bits & 4 != 0,
                        }));
                for requested in others {
                    if let Ok(reply) = gamespy2::Reply::from_bytes_with(bytes, requested) {
                        return Ok(serialize(&reply));
                    }
                }
                // The error of the request for everything, the usual one.
                Err(error)
            },
            PacketKind::Request,
        ),
        encoding,
    )
}

/// A Quake 3 request, `statusResponse` or `infoResponse`, its text read in `encoding`: it is
/// decoded as Windows-1252 and every string read again, as for SA:MP.
fn decode_quake3(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    read_in(
        choose(
            datagram,
            Protocol::Quake3,
            forced,
            || quake3::Request::decode(bytes).map(|r| serialize(&r)),
            || match quake3::ReplyKind::decode(&mut Reader::new(bytes), ())? {
                quake3::ReplyKind::Info => {
                    quake3::InfoResponse::decode(bytes, TextEncoding::Windows1252)
                        .map(|r| serialize(&r))
                }
                quake3::ReplyKind::Status => {
                    quake3::StatusResponse::decode(bytes, TextEncoding::Windows1252)
                        .map(|r| serialize(&r))
                }
            },
            PacketKind::Request,
        ),
        encoding,
    )
}

/// A Quake 2 `status` request or reply (`print` or QuakeWorld's `n`), its text read in
/// `encoding`: decoded as Windows-1252 and every string read again, as for Quake 3.
fn decode_quake2(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    read_in(
        choose(
            datagram,
            Protocol::Quake2,
            forced,
            || quake2::Request::decode(bytes).map(|r| serialize(&r)),
            || {
                quake2::StatusResponse::decode(bytes, TextEncoding::Windows1252)
                    .map(|r| serialize(&r))
            },
            PacketKind::Request,
        ),
        encoding,
    )
}

/// A FiveM `getinfo` request or `infoResponse` (UTF-8).
fn decode_fivem(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::Fivem,
        forced,
        || quake3::Request::decode(bytes).map(|r| serialize(&r)),
        || fivem::InfoResponse::decode(bytes, fivem::ENCODING).map(|r| serialize(&r)),
        PacketKind::Request,
    )
}

/// A Doom 3 engine `getInfo` request or reply (`infoResponse` in Doom 3's or ETQW's form,
/// ETQW's `infoExResponse`), its text read in `encoding`: decoded as Latin-1 and every string
/// read again.
fn decode_doom3(
    datagram: &Datagram,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    let (mut reading, notes) = choose(
        datagram,
        Protocol::Doom3,
        forced,
        || doom3::GetInfo::from_bytes(bytes).map(|r| serialize(&r)),
        || doom3::Reply::decode(bytes).map(|r| serialize(&r)),
        PacketKind::Request,
    )?;
    if encoding != doom3::ENCODING {
        reading
            .packet
            .map_strings(&|text| match doom3::ENCODING.encode(text) {
                Some(bytes) => encoding.decode_lossy(&bytes).into_owned(),
                None => text.to_owned(),
            });
    }
    Ok((reading, notes))
}

/// Minecraft Java bytes of one direction, each file a run of frames: the client's (the
/// handshake, then status requests and pings; or a legacy ping) or the server's (status
/// responses and pongs; or a legacy kick, with its text read as a status).
fn decode_minecraft(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::Minecraft,
        forced,
        || minecraft_client_frames(bytes),
        || minecraft_server_frames(bytes),
        PacketKind::Reply,
    )
}

fn minecraft_client_frames(bytes: &[u8]) -> Attempt {
    match bytes {
        [0xfe] => return Ok(serialize(&serde_json::json!({ "legacy_ping": "beta 1.8" }))),
        [0xfe, 0x01] => return Ok(serialize(&serde_json::json!({ "legacy_ping": "1.4" }))),
        [0xfe, ..] => {
            return minecraft_legacy::PingHost::from_bytes(bytes)
                .map(|p| serialize(&serde_json::json!({ "legacy_ping": "1.6", "request": p })))
        }
        _ => {}
    }
    let mut reader = Reader::new(bytes);
    let mut packets = vec![serialize(&minecraft_java::HandshakeFrame::decode(
        &mut reader,
        (),
    )?)];
    while !reader.is_empty() {
        packets.push(serialize(&minecraft_java::StatusRequestFrame::decode(
            &mut reader,
            (),
        )?));
    }
    Ok(OrderedJson::Array(packets))
}

fn minecraft_server_frames(bytes: &[u8]) -> Attempt {
    if bytes.first() == Some(&0xff) {
        let kick = minecraft_legacy::Kick::from_bytes(bytes)?;
        let text = kick.text();
        let status = minecraft_legacy::LegacyStatus::parse(&text).ok();
        return Ok(serialize(
            &serde_json::json!({ "legacy_kick": text, "status": status }),
        ));
    }
    let mut reader = Reader::new(bytes);
    let mut packets = Vec::new();
    while !reader.is_empty() || packets.is_empty() {
        let frame = minecraft_java::StatusResponseFrame::decode(&mut reader, ())?;
        packets.push(serialize(&frame));
    }
    Ok(OrderedJson::Array(packets))
}

/// A Bedrock ping or pong; a pong's server string also read field by field (`server`, null
/// when it lacks the first six fields).
fn decode_bedrock(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::Bedrock,
        forced,
        || bedrock::UnconnectedPing::from_bytes(bytes).map(|r| serialize(&r)),
        || {
            bedrock::UnconnectedPong::from_bytes(bytes).map(|pong| {
                let text = pong.server_text();
                let server = bedrock::ServerId::parse(&text).ok();
                serialize(&serde_json::json!({ "pong": pong, "server": server }))
            })
        },
        PacketKind::Request,
    )
}

/// A Teeworlds / DDNet `gie3` request (either form) or one datagram of a reply (`inf3`,
/// `iext`, `iex+`); a Teeworlds 0.7 packet (first byte `04` or `21`): the token request or
/// reply, the info request or reply.
fn decode_teeworlds(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let seven = matches!(
        datagram.bytes.first(),
        Some(&teeworlds::seven::CONTROL | &teeworlds::seven::CONNLESS)
    );
    if seven {
        choose_declared::<teeworlds::seven::Request, teeworlds::seven::Reply<'_>>(
            datagram,
            Protocol::Teeworlds,
            forced,
            PacketKind::Reply,
        )
    } else {
        choose_declared::<teeworlds::Request, teeworlds::Reply<'_>>(
            datagram,
            Protocol::Teeworlds,
            forced,
            PacketKind::Reply,
        )
    }
}

/// A Mumble ping (12 bytes) or pong (24 bytes).
fn decode_mumble(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    choose_declared::<mumble::Ping, mumble::Pong>(
        datagram,
        Protocol::Mumble,
        forced,
        PacketKind::Reply,
    )
}

/// An Unreal 2 request (5 bytes) or reply datagram (details, rules or players, by its
/// header). Strings print as their text: Latin-1, or UTF-16 by the length byte.
fn decode_unreal2(datagram: &Datagram, forced: Option<PacketKind>) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    choose(
        datagram,
        Protocol::Unreal2,
        forced,
        || unreal2::Request::from_bytes(bytes).map(|r| serialize(&r)),
        || unreal2::Reply::decode(bytes).map(|r| serialize(&r)),
        // A request is 5 bytes with version 0x78 or 0x79; a reply's is 0x80.
        PacketKind::Reply,
    )
}

/// GameSpy 3/4 datagrams. Several reply parts (type byte `00`: requests start with `FE FD`,
/// challenge replies with `09`) are put together into their reply, in part order, as the
/// client joins them; a part that does not decode fails with its file named. A reply with a
/// part missing is printed as far as it goes, `complete: false` and its `missing_parts`
/// listed, with a note. Everything else, and a lone part, is decoded datagram by datagram.
fn decode_gamespy3_datagrams(
    datagrams: &[Datagram],
    protocol: Protocol,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<(Body, Vec<String>)> {
    let decode = |d: &Datagram| decode_gamespy3(d, protocol, forced, encoding);
    let (parts, others): (Vec<&Datagram>, Vec<&Datagram>) = datagrams
        .iter()
        .partition(|d| d.bytes.first() == Some(&gamespy3::KIND_QUERY));
    if parts.len() < 2 {
        return each_datagram(datagrams, decode);
    }
    if forced == Some(PacketKind::Request) {
        return Err(Failure::usage(
            "reply parts are parts of a reply, not requests",
        ));
    }
    let mut reassembly = gamespy3::Reassembly::new();
    let mut notes = Vec::new();
    for part in &parts {
        let pushed = reassembly.push(&part.bytes).map_err(|e| {
            Failure::new(
                Category::Malformed,
                format!("{}: malformed {protocol} reply part: {e}", part.name()),
            )
        })?;
        match pushed {
            gamespy3::Pushed::New => {}
            gamespy3::Pushed::Duplicate => {
                notes.push(format!("{}: a part given twice, left out", part.name()))
            }
            gamespy3::Pushed::OtherSession => notes.push(format!(
                "{}: a part of another session (different session id), left out",
                part.name()
            )),
        }
    }
    let assembled = reassembly.reply().map_err(|e| {
        Failure::new(
            Category::Malformed,
            format!("malformed {protocol} reply (its parts joined in part order): {e}"),
        )
    })?;
    notes.push(format!(
        "{} parts joined into one reply",
        reassembly.parts_received()
    ));
    if !assembled.complete {
        let missing = &assembled.missing_parts;
        notes.push(if missing.is_empty() {
            "the reply is incomplete: its last part is missing".to_owned()
        } else {
            format!("the reply is incomplete: parts {missing:?} are missing")
        });
    }
    let mut joined = Reading {
        file: None,
        kind: PacketKind::Reply.name(),
        chunks: None,
        packet: serialize(&assembled),
    };
    reread_strings(&mut joined.packet, encoding);
    if others.is_empty() {
        return Ok((Body::One(joined), notes));
    }
    let mut readings = Vec::with_capacity(others.len() + 1);
    for datagram in others {
        let (mut reading, more) = decode(datagram)?;
        reading.file = Some(datagram.name());
        readings.push(reading);
        notes.extend(more);
    }
    joined.file = Some("the joined reply".to_owned());
    readings.push(joined);
    Ok((
        Body::Many {
            datagrams: readings,
        },
        notes,
    ))
}

/// A GameSpy 3/4 request, challenge reply or reply part, its text read in `encoding` as for
/// SA:MP.
fn decode_gamespy3(
    datagram: &Datagram,
    protocol: Protocol,
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<Decoded> {
    let bytes = &datagram.bytes;
    read_in(
        choose(
            datagram,
            protocol,
            forced,
            || gamespy3::Request::from_bytes(bytes).map(|r| serialize(&r)),
            || {
                if bytes.first() == Some(&gamespy3::KIND_CHALLENGE) {
                    gamespy3::ChallengeReply::from_bytes(bytes).map(|r| serialize(&r))
                } else {
                    gamespy3::Part::from_bytes(bytes).map(|r| serialize(&r))
                }
            },
            PacketKind::Request,
        ),
        encoding,
    )
}

/// A reading whose text was decoded as Windows-1252, every string read again in `encoding`
/// (see [`reread`]).
fn read_in(decoded: Outcome<Decoded>, encoding: TextEncoding) -> Outcome<Decoded> {
    let (mut reading, notes) = decoded?;
    reread_strings(&mut reading.packet, encoding);
    Ok((reading, notes))
}

/// Every string of `packet`, decoded as Windows-1252, read again in `encoding`.
fn reread_strings(packet: &mut OrderedJson, encoding: TextEncoding) {
    if encoding != TextEncoding::Windows1252 {
        packet.map_strings(&|text| reread(text, encoding));
    }
}

/// SA:MP text serializes as Windows-1252. That code page (as WHATWG and encoding_rs define
/// it) gives every byte a distinct character, so encoding a JSON string back to 1252 recovers
/// the wire bytes exactly, which are then read in the chosen encoding. Every string in a
/// SA:MP or A2S packet is such text (A2S's one `&str`, the INFO request's payload, is ASCII).
fn reread(text: &str, encoding: TextEncoding) -> String {
    match TextEncoding::Windows1252.encode(text) {
        Some(bytes) => encoding.decode_lossy(&bytes).into_owned(),
        None => text.to_owned(),
    }
}

// ---------------------------------------------------------------------------------------------
// GameSpy v1

fn decode_gamespy1(
    datagrams: &[Datagram],
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<(Body, Vec<String>)> {
    let reply = || gamespy1_reply(datagrams, encoding);
    if let [only] = datagrams {
        let bytes = &only.bytes;
        // Any key/value text is a valid reply; a request is one made only of query keywords.
        let requests = gamespy1::Request::decode_all(bytes).and_then(|queries| {
            // No query at all (empty input) is no request, as no pair is no reply.
            if queries.is_empty() {
                Err(query_wire::Error::new(
                    query_wire::ErrorKind::UnexpectedEnd { need: 1, have: 0 },
                    0,
                )
                .in_field("Request"))
            } else {
                Ok(queries)
            }
        });
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
        let (reading, notes) = choose(
            only,
            Protocol::GameSpy1,
            forced,
            || requests.map(|r| serialize(&r)),
            reply,
            prefer,
        )?;
        return Ok((Body::One(reading), notes));
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
    let reading = Reading {
        file: None,
        kind: PacketKind::Reply.name(),
        chunks: None,
        packet: value,
    };
    Ok((Body::One(reading), Vec::new()))
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

// ---------------------------------------------------------------------------------------------
// A2S

/// Whole packets one by one; split parts (`FE FF FF FF`) put together into their reply first.
/// A player list is read with the app id of an INFO reply among the files (The Ship's list
/// differs), 0 without one.
fn decode_a2s(
    datagrams: &[Datagram],
    forced: Option<PacketKind>,
    encoding: TextEncoding,
) -> Outcome<(Body, Vec<String>)> {
    let app_id = datagrams
        .iter()
        .find_map(|d| match a2s::Reply::from_bytes_with(&d.bytes, 0) {
            Ok(a2s::Reply::Info(info)) => Some(info.app_id),
            _ => None,
        })
        .unwrap_or(0);
    let (parts, whole): (Vec<&Datagram>, Vec<&Datagram>) = datagrams
        .iter()
        .partition(|d| d.bytes.starts_with(a2s::SPLIT_BYTES));
    let mut joined = Vec::new();
    let mut notes = Vec::new();
    if !parts.is_empty() {
        if forced == Some(PacketKind::Request) {
            return Err(Failure::usage(
                "split parts are parts of a reply, not requests",
            ));
        }
        let bytes = a2s_joined(&parts)?;
        notes.push(format!(
            "{} split parts joined into one {}-byte reply",
            parts.len(),
            bytes.len()
        ));
        joined.push(Datagram {
            source: PathBuf::from("the joined reply"),
            bytes,
        });
    }
    let decode = |d: &Datagram| {
        let bytes = &d.bytes;
        read_in(
            choose(
                d,
                Protocol::A2s,
                forced,
                || a2s::Request::from_bytes(bytes).map(|r| serialize(&r)),
                || a2s::Reply::from_bytes_with(bytes, app_id).map(|r| serialize(&r)),
                // The type byte tells them apart; both cannot decode.
                PacketKind::Reply,
            ),
            encoding,
        )
    };
    let all: Vec<Datagram> = whole
        .into_iter()
        .map(|d| Datagram {
            source: d.source.clone(),
            bytes: d.bytes.clone(),
        })
        .chain(joined)
        .collect();
    let (body, more) = each_datagram(&all, decode)?;
    notes.extend(more);
    Ok((body, notes))
}

/// The reply the split parts make, or why they make none.
fn a2s_joined(parts: &[&Datagram]) -> Outcome<Vec<u8>> {
    let mut reassembly = a2s::Reassembly::new();
    for part in parts {
        match reassembly.push(&part.bytes) {
            Ok(Some(whole)) => return Ok(whole),
            Ok(None) => {}
            Err(e) => {
                return Err(Failure::new(
                    Category::Malformed,
                    format!("{}: malformed a2s split part: {e}", part.name()),
                ))
            }
        }
    }
    let missing = reassembly.missing_parts();
    let why = if missing.is_empty() {
        "the first part (number 0) is missing, or the parts belong to different replies".to_owned()
    } else {
        format!("parts {missing:?} are missing")
    };
    Err(Failure::new(
        Category::Malformed,
        format!("the a2s split reply is incomplete: {why}"),
    )
    .hint("give every part of the reply; --status shows what a client makes of the rest"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Encode;

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
        assert_eq!(reread(&as_1252, TextEncoding::Windows1251), "Привет");
        assert_eq!(reread("plain", TextEncoding::Utf8), "plain");
    }

    #[test]
    fn a_found_chunk_set_is_named_with_what_it_lacks() {
        let note = found_chunks_note("r.bin", sqp::ChunkSet::SERVER_INFO | sqp::ChunkSet::METRICS);
        assert_eq!(
            note,
            "r.bin: the reply holds chunks info,metrics (not rules,players,teams); --chunks sets them"
        );
        let payload = sqp::Chunks::default()
            .to_vec_with(sqp::ChunkSet::empty())
            .unwrap();
        assert_eq!(chunk_set_of(&payload, None), Ok(sqp::ChunkSet::empty()));
        assert!(found_chunks_note("x", sqp::ChunkSet::empty()).contains("chunks none"));
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
        let err = parse_hex(Path::new("x"), "00 0é".as_bytes()).unwrap_err();
        assert!(
            err.message().contains("'é' is not a hex digit (digit 4"),
            "{err}"
        );
        let err = parse_hex(Path::new("x"), b"0a\xff").unwrap_err();
        assert!(err.message().contains("byte 0xff"), "{err}");
        assert!(parse_hex(Path::new("x"), b"abc")
            .unwrap_err()
            .message()
            .contains("odd"));
    }
}
