//! `gsq decode` of a pcap or pcapng capture: the UDP datagrams to and from the protocol's
//! port, each decoded by its direction, or with `--status` one status per client; for a TCP
//! protocol (Minecraft Java), with `--status`, the status each connection's client read.

use std::fs;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use query_net::Protocol;
use query_specs::a2s;

use super::{
    decode_datagrams, print_document, print_status, replay_failure, replayed_status, Body, Datagram,
};
use crate::cli::{DecodeArgs, PacketKind};
use crate::exit::{Category, Failure, Outcome};
use crate::pcap;

/// The whole file if it is a pcap or pcapng capture; `None` for anything else (stdin
/// included), which is read as a datagram.
pub(super) fn read_if_capture(path: &Path) -> Outcome<Option<Vec<u8>>> {
    if path.as_os_str() == "-" {
        return Ok(None);
    }
    let unreadable = |e: io::Error| {
        Failure::usage(format!("cannot read {}: {e}", path.display())).hint("check the file name")
    };
    let mut file = fs::File::open(path).map_err(unreadable)?;
    let mut head = Vec::with_capacity(4);
    (&mut file)
        .take(4)
        .read_to_end(&mut head)
        .map_err(unreadable)?;
    if !pcap::is_capture(&head) {
        return Ok(None);
    }
    let mut bytes = head;
    file.take(pcap::MAX_CAPTURE)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > pcap::MAX_CAPTURE {
        return Err(Failure::usage(format!(
            "{}: captures over {} MiB are not read; cut it with editcap or a capture filter",
            path.display(),
            pcap::MAX_CAPTURE >> 20
        )));
    }
    Ok(Some(bytes))
}

/// `gsq decode P capture.pcap`: the UDP datagrams to and from the protocol's port, each
/// decoded, or with `--status` one status per server and client.
pub(super) fn decode_capture(args: &DecodeArgs, path: &Path, bytes: &[u8], quiet: bool) -> Outcome {
    let port = args.port.unwrap_or(args.protocol.default_port());
    let capture = pcap::read(bytes)
        .map_err(|e| Failure::new(Category::Malformed, format!("{}: {e}", path.display())))?;
    if args.protocol.is_stream() {
        return stream_statuses(args, path, &capture, port);
    }
    let datagrams: Vec<&pcap::Captured> = capture
        .datagrams
        .iter()
        .filter(|d| d.source.port() == port || d.destination.port() == port)
        .collect();
    if datagrams.is_empty() {
        return Err(Failure::new(
            Category::Malformed,
            format!(
                "{}: no UDP datagram to or from port {port} ({} UDP datagrams, {} other packets)",
                path.display(),
                capture.datagrams.len(),
                capture.skipped
            ),
        )
        .hint("--port names the server's port"));
    }
    if let Some(cut) = &capture.cut {
        if !quiet {
            eprintln!(
                "gsq: note: {}: {cut}; the packets before it are read",
                path.display()
            );
        }
    }
    if args.status {
        return capture_statuses(args, &datagrams);
    }
    let mut readings = Vec::with_capacity(datagrams.len());
    let mut notes = Vec::new();
    let mut first_failure = None;
    for group in reply_groups(args.protocol, port, &datagrams) {
        let [captured, ..] = group.as_slice() else {
            continue;
        };
        // The direction says what it is: from the server's port, a reply.
        let kind = if captured.source.port() == port {
            PacketKind::Reply
        } else {
            PacketKind::Request
        };
        let numbers: Vec<String> = group.iter().map(|d| d.number.to_string()).collect();
        let name = format!(
            "{}#{} {} > {}",
            path.display(),
            numbers.join("+"),
            captured.source,
            captured.destination
        );
        // Notes and errors name a lone datagram as the reading does, a part by its number.
        let parts: Vec<Datagram> = group
            .iter()
            .map(|d| Datagram {
                source: PathBuf::from(if group.len() == 1 {
                    name.clone()
                } else {
                    format!("{}#{}", path.display(), d.number)
                }),
                bytes: d.payload.clone(),
            })
            .collect();
        let one = DecodeArgs {
            as_kind: Some(kind),
            ..args.clone()
        };
        // One port may answer several protocols: a datagram of another is a note, not the end.
        let (body, more) = match decode_datagrams(&one, &parts) {
            Ok(decoded) => decoded,
            Err(failure) => {
                notes.push(failure.to_string());
                first_failure.get_or_insert(failure);
                continue;
            }
        };
        notes.extend(more);
        match body {
            Body::One(mut reading) => {
                reading.file = Some(name);
                readings.push(reading);
            }
            Body::Many { datagrams } => readings.extend(datagrams),
        }
    }
    if readings.is_empty() {
        if let Some(failure) = first_failure {
            return Err(failure);
        }
    }
    print_document(
        args,
        Body::Many {
            datagrams: readings,
        },
        &notes,
        quiet,
    )
}

/// The datagrams of a capture in the groups decoded together, in capture order (a group where
/// its first datagram is): the split parts of one A2S reply (same server, client and reply
/// id) make one group, as the client joins them; every other datagram is a group of its own.
/// A reply whose parts are not all in the capture is still one group, whose decode says which
/// parts are missing.
fn reply_groups<'a>(
    protocol: Protocol,
    port: u16,
    datagrams: &[&'a pcap::Captured],
) -> Vec<Vec<&'a pcap::Captured>> {
    let mut groups: Vec<Vec<&pcap::Captured>> = Vec::new();
    // Each split reply's (server, client, id) and the index of its group.
    let mut split: Vec<(SplitReply, usize)> = Vec::new();
    for &datagram in datagrams {
        let key = (protocol == Protocol::A2s && datagram.source.port() == port)
            .then(|| a2s_split_id(&datagram.payload))
            .flatten()
            .map(|id| (datagram.source, datagram.destination, id));
        match key {
            Some(key) => match split.iter().find(|(k, _)| *k == key) {
                Some(&(_, group)) => groups[group].push(datagram),
                None => {
                    split.push((key, groups.len()));
                    groups.push(vec![datagram]);
                }
            },
            None => groups.push(vec![datagram]),
        }
    }
    groups
}

/// An A2S split reply: the server, the client and the reply id.
type SplitReply = (SocketAddr, SocketAddr, [u8; 4]);

/// The reply id of an A2S split part (`FE FF FF FF`, then the id), `None` for anything else.
fn a2s_split_id(payload: &[u8]) -> Option<[u8; 4]> {
    if !payload.starts_with(a2s::SPLIT_BYTES) {
        return None;
    }
    payload.get(4..8)?.try_into().ok()
}

/// A server's address and the address of a client of it.
type Exchange = (SocketAddr, SocketAddr);

/// One status per server address and client of it, one JSON line each: the replies of the
/// server to a client whose requests are this protocol's (one port may answer several
/// protocols). A client whose replies make no status is one error line on stderr, and the
/// exit code is then that of the first such error.
fn capture_statuses(args: &DecodeArgs, datagrams: &[&pcap::Captured]) -> Outcome {
    let port = args.port.unwrap_or(args.protocol.default_port());
    let asks_this_protocol = |client: SocketAddr, server: SocketAddr| {
        datagrams
            .iter()
            .filter(|d| d.source == client && d.destination == server)
            .any(|d| {
                let request = Datagram {
                    source: PathBuf::new(),
                    bytes: d.payload.clone(),
                };
                let as_request = DecodeArgs {
                    as_kind: Some(PacketKind::Request),
                    ..args.clone()
                };
                decode_datagrams(&as_request, std::slice::from_ref(&request)).is_ok()
            })
    };
    let mut exchanges: Vec<(Exchange, Vec<Vec<u8>>)> = Vec::new();
    for d in datagrams.iter().filter(|d| d.source.port() == port) {
        let key = (d.source, d.destination);
        match exchanges.iter_mut().find(|(k, _)| *k == key) {
            Some((_, replies)) => replies.push(d.payload.clone()),
            None if asks_this_protocol(d.destination, d.source) => {
                exchanges.push((key, vec![d.payload.clone()]));
            }
            None => {}
        }
    }
    if exchanges.is_empty() {
        return Err(Failure::new(
            Category::Malformed,
            format!(
                "no {} client in the capture got a reply from port {port}",
                args.protocol
            ),
        )
        .hint("--port names the server's port"));
    }
    let total = exchanges.len();
    let mut failed: Vec<Failure> = Vec::new();
    for ((server, client), replies) in exchanges {
        match replayed_status(args, server, &replies) {
            Ok(status) => print_status(&status, args.pretty)?,
            Err(e) => {
                let failure =
                    replay_failure(&format!("{} {server} to {client}", args.protocol), &e);
                eprintln!("gsq: error: {failure}");
                failed.push(failure);
            }
        }
    }
    match failed.first() {
        Some(first) => Err(Failure::new(
            first.category(),
            format!(
                "{} of {total} exchanges in the capture made no status",
                failed.len()
            ),
        )),
        None => Ok(()),
    }
}

/// `gsq decode minecraft capture.pcap --status`: the status each client read from the server
/// on `port`, from the server's side of each TCP connection put back in order. A connection
/// whose bytes stop short (a segment the capture missed) says where.
fn stream_statuses(args: &DecodeArgs, path: &Path, capture: &pcap::Capture, port: u16) -> Outcome {
    if !args.status {
        return Err(Failure::usage(format!(
            "{} runs over TCP: a capture of it is read with --status",
            args.protocol
        ))
        .hint("--status prints the status each client read from the server"));
    }
    let max_bytes = query_net::Options::default().max_reply_bytes;
    let streams = pcap::server_streams(&capture.segments, port, max_bytes);
    if streams.is_empty() {
        return Err(Failure::new(
            Category::Malformed,
            format!(
                "{}: no TCP data from port {port} ({} TCP segments, {} UDP datagrams, {} other packets)",
                path.display(),
                capture.segments.len(),
                capture.datagrams.len(),
                capture.skipped
            ),
        )
        .hint("--port names the server's port"));
    }
    let total = streams.len();
    let mut failed: Vec<Failure> = Vec::new();
    for stream in streams {
        match replayed_status(args, stream.source, std::slice::from_ref(&stream.bytes)) {
            Ok(status) => print_status(&status, args.pretty)?,
            Err(e) => {
                let what = format!(
                    "{} {} to {}",
                    args.protocol, stream.source, stream.destination
                );
                let mut failure = replay_failure(&what, &e);
                if let Some(stops) = &stream.stops {
                    failure = failure.hint(format!("the capture is not whole: {stops}"));
                }
                eprintln!("gsq: error: {failure}");
                failed.push(failure);
            }
        }
    }
    match failed.first() {
        Some(first) => Err(Failure::new(
            first.category(),
            format!(
                "{} of {total} connections in the capture made no status",
                failed.len()
            ),
        )),
        None => Ok(()),
    }
}
