//! Reflection: how many bytes a responder sends to one netblock of forged sources, and how
//! that compares with what they send it.
//!
//! Sources spread over one /24 on loopback (127.0.5.x: all of 127.0.0.0/8 is loopback on
//! Linux) each send the same request at a fixed rate, as spoofed packets of an attack on that
//! /24 would arrive; every reply reaching them is counted. Meanwhile a client from another
//! netblock (127.0.0.1) polls the server with the real client and must get every answer. The
//! server state is the largest the protocols allow: 100 players with 255-byte names, 300 rules
//! with 255-byte names and values.
//!
//! "Before" runs the service as it was configured before byte budgets: the request limit per
//! address only, and datagrams up to the largest UDP payload.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use query_net::driver;
use query_net::engine::{ReplySink, Responder};
use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
use query_net::engines::onequery::OneQueryResponder;
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::engines::samp::{SampConfig, SampResponder};
use query_net::engines::sqp::SqpResponder;
use query_net::limit::{Stats, StatsSnapshot};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::{Options, Protocol};
use query_specs::teeworlds::seven;
use query_wire::Encode;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

/// One request an attacker repeats.
#[derive(Debug, Clone)]
pub struct Attack {
    /// The protocol answering it.
    pub protocol: Protocol,
    /// What it is, for the table.
    pub label: &'static str,
    /// The datagram.
    pub request: Vec<u8>,
}

fn samp_request(opcode: u8) -> Vec<u8> {
    let mut request = b"SAMP\x7f\x00\x00\x01\x61\x1e".to_vec();
    request.push(opcode);
    request
}

/// The largest reply an unproven source can draw from each protocol.
pub fn attacks() -> Vec<Attack> {
    let attack = |protocol, label, request: &[u8]| Attack {
        protocol,
        label,
        request: request.to_vec(),
    };
    vec![
        attack(Protocol::Samp, "SA:MP `d`", &samp_request(b'd')),
        attack(Protocol::Samp, "SA:MP `c`", &samp_request(b'c')),
        attack(Protocol::Samp, "SA:MP `r`", &samp_request(b'r')),
        attack(Protocol::GameSpy1, "GameSpy v1 `\\status\\`", b"\\status\\"),
        // Without a challenge these get only the challenge back.
        attack(Protocol::Sqp, "SQP challenge", &[0; 5]),
        attack(Protocol::OneQuery, "OneQuery challenge", b"ONEQUERY\x00"),
        attack(
            Protocol::A2s,
            "A2S INFO",
            b"\xff\xff\xff\xffTSource Engine Query\0",
        ),
        attack(
            Protocol::Quake3,
            "Quake 3 `getstatus`",
            b"\xff\xff\xff\xffgetstatus\n",
        ),
        attack(
            Protocol::Quake2,
            "Quake 2 `status`",
            b"\xff\xff\xff\xffstatus\n",
        ),
        attack(
            Protocol::Fivem,
            "FiveM `getinfo`",
            b"\xff\xff\xff\xffgetinfo x",
        ),
        attack(
            Protocol::Doom3,
            "Doom 3 `getInfo`",
            b"\xff\xffgetInfo\0PiNG",
        ),
        attack(
            Protocol::GameSpy2,
            "GameSpy 2 everything",
            b"\xfe\xfd\x00CORY\xff\xff\xff",
        ),
        // Without a challenge this gets only the challenge back.
        attack(
            Protocol::GameSpy3,
            "GameSpy 3 query",
            b"\xfe\xfd\x00\x01\x02\x03\x04\xff\xff\xff\x01",
        ),
        attack(
            Protocol::Teeworlds,
            "Teeworlds 0.6 `gie3`",
            b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffgie3\x05",
        ),
        attack(
            Protocol::Teeworlds,
            "DDNet extended `gie3`",
            b"xe\x12\x34\x00\x00\xff\xff\xff\xffgie3\x07",
        ),
        // 0.7: the token request gets only the token back; an info request carrying a token
        // the server did not give that address gets nothing.
        attack(
            Protocol::Teeworlds,
            "Teeworlds 0.7 token request",
            &seven::Request::token(9).to_vec().expect("a token request"),
        ),
        attack(
            Protocol::Teeworlds,
            "Teeworlds 0.7 info, guessed token",
            &seven::Request::info(1, 2, 3)
                .to_vec()
                .expect("an info request"),
        ),
        attack(Protocol::Mumble, "Mumble ping", &[0; 12]),
        attack(Protocol::Ase, "All-Seeing Eye `s`", b"s"),
        attack(
            Protocol::Unreal2,
            "Unreal 2 details",
            b"\x79\x00\x00\x00\x00",
        ),
        attack(Protocol::Unreal2, "Unreal 2 rules", b"\x79\x00\x00\x00\x01"),
        attack(
            Protocol::Unreal2,
            "Unreal 2 players",
            b"\x79\x00\x00\x00\x02",
        ),
        attack(
            Protocol::Unreal2,
            "Unreal 2 everything",
            b"\x78\x00\x00\x00\x03",
        ),
    ]
}

/// What the first request from an unknown source draws: one request from one source of a
/// netblock the server has not seen, with the defaults (the netblock's burst lets the whole
/// reply out), every datagram of the reply counted.
pub fn first_request(attack: &Attack) -> io::Result<Reflection> {
    let config = FloodConfig {
        sources: 1,
        per_source: 1,
        duration: Duration::from_millis(1),
        poll_every: Duration::ZERO,
    };
    flood(attack, Setup::After, config)
}

/// 100 players with 255-byte names and 300 rules with 255-byte names and values.
pub fn largest_state() -> ServerState {
    let long = |i: usize| format!("{i:03}{}", "x".repeat(252));
    ServerState {
        name: "Reflection Test Server".to_owned(),
        map: "Arena".to_owned(),
        game_type: "ffa".to_owned(),
        version: "1.0".to_owned(),
        max_players: 100,
        port: 7777,
        players: (0..100)
            .map(|i| PlayerState {
                name: long(i),
                score: 1000 + i as i64,
                ping: 30,
                ..PlayerState::default()
            })
            .collect(),
        rules: (0..300)
            .map(|i| (long(i), RuleValue::Text(long(i))))
            .collect(),
        ..ServerState::default()
    }
}

fn responder(protocol: Protocol, state: SharedState) -> Box<dyn Responder + Send> {
    match protocol {
        Protocol::Sqp => Box::new(SqpResponder::new(state)),
        Protocol::OneQuery => Box::new(OneQueryResponder::new(state)),
        Protocol::Samp => Box::new(SampResponder::new(state, SampConfig::default())),
        Protocol::GameSpy1 => Box::new(GameSpy1Responder::new(state, GameSpy1Config::default())),
        Protocol::A2s => Box::new(A2sResponder::new(state, A2sConfig::default())),
        Protocol::Quake3 => Box::new(Quake3Responder::new(state, Quake3Config::default())),
        Protocol::Doom3 => Box::new(query_net::engines::doom3::Doom3Responder::new(
            state,
            query_net::engines::doom3::Doom3Config::default(),
        )),
        Protocol::Fivem => Box::new(query_net::engines::fivem::FivemResponder::new(
            state,
            query_net::engines::fivem::FivemConfig::default(),
        )),
        Protocol::Quake2 => Box::new(query_net::engines::quake2::Quake2Responder::new(
            state,
            query_net::engines::quake2::Quake2Config::default(),
        )),
        Protocol::GameSpy2 => Box::new(GameSpy2Responder::new(state, GameSpy2Config::default())),
        Protocol::GameSpy3 | Protocol::MinecraftQuery => {
            Box::new(query_net::engines::gamespy3::GameSpy3Responder::new(
                state,
                query_net::engines::gamespy3::GameSpy3Config::default(),
            ))
        }
        Protocol::Minecraft | Protocol::Frostbite | Protocol::TeamSpeak3 => {
            unreachable!("{protocol} is TCP: no datagram responder")
        }
        Protocol::Bedrock => Box::new(query_net::engines::bedrock::BedrockResponder::new(
            state,
            query_net::engines::bedrock::BedrockConfig::default(),
        )),
        Protocol::Teeworlds => Box::new(query_net::engines::teeworlds::TeeworldsResponder::new(
            state,
            query_net::engines::teeworlds::TeeworldsConfig::default(),
        )),
        Protocol::Mumble => Box::new(query_net::engines::mumble::MumbleResponder::new(
            state,
            query_net::engines::mumble::MumbleConfig::default(),
        )),
        Protocol::Ase => Box::new(query_net::engines::ase::AseResponder::new(
            state,
            query_net::engines::ase::AseConfig::default(),
        )),
        Protocol::Unreal2 => Box::new(query_net::engines::unreal2::Unreal2Responder::new(
            state,
            query_net::engines::unreal2::Unreal2Config::default(),
        )),
    }
}

/// How the server is set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Setup {
    /// Requests per address only, datagrams up to 65,507 bytes: before byte budgets.
    Before,
    /// The defaults: byte budgets per netblock and in total, 1,400-byte datagrams.
    After,
}

/// A flood's shape.
#[derive(Debug, Clone, Copy)]
pub struct FloodConfig {
    /// Sources, 127.0.5.1 onwards (at most 254).
    pub sources: u8,
    /// Requests per second each source sends.
    pub per_source: u32,
    /// How long the flood lasts.
    pub duration: Duration,
    /// How often the client from another netblock queries (0: it does not).
    pub poll_every: Duration,
}

/// What a flood drew.
#[derive(Debug, Clone, Serialize)]
pub struct Reflection {
    /// The request.
    pub label: &'static str,
    /// The server's setup.
    pub setup: Setup,
    /// The request's size.
    pub request_bytes: usize,
    /// Requests sent over the flood.
    pub requests: u64,
    /// Reply datagrams that reached the sources.
    pub replies: u64,
    /// Their bytes (UDP payload).
    pub bytes_out: u64,
    /// The largest of them.
    pub largest_datagram: usize,
    /// How long the flood lasted, in seconds.
    pub seconds: f64,
    /// Reply bytes per second to the sources' /24.
    pub out_per_second: f64,
    /// Bytes out ÷ bytes in.
    pub amplification: f64,
    /// Queries the other client made, and how many were answered.
    pub client_queries: u32,
    /// See `client_queries`.
    pub client_answered: u32,
    /// The server's counters.
    pub stats: StatsSnapshot,
}

/// Floods a server answering `attack.protocol` from `config.sources` sources of 127.0.5.0/24.
pub fn flood(attack: &Attack, setup: Setup, config: FloodConfig) -> io::Result<Reflection> {
    let state = SharedState::new(largest_state());
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    socket.set_nonblocking(true)?;
    let server_addr = socket.local_addr()?;
    let mut service = Service::new(responder(attack.protocol, state));
    if setup == Setup::Before {
        service = service
            .reply_budget(None)
            .max_datagram(ReplySink::MAX_UDP_PAYLOAD);
    }
    let stats: Arc<Stats> = Arc::clone(service.stats());
    let shutdown = CancellationToken::new();
    let server = {
        let shutdown = shutdown.clone();
        thread::spawn(move || -> io::Result<()> {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let socket = tokio::net::UdpSocket::from_std(socket)?;
                driver::serve(&socket, &mut service, &shutdown).await
            })
        })
    };

    let client = (config.poll_every > Duration::ZERO).then(|| {
        let protocol = attack.protocol;
        let (duration, every) = (config.duration, config.poll_every);
        thread::spawn(move || poll(protocol, server_addr, duration, every))
    });

    let sockets = (1..=config.sources.max(1))
        .map(|i| {
            let socket = UdpSocket::bind((Ipv4Addr::new(127, 0, 5, i), 0))?;
            socket.set_nonblocking(true)?;
            Ok(socket)
        })
        .collect::<io::Result<Vec<_>>>()?;
    let interval = Duration::from_secs(1) / config.per_source.max(1);
    let mut buf = vec![0u8; 65_536];
    let (mut requests, mut replies, mut bytes_out, mut largest) = (0u64, 0u64, 0u64, 0usize);
    let mut drain = |replies: &mut u64, bytes_out: &mut u64, largest: &mut usize| {
        for socket in &sockets {
            while let Ok(len) = socket.recv(&mut buf) {
                *replies += 1;
                *bytes_out += len as u64;
                *largest = (*largest).max(len);
            }
        }
    };
    let started = Instant::now();
    let mut next = started;
    while started.elapsed() < config.duration {
        for socket in &sockets {
            if socket.send_to(&attack.request, server_addr).is_ok() {
                requests += 1;
            }
        }
        next += interval;
        while Instant::now() < next {
            drain(&mut replies, &mut bytes_out, &mut largest);
            thread::sleep(Duration::from_micros(500));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    // Replies to the last requests still on their way.
    let settle = Instant::now();
    while settle.elapsed() < Duration::from_millis(300) {
        drain(&mut replies, &mut bytes_out, &mut largest);
        thread::sleep(Duration::from_millis(1));
    }
    let (client_queries, client_answered) = match client {
        Some(client) => client.join().unwrap_or((0, 0)),
        None => (0, 0),
    };
    shutdown.cancel();
    let _ = server.join();
    let bytes_in = requests * attack.request.len() as u64;
    Ok(Reflection {
        label: attack.label,
        setup,
        request_bytes: attack.request.len(),
        requests,
        replies,
        bytes_out,
        largest_datagram: largest,
        seconds,
        out_per_second: bytes_out as f64 / seconds,
        amplification: bytes_out as f64 / bytes_in.max(1) as f64,
        client_queries,
        client_answered,
        stats: stats.snapshot(),
    })
}

/// Queries `server` with the real client every `every` for `duration`, from 127.0.0.1, with
/// one retry, as a real client has: under a flood the kernel drops some datagrams at the
/// server's socket before the responder sees them (seen on a loaded 2-core machine: 4% of a
/// GameSpy v1 flood), and a query that lost its one request says nothing about the budgets;
/// a client the budgets wrongly block fails both tries. `(queries, answered)`.
fn poll(protocol: Protocol, server: SocketAddr, duration: Duration, every: Duration) -> (u32, u32) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return (0, 0);
    };
    let options = Options {
        timeout: Duration::from_secs(1),
        retries: 1,
        ..Options::default()
    };
    runtime.block_on(async move {
        let (mut queries, mut answered) = (0, 0);
        let started = Instant::now();
        // Let the flood start first.
        tokio::time::sleep(Duration::from_millis(200)).await;
        while started.elapsed() + Duration::from_secs(1) < duration {
            let asked = Instant::now();
            queries += 1;
            match driver::query(protocol, server, &options).await {
                Ok(_) => answered += 1,
                Err(e) => eprintln!("the {protocol} client from 127.0.0.1 failed: {e}"),
            }
            tokio::time::sleep(every.saturating_sub(asked.elapsed())).await;
        }
        (queries, answered)
    })
}

/// The markdown table: per request, what the first request from an unknown source draws, then
/// a sustained flood before and after byte budgets.
pub fn table(rows: &[(Reflection, Reflection, Reflection)]) -> String {
    let mut out = String::from(
        "| Request (bytes) | First request: reply | First: out ÷ in | \
         Before: largest datagram | Before: bytes/s to the /24 | Before: out ÷ in | \
         After: largest datagram | After: bytes/s to the /24 | After: out ÷ in |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (first, before, after) in rows {
        out.push_str(&format!(
            "| {} ({}) | {} B, {} datagram(s) | {:.1}× | {} | {:.0} | {:.1}× | {} | {:.0} | {:.1}× |\n",
            before.label,
            before.request_bytes,
            first.bytes_out,
            first.replies,
            first.amplification,
            before.largest_datagram,
            before.out_per_second,
            before.amplification,
            after.largest_datagram,
            after.out_per_second,
            after.amplification,
        ));
    }
    out
}
