//! Every responder keeps each reply datagram within the service's cap (1,400 bytes by default)
//! whatever the state holds, splitting where its protocol splits and cutting lists where it
//! cannot; the clients then report the cut lists as incomplete.

use std::net::SocketAddr;
use std::time::Duration;

use query_net::driver;
use query_net::engines::all::AllProtocols;
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState};
use query_net::{Options, Protocol};
use query_specs::sqp::ChunkSet;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

const CAP: usize = 1400;

/// `players` players with 255-byte names, 300 rules with 255-byte names and values.
fn state(players: usize) -> ServerState {
    let long = |i: usize| format!("{i:04}{}", "n".repeat(251));
    ServerState {
        name: "Datagram Cap".to_owned(),
        map: "Arena".to_owned(),
        game_type: "ffa".to_owned(),
        version: "1.0".to_owned(),
        max_players: u32::try_from(players).unwrap() + 10,
        players: (0..players)
            .map(|i| PlayerState {
                name: long(i),
                score: i as i64,
                ping: 20,
                ..PlayerState::default()
            })
            .collect(),
        rules: (0..300)
            .map(|i| (long(i), RuleValue::Text(long(i))))
            .collect(),
        ..ServerState::default()
    }
}

fn samp(opcode: u8) -> Vec<u8> {
    let mut request = b"SAMP\x7f\x00\x00\x01\x61\x1e".to_vec();
    request.push(opcode);
    request
}

/// Sends `request` and returns the reply datagrams, each checked against the cap.
fn ask(service: &mut Service<AllProtocols>, request: &[u8]) -> Vec<Vec<u8>> {
    let from: SocketAddr = "192.0.2.1:40000".parse().unwrap();
    let replies: Vec<Vec<u8>> = service.handle(from, request).map(<[u8]>::to_vec).collect();
    for reply in &replies {
        assert!(reply.len() <= CAP, "{} bytes for {request:?}", reply.len());
    }
    replies
}

#[test]
fn every_reply_datagram_fits_the_cap_whatever_the_state() {
    for players in [100, 5000] {
        let mut service = Service::new(AllProtocols::new(SharedState::new(state(players))))
            .rate_limit(None)
            .reply_budget(None);
        // SQP: the challenge, then every chunk.
        let challenge = ask(&mut service, &[0; 5]).remove(0);
        let mut query = vec![1];
        query.extend_from_slice(&challenge[1..5]);
        query.extend_from_slice(&[0, 1, 0x1f]);
        assert_eq!(ask(&mut service, &query).len(), 1, "SQP, {players} players");
        // A2S: the challenge, then PLAYER and RULES in Source parts.
        for kind in [b'U', b'V'] {
            let mut request = vec![0xff, 0xff, 0xff, 0xff, kind, 0xff, 0xff, 0xff, 0xff];
            let challenge = ask(&mut service, &request).remove(0);
            request[5..9].copy_from_slice(&challenge[5..9]);
            assert!(ask(&mut service, &request).len() > 1, "A2S {kind}");
        }
        // GameSpy v1: parts of at most the cap.
        assert!(ask(&mut service, b"\\status\\").len() > 1);
        // SA:MP: one datagram each, lists cut (and not sent at all above 100 players).
        for opcode in *b"ir" {
            assert_eq!(ask(&mut service, &samp(opcode)).len(), 1);
        }
        for opcode in *b"cd" {
            assert_eq!(
                ask(&mut service, &samp(opcode)).len(),
                usize::from(players <= 100)
            );
        }
    }
}

#[tokio::test]
async fn clients_say_when_the_list_is_shorter_than_the_count() {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap().to_string();
    let mut service =
        Service::new(AllProtocols::new(SharedState::new(state(5000)))).rate_limit(None);
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let server = tokio::spawn(async move { driver::serve(&socket, &mut service, &token).await });
    let options = Options {
        timeout: Duration::from_secs(2),
        retries: 1,
        sqp_chunks: ChunkSet::all(),
        ..Options::default()
    };
    // Every protocol `AllProtocols` answers on its one port.
    for protocol in query_net::engines::all::ROUTED {
        let status = driver::query(protocol, &addr, &options)
            .await
            .unwrap_or_else(|e| panic!("{protocol}: {e}"));
        assert!(status.players.len() < 5000, "{protocol}");
        if matches!(protocol, Protocol::Quake3 | Protocol::Quake2) {
            // A Quake 3 or Quake 2 status carries no player count: the lines are the count.
            // The responders stop where real servers stop, at their buffer's end (Quake 3 at
            // 64 KiB of lines, Quake 2 at one datagram).
            assert_eq!(status.num_players as usize, status.players.len());
            continue;
        }
        if protocol == Protocol::Bedrock {
            // A pong carries the counts and no player list: nothing was left out.
            assert_eq!(status.num_players, 5000);
            assert!(status.players.is_empty() && status.complete);
            continue;
        }
        assert_eq!(status.num_players, 5000, "{protocol}");
        assert!(!status.complete, "{protocol}: {:?}", status.raw);
    }
    shutdown.cancel();
    server.await.unwrap().unwrap();
}
