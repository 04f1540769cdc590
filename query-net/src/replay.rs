//! What a client would have returned had some reply datagrams arrived: `gsq decode --status`.
//!
//! The real client session runs on a virtual clock, and each request it sends is answered
//! with the given datagrams that answer that kind of request, in any order and as often as it
//! asks. The bytes a server copies from the request (SQP's challenge, SA:MP's 11-byte header,
//! OneQuery's request id) are written from the session's own request, as the server would
//! have echoed them; nothing else is changed. Datagrams that answer nothing the session asks
//! are never delivered, and a missing one makes the session do what it does on a real
//! network: retry until its attempts run out, then return a partial status or the error.
//!
//! ```
//! use query_net::{replay, Options, Protocol};
//!
//! // A GameSpy v1 reply in one datagram.
//! let reply = b"\\hostname\\Lobby\\mapname\\dm1\\numplayers\\0\\maxplayers\\8\\final\\\\queryid\\1.1".to_vec();
//! let target = "127.0.0.1:7778".parse().unwrap();
//! let status = replay::status_from_replies(Protocol::GameSpy1, target, &[reply], &Options::default())?;
//! assert_eq!(status.name, "Lobby");
//! assert!(status.complete);
//! # Ok::<(), query_net::QueryError>(())
//! ```

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use query_specs::a2s;
use query_specs::bedrock;
use query_specs::gamespy2;
use query_specs::gamespy3;
use query_specs::mumble;
use query_specs::onequery::{self, ReplyBody};
use query_specs::samp;
use query_specs::sqp;
use query_specs::teeworlds;
use query_specs::teeworlds::seven;
use query_specs::unreal2;
use query_wire::{Decode, Encode};

use crate::engine::ClientSession;
use crate::engines;
use crate::error::QueryError;
use crate::options::Options;
use crate::protocol::Protocol;
use crate::status::ServerStatus;

/// The most timeouts a replay handles; sessions end far sooner, this only
/// bounds a session that never would.
const MAX_STEPS: usize = 10_000;

/// SA:MP replies start with the request's header: `SAMP`, address, port and opcode.
const SAMP_HEADER: std::ops::Range<usize> = 0..samp::HEADER_LEN;

/// The status the client session of `protocol` returns when its requests to `target` are
/// answered with `replies` (one datagram each, in any order). For the streams (Minecraft's
/// status ping, Frostbite, TeamSpeak 3), `replies` are the server's bytes in the order they
/// were read, split anywhere ([`status_from_stream`](crate::engines::minecraft::status_from_stream)
/// and its namesakes in [`frostbite`](crate::engines::frostbite::status_from_stream) and
/// [`teamspeak3`](crate::engines::teamspeak3::status_from_stream)).
pub fn status_from_replies(
    protocol: Protocol,
    target: SocketAddr,
    replies: &[Vec<u8>],
    options: &Options,
) -> Result<ServerStatus, QueryError> {
    let pieces: Vec<&[u8]> = replies.iter().map(Vec::as_slice).collect();
    match protocol {
        Protocol::Minecraft => {
            return engines::minecraft::status_from_stream(target, &pieces, options)
        }
        Protocol::Frostbite => return engines::frostbite::status_from_stream(target, &pieces),
        Protocol::TeamSpeak3 => return engines::teamspeak3::status_from_stream(target, &pieces),
        _ => {}
    }
    replay_spaced(protocol, target, replies, Duration::ZERO, options).result
}

/// What [`replay_spaced`] returns: the session's result and when, on the virtual clock, it
/// came.
#[derive(Debug)]
pub struct Replayed {
    /// The status or error the session returned.
    pub result: Result<ServerStatus, QueryError>,
    /// The virtual time from the first send to the result.
    pub took: Duration,
}

/// Like [`status_from_replies`], but the answers to each request arrive one every `gap`, the
/// first `gap` after the request (all at once when `gap` is zero): a server that drips reply
/// parts or pages, or answers late, as the query's deadline ([`Options::deadline`]) and
/// timeouts see it. Answers still on their way when the session sends again are delivered too.
///
/// ```
/// use std::time::Duration;
/// use query_net::{replay, Options, Protocol};
///
/// // Parts one every 400 ms that never end: the query is left at its 1 s deadline.
/// let parts: Vec<Vec<u8>> = (1..=10)
///     .map(|n| format!("\\hostname\\drip\\p{n}\\x\\queryid\\1.{n}").into_bytes())
///     .collect();
/// let options = Options { deadline: Duration::from_secs(1), ..Options::default() };
/// let target = "127.0.0.1:7778".parse().unwrap();
/// let replayed = replay::replay_spaced(Protocol::GameSpy1, target, &parts, Duration::from_millis(400), &options);
/// assert_eq!(replayed.took, Duration::from_secs(1));
/// assert!(!replayed.result?.complete);
/// # Ok::<(), query_net::QueryError>(())
/// ```
pub fn replay_spaced(
    protocol: Protocol,
    target: SocketAddr,
    replies: &[Vec<u8>],
    gap: Duration,
    options: &Options,
) -> Replayed {
    let t0 = Instant::now();
    let mut session = match engines::new_session(protocol, target, options) {
        Ok(session) => session,
        Err(error) => {
            return Replayed {
                result: Err(error),
                took: Duration::ZERO,
            }
        }
    };
    let answering = Answering::new(protocol, replies);
    let mut now = t0;
    // Answers on their way, by arrival time (ties in the order they were sent).
    let mut pending: VecDeque<(Instant, Vec<u8>)> = VecDeque::new();
    let mut steps = 0;
    while steps < MAX_STEPS {
        while let Some(request) = session.poll_transmit(now) {
            let request = request.to_vec();
            let mut at = now;
            for reply in answering.answers(&request) {
                if gap.is_zero() {
                    session.handle_datagram(target, &reply, now);
                } else {
                    at += gap;
                    let place = pending.partition_point(|(t, _)| *t <= at);
                    pending.insert(place, (at, reply));
                }
            }
        }
        if let Some(result) = session.poll_result() {
            return Replayed {
                result,
                took: now - t0,
            };
        }
        let Some(wake) = session.poll_timeout() else {
            break;
        };
        match pending.front() {
            Some((at, _)) if *at <= wake => {
                let (at, reply) = pending.pop_front().expect("a front was seen");
                now = at.max(now);
                session.handle_datagram(target, &reply, now);
            }
            _ => {
                steps += 1;
                now = wake.max(now);
                session.handle_timeout(now);
            }
        }
    }
    Replayed {
        result: Err(QueryError::protocol(
            "the client session did not finish on the replies given",
        )),
        took: now - t0,
    }
}

/// Picks the replies that answer a request, with the echoed bytes written in.
#[derive(Debug)]
struct Answering<'a> {
    protocol: Protocol,
    replies: &'a [Vec<u8>],
}

impl<'a> Answering<'a> {
    fn new(protocol: Protocol, replies: &'a [Vec<u8>]) -> Self {
        Answering { protocol, replies }
    }

    fn answers(&self, request: &[u8]) -> Vec<Vec<u8>> {
        match self.protocol {
            Protocol::Sqp => self.sqp(request),
            Protocol::Samp => self.samp(request),
            Protocol::OneQuery => self.onequery(request),
            // Parts carry no echo of the request; every datagram is a part.
            Protocol::GameSpy1 => self.replies.to_vec(),
            Protocol::A2s => self.a2s(request),
            // A status reply echoes nothing of the request; every datagram answers it.
            Protocol::Quake3 | Protocol::Quake2 => self.replies.to_vec(),
            // The challenge is random: each reply is given the request's (see `fivem`).
            Protocol::Fivem => self.fivem(request),
            Protocol::Doom3 => self.doom3(request),
            Protocol::GameSpy2 => self.gamespy2(request),
            Protocol::GameSpy3 | Protocol::MinecraftQuery => self.gamespy3(request),
            Protocol::Bedrock => self.bedrock(request),
            Protocol::Teeworlds => self.teeworlds(request),
            Protocol::Mumble => self.mumble(request),
            // A reply echoes nothing of the request; every datagram answers it.
            Protocol::Ase => self.replies.to_vec(),
            Protocol::Unreal2 => self.unreal2(request),
            // A stream: `replay_spaced` fails before asking (see `status_from_replies`).
            Protocol::Minecraft | Protocol::Frostbite | Protocol::TeamSpeak3 => Vec::new(),
        }
    }

    /// FiveM: every reply with its `\challenge\` value replaced by the request's (a capture
    /// holds the challenge of the client that captured it; the client checks the echo).
    fn fivem(&self, request: &[u8]) -> Vec<Vec<u8>> {
        const KEY: &[u8] = b"\\challenge\\";
        let Ok(request) = query_specs::quake3::Request::decode(request) else {
            return Vec::new();
        };
        let challenge = request.challenge().unwrap_or_default();
        self.replies
            .iter()
            .map(|reply| {
                let Some(at) = reply.windows(KEY.len()).position(|w| w == KEY) else {
                    return reply.clone();
                };
                let start = at + KEY.len();
                let end = reply[start..]
                    .iter()
                    .position(|&b| b == b'\\' || b == b'\n')
                    .map_or(reply.len(), |n| start + n);
                [&reply[..start], challenge, &reply[end..]].concat()
            })
            .collect()
    }

    /// Doom 3 engine: every reply with the request's challenge written where its header says
    /// the echo goes (after ETQW's task id).
    fn doom3(&self, request: &[u8]) -> Vec<Vec<u8>> {
        use query_specs::doom3::{GetInfo, INFO_EX_HEADER, INFO_HEADER};
        let Ok(request) = GetInfo::from_bytes(request) else {
            return Vec::new();
        };
        let Some(challenge) = request.challenge.first_chunk::<4>() else {
            return Vec::new();
        };
        self.replies
            .iter()
            .map(|r| {
                let at = if r.starts_with(INFO_EX_HEADER) {
                    INFO_EX_HEADER.len() + 4
                } else {
                    INFO_HEADER.len()
                };
                with_echo(r, at..at + 4, challenge)
            })
            .collect()
    }

    /// Bedrock: every pong, with the ping's time written in (the echo the client checks).
    fn bedrock(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let Ok(ping) = bedrock::UnconnectedPing::from_bytes(request) else {
            return Vec::new();
        };
        let time = ping.time.to_be_bytes();
        self.replies
            .iter()
            .map(|r| with_echo(r, BEDROCK_TIME, &time))
            .collect()
    }

    /// Teeworlds / DDNet: every datagram but 0.7's, with the request's token written in
    /// through the declaration (it is decimal text, of any width): the whole token in DDNet's
    /// extended replies, its low byte in `inf3`, as the servers echo it. A datagram that does
    /// not decode is delivered as it is, for the session to report. 0.7's requests are
    /// answered by [`teeworlds_seven`](Self::teeworlds_seven).
    fn teeworlds(&self, request: &[u8]) -> Vec<Vec<u8>> {
        if let Ok(request) = seven::Request::from_bytes(request) {
            return self.teeworlds_seven(request);
        }
        let Ok(request) = teeworlds::Request::from_bytes(request) else {
            return Vec::new();
        };
        let token = request.token();
        let retokened = |bytes: &[u8]| -> Option<Vec<u8>> {
            let mut reply = teeworlds::Reply::from_bytes(bytes).ok()?;
            let echoed = match reply {
                teeworlds::Reply::Info(_) => token & 0xff,
                _ => token,
            };
            *reply.token_mut() = echoed;
            reply.to_vec().ok()
        };
        self.replies
            .iter()
            .filter(|r| !is_seven(r))
            .map(|r| retokened(r).unwrap_or_else(|| r.clone()))
            .collect()
    }

    /// Teeworlds 0.7: the token request gets the token replies given, with its token written
    /// in, or, when only info replies were given, the token reply the server sent before them
    /// (its token is in their headers); the info request gets the info replies, with the
    /// request's two tokens written in. A 0.7 datagram that does not decode answers the info
    /// request as it is, for the session to report.
    fn teeworlds_seven(&self, request: seven::Request) -> Vec<Vec<u8>> {
        let decoded = || {
            self.replies
                .iter()
                .filter_map(|r| seven::Reply::from_bytes(r).ok())
        };
        match request {
            seven::Request::Token(request) => {
                let token_reply = |server_token| {
                    seven::Reply::Token(seven::TokenReply {
                        client_token: request.client_token,
                        server_token,
                        ..seven::TokenReply::default()
                    })
                };
                let given: Vec<u32> = decoded()
                    .filter_map(|r| match r {
                        seven::Reply::Token(t) => Some(t.server_token),
                        seven::Reply::Info(_) => None,
                    })
                    .collect();
                let server_tokens = if given.is_empty() {
                    decoded()
                        .find_map(|r| match r {
                            seven::Reply::Info(info) => Some(info.server_token),
                            seven::Reply::Token(_) => None,
                        })
                        .into_iter()
                        .collect()
                } else {
                    given
                };
                server_tokens
                    .into_iter()
                    .filter_map(|token| token_reply(token).to_vec().ok())
                    .collect()
            }
            seven::Request::Info(request) => self
                .replies
                .iter()
                .filter(|r| r.first() == Some(&seven::CONNLESS))
                .map(|r| match seven::Reply::from_bytes(r) {
                    Ok(seven::Reply::Info(mut info)) => {
                        info.client_token = request.client_token;
                        info.token = request.token;
                        seven::Reply::Info(info)
                            .to_vec()
                            .unwrap_or_else(|_| r.clone())
                    }
                    _ => r.clone(),
                })
                .collect(),
        }
    }

    /// Unreal 2: the replies whose header names the kind asked for (a capture holds the
    /// details, rules and players datagrams together).
    fn unreal2(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let Ok(request) = unreal2::Request::from_bytes(request) else {
            return Vec::new();
        };
        self.replies
            .iter()
            .filter(|r| {
                unreal2::Header::from_bytes_with(r.get(..5).unwrap_or_default(), ())
                    .is_ok_and(|h| request.query.answered_by(h.kind))
            })
            .cloned()
            .collect()
    }

    /// Mumble: every pong, with the ping's ident written in.
    fn mumble(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let Ok(ping) = mumble::Ping::from_bytes(request) else {
            return Vec::new();
        };
        let ident = ping.ident.to_be_bytes();
        self.replies
            .iter()
            .map(|r| with_echo(r, mumble::Pong::IDENT_RANGE, &ident))
            .collect()
    }

    /// The replies that decode as the sections `request` asks for, with its id written in; a
    /// request for everything that none answers gets the details-only replies, as the servers
    /// that answer only the first section send them.
    fn gamespy2(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let Ok(request) = gamespy2::Request::from_bytes(request) else {
            return Vec::new();
        };
        let id = request.request_id.to_be_bytes();
        let answering = |requested| -> Vec<Vec<u8>> {
            self.replies
                .iter()
                .filter(|r| gamespy2::Reply::from_bytes_with(r, requested).is_ok())
                .map(|r| with_echo(r, gamespy2::Reply::REQUEST_ID_RANGE, &id))
                .collect()
        };
        let answers = answering(request.requested());
        if answers.is_empty() && request.requested() == gamespy2::Requested::ALL {
            return answering(gamespy2::Requested::DETAILS);
        }
        answers
    }

    fn a2s(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let (wanted, challenged): (&[u8], bool) = match a2s::Request::from_bytes(request) {
            Ok(a2s::Request::Info(info)) => (
                &[a2s::KIND_INFO, a2s::KIND_INFO_DETAILED],
                info.challenge.is_some(),
            ),
            Ok(a2s::Request::Players(c)) => {
                (&[a2s::KIND_PLAYERS], c.challenge != a2s::NO_CHALLENGE)
            }
            Ok(a2s::Request::Rules(c)) => (&[a2s::KIND_RULES], c.challenge != a2s::NO_CHALLENGE),
            Err(_) => return Vec::new(),
        };
        let answers: Vec<Vec<u8>> = self
            .replies
            .iter()
            .filter(|r| match a2s_kind(r, self.replies) {
                Some(kind) => wanted.contains(&kind),
                // A part whose reply cannot be told: it joins nothing without its first part.
                None => r.starts_with(a2s::SPLIT_BYTES),
            })
            .cloned()
            .collect();
        if answers.iter().any(|r| a2s_kind(r, self.replies).is_some()) || challenged {
            return answers;
        }
        self.replies
            .iter()
            .filter(|r| a2s_kind(r, self.replies) == Some(a2s::KIND_CHALLENGE))
            .cloned()
            .collect()
    }

    /// GameSpy 3/4: a challenge request gets the challenge replies, a query the reply parts
    /// (or, without a challenge, the challenge replies when the server gave one), each with
    /// the request's session id.
    fn gamespy3(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let (session_id, kind) = match gamespy3::Request::from_bytes(request) {
            Ok(gamespy3::Request::Challenge(c)) => (c.session_id, gamespy3::KIND_CHALLENGE),
            Ok(gamespy3::Request::Query(q)) => {
                let challenged = self
                    .replies
                    .iter()
                    .any(|r| r.first() == Some(&gamespy3::KIND_CHALLENGE));
                if q.challenge().is_none() && challenged {
                    (q.session_id, gamespy3::KIND_CHALLENGE)
                } else {
                    (q.session_id, gamespy3::KIND_QUERY)
                }
            }
            Err(_) => return Vec::new(),
        };
        let id = session_id.to_be_bytes();
        let session = match kind {
            gamespy3::KIND_CHALLENGE => gamespy3::ChallengeReply::SESSION_ID_RANGE,
            _ => gamespy3::Part::SESSION_ID_RANGE,
        };
        self.replies
            .iter()
            .filter(|r| r.first() == Some(&kind) && r.len() >= session.end)
            .map(|r| with_echo(r, session.clone(), &id))
            .collect()
    }

    fn sqp(&self, request: &[u8]) -> Vec<Vec<u8>> {
        match sqp::Request::from_bytes(request) {
            Ok(sqp::Request::Challenge(_)) => self
                .replies
                .iter()
                .filter(|r| r.first() == Some(&0))
                .cloned()
                .collect(),
            Ok(sqp::Request::Query(query)) => {
                let challenge = sqp::QueryResponseHead::CHALLENGE_RANGE;
                self.replies
                    .iter()
                    .filter(|r| r.first() == Some(&1) && r.len() >= challenge.end)
                    .map(|r| with_echo(r, challenge.clone(), &query.challenge.to_be_bytes()))
                    .collect()
            }
            Err(_) => Vec::new(),
        }
    }

    fn samp(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let opcode_at = samp::Header::OPCODE_RANGE.start;
        let Some(&opcode) = request.get(opcode_at) else {
            return Vec::new();
        };
        self.replies
            .iter()
            .filter(|r| {
                r.len() >= SAMP_HEADER.end && r.starts_with(samp::MAGIC) && r[opcode_at] == opcode
            })
            .map(|r| {
                if opcode == b'p' {
                    // A ping is answered by echoing the request whole.
                    request.to_vec()
                } else {
                    with_echo(r, SAMP_HEADER, &request[SAMP_HEADER])
                }
            })
            .collect()
    }

    fn onequery(&self, request: &[u8]) -> Vec<Vec<u8>> {
        let Ok(parsed) = onequery::Request::from_bytes(request) else {
            return Vec::new();
        };
        let Some(query) = parsed.query else {
            return self
                .replies
                .iter()
                .filter(|r| {
                    matches!(
                        onequery::Reply::from_bytes(r),
                        Ok(onequery::Reply {
                            body: ReplyBody::Challenge(_),
                            ..
                        })
                    )
                })
                .cloned()
                .collect();
        };
        let id = query.request_id.to_le_bytes();
        let wants_players = parsed.kind == onequery::KIND_PLAYERS;
        self.replies
            .iter()
            .filter(|r| match onequery::Reply::from_bytes(r) {
                Ok(onequery::Reply {
                    body: ReplyBody::Query(reply),
                    ..
                }) => {
                    if reply.flags.contains(onequery::ReplyFlags::AUTH_REQUIRED) {
                        return true;
                    }
                    // A player page answers the PLAYERS request for its offset.
                    let page = reply.payload.iter().find_map(|p| match p {
                        onequery::Payload::PlayerList(list) => Some(list.offset),
                        _ => None,
                    });
                    match page {
                        Some(offset) => wants_players && offset == query.offset,
                        None => !wants_players,
                    }
                }
                _ => false,
            })
            .map(|r| with_echo(r, onequery::QUERY_REPLY_ID_RANGE, &id))
            .collect()
    }
}

/// The kind of reply an A2S datagram belongs to: its own for a whole packet, the joined
/// reply's for a part of a split one (found among `all`, by its reply id).
fn a2s_kind(datagram: &[u8], all: &[Vec<u8>]) -> Option<u8> {
    let kind_at = a2s::SINGLE_BYTES.len();
    if datagram.starts_with(a2s::SINGLE_BYTES) {
        return datagram.get(kind_at).copied();
    }
    let id_at = a2s::SourcePart::ID_RANGE;
    let id = datagram.get(id_at.clone())?;
    let mut parts = a2s::Reassembly::new();
    for part in all
        .iter()
        .filter(|d| d.starts_with(a2s::SPLIT_BYTES) && d.get(id_at.clone()) == Some(id))
    {
        if let Ok(Some(whole)) = parts.push(part) {
            return whole.get(kind_at).copied();
        }
    }
    parts.received_prefix()?.get(kind_at).copied()
}

/// `reply` with `range` replaced by `echo`.
/// Where a Bedrock pong echoes the ping's time.
const BEDROCK_TIME: std::ops::Range<usize> = 1..9;

fn with_echo(reply: &[u8], range: std::ops::Range<usize>, echo: &[u8]) -> Vec<u8> {
    let mut reply = reply.to_vec();
    if reply.len() >= range.end && echo.len() == range.len() {
        reply[range].copy_from_slice(echo);
    }
    reply
}

/// Whether `datagram` is a Teeworlds 0.7 packet (its first byte says so), not a 0.6 one.
fn is_seven(datagram: &[u8]) -> bool {
    matches!(datagram.first(), Some(&seven::CONTROL | &seven::CONNLESS))
}
