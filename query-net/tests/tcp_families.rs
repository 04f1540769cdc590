//! Frostbite and TeamSpeak 3 ServerQuery: the clients against the responders over loopback
//! TCP (the generic `query` and the typed calls), a query account's login, and the clients
//! on scripted servers: events between answers, refusals, permission errors, foreign
//! servers, garbage sent to the responders.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use query_net::engines::frostbite::client::request;
use query_net::engines::frostbite::{FrostbiteResponder, FrostbiteSession};
use query_net::engines::teamspeak3::{QueryLogin, Ts3Responder, Ts3Session, VirtualServer};
use query_net::state::{PlayerState, ServerState, SharedState, TeamState};
use query_net::stream::{replay, StreamResponder};
use query_net::tcp::{self, ListenerLimits, ListenerStats};
use query_net::{driver, Options, Protocol, QueryError};
use query_specs::frostbite::{Packet, Word, FROM_SERVER, IS_RESPONSE};
use query_wire::Encode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

fn state() -> SharedState {
    SharedState::new(ServerState {
        name: "Metro | 24/7".into(),
        map: "XP0_Metro".into(),
        game_type: "ConquestLarge0".into(),
        version: "157186".into(),
        motd: "Welcome, soldier".into(),
        max_players: 64,
        port: 9987,
        teams: vec![
            TeamState {
                name: "US".into(),
                score: 389,
            },
            TeamState {
                name: "RU".into(),
                score: 461,
            },
        ],
        players: vec![
            PlayerState {
                name: "Ann B|c".into(),
                score: 3452,
                ping: 59,
                team: Some("US".into()),
                ..PlayerState::default()
            },
            PlayerState {
                name: "zoë".into(),
                score: 10,
                ping: 5,
                team: Some("RU".into()),
                ..PlayerState::default()
            },
        ],
        ..ServerState::default()
    })
}

struct Server {
    address: SocketAddr,
    stop: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn serve<R, F>(new_responder: F) -> Server
where
    R: StreamResponder + Send + 'static,
    F: Fn() -> R + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(tcp::serve_stream(
        listener,
        new_responder,
        ListenerLimits::default(),
        Arc::new(ListenerStats::default()),
        stop.clone(),
    ));
    Server { address, stop }
}

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        deadline: Duration::from_secs(5),
        ..Options::default()
    }
}

#[tokio::test]
async fn the_frostbite_client_reads_the_responder() {
    let shared = state();
    let server = serve(move || FrostbiteResponder::new(shared.clone())).await;
    let status = driver::query_frostbite(server.address, &options())
        .await
        .unwrap();
    let generic = driver::query(Protocol::Frostbite, server.address, &options())
        .await
        .unwrap();
    assert_eq!(status.players, generic.players);
    assert_eq!(status.protocol, Protocol::Frostbite);
    assert_eq!(status.name, "Metro | 24/7");
    assert_eq!(status.map.as_deref(), Some("XP0_Metro"));
    assert_eq!(status.game_type.as_deref(), Some("ConquestLarge0"));
    assert_eq!(status.version.as_deref(), Some("BF4 157186"));
    assert_eq!((status.num_players, status.max_players), (2, 64));
    assert_eq!(status.password, Some(false));
    let scores: Vec<_> = status.teams.iter().map(|t| t.score).collect();
    assert_eq!(scores, [Some(389), Some(461)]);
    let players: Vec<_> = status
        .players
        .iter()
        .map(|p| (p.name.as_str(), p.score, p.ping, p.team.as_deref()))
        .collect();
    assert_eq!(
        players,
        [
            ("Ann B|c", Some(3452), Some(59), Some("1")),
            ("zoë", Some(10), Some(5), Some("2"))
        ]
    );
    assert_eq!(status.rules["blazeGameState"], "IN_GAME");
    assert!(status.complete);
}

#[tokio::test]
async fn the_teamspeak3_client_reads_the_responder() {
    let shared = state();
    let server = serve(move || Ts3Responder::new(shared.clone(), None)).await;
    let status = driver::query_teamspeak3(server.address, &options())
        .await
        .unwrap();
    assert_eq!(status.protocol, Protocol::TeamSpeak3);
    assert_eq!(status.name, "Metro | 24/7");
    assert_eq!((status.num_players, status.max_players), (2, 64));
    let names: Vec<_> = status.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Ann B|c", "zoë"], "escapes undone");
    assert_eq!(status.players[0].extra["channel"], "US");
    assert_eq!(
        status.rules["virtualserver_welcomemessage"],
        "Welcome, soldier"
    );
    assert_eq!(status.raw["query_clients"][0]["name"], "serveradmin");
    assert_eq!(status.raw["channels"].as_array().unwrap().len(), 2);

    // Another voice port is no virtual server of this one.
    let elsewhere = Options {
        virtual_server: VirtualServer::Port(9988),
        ..options()
    };
    let error = driver::query_teamspeak3(server.address, &elsewhere)
        .await
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the server refused use: invalid serverID (error 1024)"),
        "{error}"
    );
    let by_sid = Options {
        virtual_server: VirtualServer::Sid(1),
        ..options()
    };
    assert!(driver::query_teamspeak3(server.address, &by_sid)
        .await
        .is_ok());
}

#[tokio::test]
async fn a_query_account_logs_in_first() {
    let shared = state();
    let server = serve(move || Ts3Responder::new(shared.clone(), Some("s3cret pass".into()))).await;
    let login = |password: &str| Options {
        query_login: Some(QueryLogin {
            name: "serveradmin".into(),
            password: password.into(),
        }),
        ..options()
    };
    let status = driver::query_teamspeak3(server.address, &login("s3cret pass"))
        .await
        .unwrap();
    assert_eq!(status.players.len(), 2);
    let error = driver::query_teamspeak3(server.address, &login("wrong"))
        .await
        .unwrap_err();
    assert!(matches!(error, QueryError::AuthRequired(_)), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("refused the login of \"serveradmin\""),
        "{error}"
    );
    assert!(
        !format!("{error:?}").contains("wrong"),
        "the password is not shown"
    );
}

/// A server that reads what comes and answers with `script`, then closes.
async fn scripted(script: Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let script = script.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf).await;
                let _ = stream.write_all(&script).await;
            });
        }
    });
    address
}

fn packet(sequence: u32, words: &[&str]) -> Vec<u8> {
    Packet {
        sequence,
        words: words.iter().map(|w| Word::new(w.as_bytes())).collect(),
    }
    .to_vec()
    .unwrap()
}

const INFO: [&str; 13] = [
    "OK", "Box", "1", "8", "Rush", "MP_001", "0", "1", "2", "10", "20", "0", "",
];

fn answers(info: &[&str], players: &[&str]) -> Vec<u8> {
    let mut bytes = packet(FROM_SERVER, &["player.onJoin", "Ann"]);
    bytes.extend(packet(IS_RESPONSE | 2, &["OK", "BF3", "1149977"]));
    bytes.extend(packet(IS_RESPONSE | 3, players));
    bytes.extend(packet(FROM_SERVER | 7, &["server.onRoundOver", "1"]));
    bytes.extend(packet(IS_RESPONSE | 1, info));
    bytes
}

const TABLE: [&str; 7] = ["OK", "2", "name", "score", "1", "Ann", "7"];

#[test]
fn frostbite_skips_events_and_matches_answers_by_sequence() {
    let target = "127.0.0.1:47200".parse().unwrap();
    let (result, written) = replay(
        FrostbiteSession::new(target),
        &[&answers(&INFO, &TABLE)],
        Instant::now(),
    );
    let status = result.unwrap();
    assert_eq!(status.raw["events_skipped"], 2);
    assert_eq!(status.name, "Box");
    assert_eq!(status.players[0].score, Some(7));
    let mut expected = request(1, &[b"serverInfo"]).unwrap();
    expected.extend(request(2, &[b"version"]).unwrap());
    expected.extend(request(3, &[b"listPlayers", b"all"]).unwrap());
    assert_eq!(written, expected);
}

#[test]
fn frostbite_refusals_and_broken_answers_are_errors_that_say_why() {
    let target: SocketAddr = "127.0.0.1:47200".parse().unwrap();
    let run = |bytes: Vec<u8>| {
        replay(FrostbiteSession::new(target), &[&bytes], Instant::now())
            .0
            .map_err(|e| e.to_string())
    };
    let error = run(answers(&["LogInRequired"], &TABLE)).unwrap_err();
    assert!(
        error.contains("answered serverInfo with \"LogInRequired\""),
        "{error}"
    );

    // A refused player list still gives the status, marked incomplete.
    let status = run(answers(&INFO, &["InvalidArguments"])).unwrap();
    assert!(!status.complete);
    assert!(status.raw["players_error"]
        .as_str()
        .unwrap()
        .contains("InvalidArguments"));

    // A table whose counts do not add up is not read from the wrong words.
    let error = run(answers(
        &INFO,
        &["OK", "2", "name", "score", "2", "Ann", "7"],
    ))
    .unwrap_err();
    assert!(error.contains("do not fill the rows"), "{error}");
    let error = run(answers(&INFO, &["OK", "1", "score", "1", "7"])).unwrap_err();
    assert!(error.contains("no `name` column"), "{error}");
    let mut info = INFO.to_vec();
    info[2] = "many";
    let error = run(answers(&info, &TABLE)).unwrap_err();
    assert!(error.contains("player count is no number"), "{error}");
    info[2] = "1";
    info[8] = "4000";
    let error = run(answers(&info, &TABLE)).unwrap_err();
    assert!(error.contains("4000 teams"), "{error}");

    // An answer to no request sent, or the same answer twice.
    let mut bytes = answers(&INFO, &TABLE);
    bytes.splice(0..0, packet(IS_RESPONSE | 9, &["OK"]));
    assert!(run(bytes).unwrap_err().contains("sequence number 9"));
    let mut bytes = answers(&INFO, &TABLE);
    bytes.splice(0..0, packet(IS_RESPONSE | 2, &["OK", "BF3", "1"]));
    assert!(run(bytes)
        .unwrap_err()
        .contains("a second answer to version"));

    // A size that passes the cap is refused from the header alone.
    let mut huge = packet(IS_RESPONSE | 1, &["OK"]);
    huge[4..8].copy_from_slice(&(1u32 << 30).to_le_bytes());
    assert!(run(huge).unwrap_err().contains("exceeds the cap"));
}

#[tokio::test]
async fn frostbite_over_tcp_closed_early_says_what_is_missing() {
    let mut script = packet(IS_RESPONSE | 2, &["OK", "BF3", "1149977"]);
    script.extend(packet(IS_RESPONSE | 1, &INFO));
    let address = scripted(script).await;
    let error = driver::query_frostbite(address, &options())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("without answering listPlayers"),
        "{error}"
    );
}

const BANNER: &[u8] = b"TS3\n\rWelcome to the TeamSpeak 3 ServerQuery interface.\n\r";

fn ts3_run(
    stream: &[u8],
    login: Option<QueryLogin>,
) -> Result<query_net::ServerStatus, QueryError> {
    let session = Ts3Session::new(
        "127.0.0.1:10011".parse().unwrap(),
        VirtualServer::default(),
        login,
    );
    replay(session, &[stream], Instant::now()).0
}

#[test]
fn a_missing_permission_is_one_line_that_names_it() {
    let mut stream = BANNER.to_vec();
    stream.extend_from_slice(b"error id=0 msg=ok\n\r");
    stream.extend_from_slice(b"virtualserver_name=Box virtualserver_maxclients=8 virtualserver_clientsonline=1\n\rerror id=0 msg=ok\n\r");
    stream.extend_from_slice(
        b"error id=2568 msg=insufficient\\sclient\\spermissions failed_permid=9\n\r",
    );
    let error = ts3_run(&stream, None).unwrap_err();
    assert!(matches!(error, QueryError::AuthRequired(_)));
    let text = error.to_string();
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(
        text.contains("clientlist needs the permission b_virtualserver_client_list"),
        "{text}"
    );
    assert!(text.contains("failed_permid=9"), "{text}");
    assert!(
        text.contains("insufficient client permissions (error 2568)"),
        "{text}"
    );
    assert!(text.contains("log in with a query account"), "{text}");
}

#[test]
fn teamspeak3_refuses_what_is_no_serverquery() {
    let error = ts3_run(b"SSH-2.0-OpenSSH_9.6\r\n", None).unwrap_err();
    assert!(error.to_string().contains("not TS3"), "{error}");
    let error = ts3_run(BANNER, None).unwrap_err();
    assert!(
        error.to_string().contains("before the answer to use"),
        "{error}"
    );
    // Lines of other servers' endings read the same; notifications are skipped.
    let stream = b"TS3\r\nWelcome\r\nerror id=0 msg=ok\r\nnotifycliententerview clid=9\r\nvirtualserver_name=A\\sB virtualserver_maxclients=8 virtualserver_clientsonline=0\r\nerror id=0 msg=ok\r\n\r\nerror id=0 msg=ok\nerror id=0 msg=ok";
    let status = ts3_run(stream, None).unwrap();
    assert_eq!(status.name, "A B");
    assert!(status.players.is_empty());
    // A bad escape is an error at its byte.
    let mut stream = BANNER.to_vec();
    stream.extend_from_slice(b"error id=0 msg=ok\n\rvirtualserver_name=A\\q virtualserver_maxclients=8 virtualserver_clientsonline=0\n\rerror id=0 msg=ok\n\r");
    stream.extend_from_slice(b"error id=0 msg=ok\n\rerror id=0 msg=ok\n\r");
    let error = ts3_run(&stream, None).unwrap_err();
    assert!(error.to_string().contains("unknown escape"), "{error}");
}

#[tokio::test]
async fn the_responders_close_on_garbage_and_overlong_lines() {
    let shared = state();
    let ts3 = serve(move || Ts3Responder::new(shared.clone(), None)).await;
    let mut stream = TcpStream::connect(ts3.address).await.unwrap();
    stream.write_all(&[b'x'; 5000]).await.unwrap();
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut got)).await;
    assert!(read.is_ok(), "the connection closed");
    assert!(
        got.is_empty() || got.starts_with(b"TS3\n\r"),
        "the banner, then nothing"
    );
    assert!(!got.windows(5).any(|w| w == b"error"));

    let shared = state();
    let frostbite = serve(move || FrostbiteResponder::new(shared.clone())).await;
    let mut stream = TcpStream::connect(frostbite.address).await.unwrap();
    // A response sent to the server, then a request it would answer.
    stream
        .write_all(&packet(IS_RESPONSE | 1, &["OK"]))
        .await
        .unwrap();
    stream
        .write_all(&request(2, &[b"version"]).unwrap())
        .await
        .unwrap();
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(3), stream.read_to_end(&mut got)).await;
    assert!(
        read.is_ok() && got.is_empty(),
        "closed without an answer: {got:?}"
    );
}

#[test]
fn the_frostbite_responder_answers_unknown_and_admin_commands_as_the_games_do() {
    let mut responder = FrostbiteResponder::new(state());
    let mut bytes = request(5, &[b"admin.kickPlayer", b"Ann"]).unwrap();
    bytes.extend(request(6, &[b"foo"]).unwrap());
    responder.handle_bytes(&bytes, Instant::now());
    let out = responder.poll_transmit().unwrap();
    let mut expected = packet(IS_RESPONSE | 5, &["LogInRequired"]);
    expected.extend(packet(IS_RESPONSE | 6, &["UnknownCommand"]));
    assert_eq!(out, expected);
    assert!(!responder.is_closed(), "clients keep the connection");
}
