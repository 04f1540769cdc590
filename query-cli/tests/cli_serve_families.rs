//! `gsq serve` for the families whose answer is more than one datagram's worth of setup:
//! FiveM's player list over HTTP beside `getinfo`, and the Doom 3 engine in each game's
//! layout, each read back by `gsq query`.

mod cli_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use cli_support::{run, Server, StateDir, SAMPLE_STATE};

/// `gsq query PROTOCOL ADDRESS --json`, which must answer.
fn query(protocol: &str, address: &str) -> serde_json::Value {
    let ran = run(&["query", protocol, address, "--json", "-t", "1s", "-r", "2"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    ran.json()
}

#[test]
fn gsq_query_fivem_reads_the_players_gsq_serve_lists_over_http() {
    let server = Server::start(
        StateDir::new("toml", SAMPLE_STATE),
        &["--fivem", "127.0.0.1:0"],
        &["fivem"],
    );
    let status = query("fivem", &server.addr("fivem"));
    assert_eq!(status["complete"], true, "{status:#}");
    assert_eq!(status["raw"]["players_source"], "/players.json");
    let players: Vec<(&str, u64)> = status["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["ping"].as_u64().unwrap()))
        .collect();
    assert_eq!(players, [("Zoë", 31), ("Jürgen", 54)]);
    assert_eq!(status["num_players"], 2);

    // A client that sends more than a request head may take gets 431 and the connection
    // closes; the listener keeps serving.
    let mut hostile = TcpStream::connect(server.addresses["fivem"]).unwrap();
    hostile
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut request = b"GET /players.json HTTP/1.1\r\n".to_vec();
    request.extend(std::iter::repeat_n(b'a', 8192));
    let _ = hostile.write_all(&request);
    let mut answer = Vec::new();
    let _ = hostile.read_to_end(&mut answer);
    assert!(
        answer.starts_with(b"HTTP/1.1 431 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    assert_eq!(query("fivem", &server.addr("fivem"))["complete"], true);
}

#[test]
fn gsq_serve_doom3_answers_in_the_layout_of_the_game() {
    for (game, layout, game_name) in [
        (None, "doom3", "baseDOOM-1"),
        (Some("quake4"), "quake4", "Q4MP"),
        (Some("etqw"), "etqw", "baseETQW-1"),
    ] {
        let mut args = vec![];
        match game {
            Some(game) => args.extend(["--game", game, "127.0.0.1:0"]),
            None => args.extend(["--doom3", "127.0.0.1:0"]),
        }
        let server = Server::start(StateDir::new("toml", SAMPLE_STATE), &args, &["doom3"]);
        let status = query("doom3", &server.addr("doom3"));
        assert_eq!(status["raw"]["layout"], layout, "{status:#}");
        assert_eq!(status["rules"]["gamename"], game_name);
        assert_eq!(status["name"], "Café Zoë");
        assert_eq!(status["map"], "Highrise");
        assert_eq!(status["max_players"], 16);
        let names: Vec<&str> = status["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Zoë", "Jürgen"], "{layout}");
    }
}
