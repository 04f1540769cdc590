//! `gsq demo`: every protocol end to end on loopback, in about a second.
//!
//! Starts a responder per protocol on 127.0.0.1 (free ports) with one sample state, queries each
//! with the same client `gsq query` uses, prints what came back, and stops the responders.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};
use query_net::{driver, Options, Protocol, ServerStatus};
use query_wire::Uuid;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

use crate::cli::DemoArgs;
use crate::commands::query::query_status;
use crate::exit::{Failure, Outcome};
use crate::output::{print_line, render_status, Format};
use crate::responders::{self, Boxed, Role, Settings};

/// The state the demo responders report. Names with accents show that text survives every
/// protocol's encoding (all of them are in Windows-1252, which SA:MP and GameSpy use).
pub fn sample_state() -> ServerState {
    let players = [
        ("Zoë", 42, 31, "red", 0x5a6f_e8a1),
        ("Jürgen", 17, 54, "blue", 0x4a75_7267),
        ("Søren", 8, 120, "red", 0x536f_7265),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, score, ping, team, account))| PlayerState {
        name: name.to_owned(),
        score,
        ping,
        id: u32::try_from(i).ok(),
        uuid: Some(Uuid::from_u128(
            0x0d3e_0000_0000_4000_8000_0000_0000_0000 | account,
        )),
        team: Some(team.to_owned()),
    })
    .collect();
    let mut rules = IndexMap::new();
    rules.insert("difficulty".to_owned(), RuleValue::from("hard"));
    rules.insert("round_time".to_owned(), RuleValue::from(300_i64));
    rules.insert("friendly_fire".to_owned(), RuleValue::from(false));
    rules.insert("weather".to_owned(), RuleValue::from("Café au lait fog"));
    ServerState {
        name: "gsq demo — Café Ünïcode".to_owned(),
        map: "Highrise".to_owned(),
        game_type: "Team Deathmatch".to_owned(),
        version: "1.0.3".to_owned(),
        language: "English".to_owned(),
        motd: "Welcome to the demo!".to_owned(),
        max_players: 16,
        players,
        teams: vec![
            TeamState {
                name: "red".to_owned(),
                score: 50,
            },
            TeamState {
                name: "blue".to_owned(),
                score: 17,
            },
        ],
        rules,
        port: 7777,
        protocol_version: 2,
        protocol_hash: "1A2B3C4D".to_owned(),
        ..ServerState::default()
    }
}

/// Runs `gsq demo`.
pub async fn run(args: &DemoArgs) -> Outcome {
    let format = Format::choose(&args.output);
    let shared = SharedState::new(sample_state());
    let shutdown = CancellationToken::new();
    let settings = Settings::default();

    let mut servers = Vec::new();
    // Every protocol `gsq serve` answers over UDP.
    for protocol in Protocol::DATAGRAM {
        let responder = responders::build(Role::One(protocol), &shared, &settings)?;
        let socket = UdpSocket::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(|e| {
                Failure::new(
                    crate::exit::Category::Network,
                    format!("cannot open a loopback socket: {e}"),
                )
            })?;
        let address = socket
            .local_addr()
            .map_err(|e| Failure::internal(format!("cannot read a bound address: {e}")))?;
        if protocol == Protocol::Fivem {
            // FiveM's player list is HTTP on the same port.
            let listener = tokio::net::TcpListener::bind(address).await.map_err(|e| {
                Failure::new(
                    crate::exit::Category::Network,
                    format!("cannot listen on {address} for FiveM's /players.json: {e}"),
                )
            })?;
            let state = shared.clone();
            tokio::spawn(query_net::tcp::serve_stream(
                listener,
                move || query_net::engines::fivem::FivemHttpResponder::new(state.clone()),
                query_net::tcp::ListenerLimits::default(),
                std::sync::Arc::default(),
                shutdown.clone(),
            ));
        }
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let mut service = Service::new(Boxed(responder)).rate_limit(None);
            if let Err(e) = driver::serve(&socket, &mut service, &stop).await {
                tracing::error!("the {protocol} responder stopped: {e}");
            }
        });
        servers.push((protocol, address));
    }

    let queries = servers.iter().map(|&(protocol, address)| async move {
        let options = Options {
            timeout: Duration::from_millis(500),
            retries: 2,
            // The demo responders serve every SQP chunk.
            sqp_chunks: query_net::engines::sqp::ChunkSet::all(),
            ..Options::default()
        };
        (protocol, query_status(protocol, address, &options).await)
    });
    let results: Vec<(Protocol, Outcome<ServerStatus>)> =
        futures_util::future::join_all(queries).await;
    shutdown.cancel();

    if format == Format::Table {
        print_line(&format!(
            "gsq demo: {} responders on 127.0.0.1 serve one sample state; the real client \
             queried each:",
            crate::protocols::titles()
        ))?;
    }
    let mut failures = Vec::new();
    for (protocol, result) in results {
        match result {
            Ok(status) => {
                if format == Format::Table {
                    print_line("")?;
                }
                print_line(&render_status(&status, format)?)?;
            }
            Err(failure) => {
                eprintln!("gsq: error: {failure}");
                failures.push((protocol, failure.category()));
            }
        }
    }
    match failures.first() {
        None => Ok(()),
        Some(&(_, category)) => {
            let names: Vec<String> = failures.iter().map(|(p, _)| p.to_string()).collect();
            Err(Failure::new(
                category,
                format!("the demo query failed for {}", names.join(", ")),
            ))
        }
    }
}
