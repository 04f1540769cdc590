//! GameSpy 2 client against GameSpy 2 responder over loopback UDP through `driver::query`:
//! every field served comes back (teams sent by number and read back by name, text in each
//! encoding), and a state too big for one datagram comes back cut, marked incomplete.

use std::net::SocketAddr;

use query_net::driver;
use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
use query_net::service::Service;
use query_net::state::{PlayerState, RuleValue, ServerState, SharedState, TeamState};
use query_net::{Options, Protocol};
use query_wire::TextEncoding;
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

async fn serve(state: ServerState) -> (SocketAddr, CancellationToken) {
    let config = GameSpy2Config {
        game_name: "halor".into(),
        ..GameSpy2Config::default()
    };
    serve_with(state, config).await
}

async fn serve_with(state: ServerState, config: GameSpy2Config) -> (SocketAddr, CancellationToken) {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    tokio::spawn(async move {
        let responder = GameSpy2Responder::new(SharedState::new(state), config);
        let mut service = Service::new(responder).rate_limit(None);
        driver::serve(&socket, &mut service, &token).await
    });
    (addr, shutdown)
}

#[tokio::test]
async fn every_field_served_comes_back() {
    let state = ServerState {
        name: "Blood Gulch «CTF»".into(),
        map: "bloodgulch".into(),
        game_type: "CTF".into(),
        version: "01.00.10.0621".into(),
        max_players: 16,
        password: true,
        port: 2302,
        players: vec![
            PlayerState {
                name: "Jürgen".into(),
                score: -3,
                ping: 61,
                team: Some("Red".into()),
                ..PlayerState::default()
            },
            PlayerState {
                name: "Åsa".into(),
                score: 9,
                ping: 130,
                team: Some("Blue".into()),
                ..PlayerState::default()
            },
            PlayerState {
                name: "Spectator".into(),
                ..PlayerState::default()
            },
            PlayerState {
                name: "Zoë".into(),
                team: Some("Unlisted".into()),
                ..PlayerState::default()
            },
        ],
        teams: vec![
            TeamState {
                name: "Red".into(),
                score: 2,
            },
            TeamState {
                name: "Blue".into(),
                score: 9,
            },
        ],
        rules: [
            ("fraglimit".to_owned(), RuleValue::Integer(10)),
            ("teamplay".to_owned(), RuleValue::Bool(true)),
        ]
        .into_iter()
        .collect(),
        ..ServerState::default()
    };
    let (addr, shutdown) = serve(state.clone()).await;
    let status = driver::query(Protocol::GameSpy2, &addr.to_string(), &Options::default())
        .await
        .unwrap();
    shutdown.cancel();
    assert_eq!(status.protocol, Protocol::GameSpy2);
    assert_eq!(status.name, state.name);
    assert_eq!(status.map.as_deref(), Some("bloodgulch"));
    assert_eq!(status.game_type.as_deref(), Some("CTF"));
    assert_eq!(status.version.as_deref(), Some("01.00.10.0621"));
    assert_eq!(status.max_players, 16);
    assert_eq!(status.num_players, 4);
    assert_eq!(status.password, Some(true));
    assert!(status.complete);
    // Our responder answers the combined request: one request.
    assert_eq!(status.raw["requests"], 1);
    for (got, sent) in status.players.iter().zip(&state.players) {
        assert_eq!(got.name, sent.name);
        assert_eq!(got.score, Some(sent.score));
        assert_eq!(got.ping, Some(sent.ping));
        assert_eq!(got.team, sent.team);
    }
    assert_eq!(status.players.len(), 4);
    let teams: Vec<(&str, Option<i64>)> = status
        .teams
        .iter()
        .map(|t| (t.name.as_str(), t.score))
        .collect();
    assert_eq!(teams, [("Red", Some(2)), ("Blue", Some(9))]);
    assert_eq!(status.rules["gamename"], "halor");
    assert_eq!(status.rules["hostport"], "2302");
    assert_eq!(status.rules["fraglimit"], "10");
    assert_eq!(status.rules["teamplay"], "true");
}

#[tokio::test]
async fn a_state_too_big_for_one_datagram_comes_back_cut_and_incomplete() {
    let state = ServerState {
        name: "Crowd".into(),
        max_players: 300,
        players: (0..300)
            .map(|i| PlayerState {
                name: format!("player with a long name {i}"),
                ..PlayerState::default()
            })
            .collect(),
        ..ServerState::default()
    };
    let (addr, shutdown) = serve(state).await;
    let status = driver::query(Protocol::GameSpy2, &addr.to_string(), &Options::default())
        .await
        .unwrap();
    shutdown.cancel();
    assert_eq!(status.num_players, 300);
    assert!(!status.players.is_empty() && status.players.len() < 300);
    assert!(!status.complete);
    assert_eq!(
        status.raw["players_missing"],
        300 - status.players.len() as u64
    );
    // The reason is named, not only implied by `complete`.
    let why = status.raw["players_error"].as_str().unwrap();
    assert!(
        why.contains("of the 300 players the server counts"),
        "{why}"
    );
}

/// Text sent in `--encoding`'s encoding comes back whole to a client reading that encoding;
/// team numbers resolve to the names in it.
#[tokio::test]
async fn text_comes_back_in_each_encoding() {
    for (encoding, name, team) in [
        (TextEncoding::Utf8, "Zoë's Сервер «日本»", "Ωmega"),
        (TextEncoding::Windows1251, "Сервер «Москва»", "Синие"),
        (TextEncoding::Latin1, "Ærøskøbing", "Bläu"),
        (TextEncoding::Windows1252, "€uro Œdipe", "Žluť"),
    ] {
        let state = ServerState {
            name: name.into(),
            map: team.into(),
            players: vec![PlayerState {
                name: team.into(),
                team: Some(team.into()),
                ..PlayerState::default()
            }],
            teams: vec![TeamState {
                name: team.into(),
                score: 1,
            }],
            rules: [(team.to_owned(), RuleValue::Text(name.into()))]
                .into_iter()
                .collect(),
            ..ServerState::default()
        };
        let config = GameSpy2Config {
            encoding,
            ..GameSpy2Config::default()
        };
        let (addr, shutdown) = serve_with(state, config).await;
        let options = Options {
            encoding: Some(encoding),
            ..Options::default()
        };
        let status = driver::query(Protocol::GameSpy2, &addr.to_string(), &options)
            .await
            .unwrap();
        shutdown.cancel();
        // Windows-1252 lacks ť: sent as `?`.
        let team = if encoding == TextEncoding::Windows1252 {
            "Žlu?"
        } else {
            team
        };
        assert_eq!(status.name, name, "{encoding}");
        assert_eq!(status.map.as_deref(), Some(team), "{encoding}");
        assert_eq!(status.players[0].name, team, "{encoding}");
        assert_eq!(status.players[0].team.as_deref(), Some(team), "{encoding}");
        assert_eq!(status.teams[0].name, team, "{encoding}");
        assert_eq!(status.rules[team], name, "{encoding}");
    }
}
