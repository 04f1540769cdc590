//! Games where protocols go: `gsq games`, `gsq query GAME`, `auto` naming the game (Minecraft
//! every time), bulk and exporter lines with games and `auto`, `gsq serve --game`, and the
//! repository's GAMES.md kept up to date. Servers are `gsq serve` on 127.0.0.1.

mod cli_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use cli_support::{gsq_path, run, run_with_stdin, workspace_root, Server, StateDir, SAMPLE_STATE};

fn serve(args: &[&str], expect: &[&str]) -> Server {
    let mut all = args.to_vec();
    all.push("--no-rate-limit");
    Server::start(StateDir::new("toml", SAMPLE_STATE), &all, expect)
}

fn query(args: &[&str]) -> Value {
    let mut all = vec!["query"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--json", "-t", "500ms", "-r", "1"]);
    let ran = run(&all);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    ran.json()
}

#[test]
fn games_lists_searches_and_gives_json() {
    let ran = run(&["games", "counter", "strike"]);
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(
        ran.stdout.contains("counterstrike2 (cs2)"),
        "{}",
        ran.stdout
    );
    assert!(ran.stdout.contains("Counter-Strike: Global Offensive"));
    assert!(!ran.stdout.contains("Rust"));

    let ran = run(&["games", "--json", "rust"]);
    let list: Value = serde_json::from_str(&ran.stdout).unwrap();
    let rust = list
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["id"] == "rust")
        .expect("rust is listed");
    let mut keys: Vec<&str> = rust
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "aliases",
            "id",
            "name",
            "notes",
            "port",
            "protocol",
            "query_port",
            "query_port_offset"
        ]
    );
    assert_eq!(rust["protocol"], "a2s");
    assert_eq!(rust["port"], 28015);

    let ran = run(&["games", "--json", "ark", "evolved"]);
    let list: Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(list[0]["id"], "ase");
    assert_eq!(list[0]["aliases"][0], "arkse");
    assert_eq!(list[0]["query_port"], 27015);
    assert_eq!(list[0]["query_port_offset"], Value::Null);

    let ran = run(&["games", "--json", "minecraft"]);
    let list: Value = serde_json::from_str(&ran.stdout).unwrap();
    let minecraft = &list.as_array().unwrap()[0];
    assert_eq!(minecraft["query_port"], Value::Null);
    assert_eq!(minecraft["query_port_offset"], 0);
    assert!(minecraft["notes"]
        .as_str()
        .unwrap()
        .contains("enable-query"));

    let ran = run(&["games", "no such game anywhere"]);
    assert_eq!(ran.code, Some(0));
    assert!(ran.stdout.contains("no game matches"), "{}", ran.stdout);
}

#[test]
fn the_games_list_in_the_repository_is_up_to_date() {
    let ran = run(&["games", "--markdown"]);
    assert_eq!(ran.code, Some(0));
    let path = workspace_root().join("GAMES.md");
    let written = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        written.trim_end() == ran.stdout.trim_end(),
        "GAMES.md is out of date: regenerate it with `cargo run -p query-cli -- games --markdown > GAMES.md`"
    );
}

#[test]
fn a_game_queries_its_query_port_from_the_game_port() {
    // 7 Days to Die answers on its game port + 1: given the port below, gsq finds it.
    let server = serve(&["--a2s", "127.0.0.1:0"], &["a2s"]);
    let query_port = server.addresses["a2s"].port();
    let game_port = format!("127.0.0.1:{}", query_port - 1);
    let status = query(&["sdtd", &game_port]);
    assert_eq!(status["protocol"], "a2s");
    assert_eq!(status["game"], "sdtd");
    assert_eq!(status["game_name"], "7 Days to Die");
    assert_eq!(status["query_port"], query_port);
    assert_eq!(status["name"], "Café Zoë");
    // The former id works too; --query-port is exact.
    let status = query(&["7d2d", "127.0.0.1", "--query-port", &query_port.to_string()]);
    assert_eq!(status["query_port"], query_port);
    // The port as given answers when the derived one does not.
    let status = query(&["sdtd", &server.addr("a2s")]);
    assert_eq!(status["query_port"], query_port);
}

#[test]
fn an_unknown_or_waiting_game_is_refused_with_exit_3() {
    let ran = run(&["query", "tribes9", "127.0.0.1"]);
    ran.assert_error(3, &["unknown protocol \"tribes9\"", "gsq games"]);
    let ran = run(&["query", "gta5a", "127.0.0.1"]);
    ran.assert_error(3, &["alt:V Multiplayer", "does not speak yet"]);
    let ran = run(&["query", "brink", "127.0.0.1"]);
    ran.assert_error(4, &["no default port is known for brink"]);
}

/// A Minecraft query server is GameSpy 4: the GameSpy 3 client gets its answer too. `auto`
/// used to race both clients and name whichever won, about half the time `gamespy3`.
#[test]
fn auto_names_a_minecraft_query_server_minecraft_every_time() {
    let server = serve(
        &[
            "--minecraft-query",
            "127.0.0.1:0",
            "--gamespy3",
            "127.0.0.1:0",
        ],
        &["minecraft-query", "gamespy3"],
    );
    for _ in 0..12 {
        let status = query(&["auto", &server.addr("minecraft-query")]);
        assert_eq!(status["protocol"], "minecraft-query", "{status:#}");
        assert_eq!(status["game"], "minecraft");
        assert_eq!(status["name"], "Café Zoë");
    }
    // A GameSpy 3 server that is no Minecraft stays gamespy3.
    let status = query(&["auto", &server.addr("gamespy3")]);
    assert_eq!(status["protocol"], "gamespy3", "{status:#}");
    assert_eq!(status["game"], Value::Null);
    // Asked for by its protocol, the answer still names the game.
    let status = query(&["gamespy3", &server.addr("minecraft-query")]);
    assert_eq!(status["protocol"], "gamespy3");
    assert_eq!(status["game"], "minecraft");
}

#[test]
fn serve_as_a_game_and_auto_names_it() {
    let server = serve(&["--game", "csgo", "127.0.0.1:0"], &["a2s"]);
    let status = query(&["auto", &server.addr("a2s")]);
    assert_eq!(status["protocol"], "a2s");
    assert_eq!(status["game"], "csgo");
    assert_eq!(status["raw"]["app_id"], 730);
    assert_eq!(status["raw"]["folder"], "csgo");

    // An app id above 65535 travels in the 64-bit game id, as Steam servers send it.
    let server = serve(&["--game", "rust", "127.0.0.1:0"], &["a2s"]);
    let status = query(&["auto", &server.addr("a2s")]);
    assert_eq!(status["game"], "rust", "{status:#}");
    assert_eq!(status["raw"]["app_id"], 0);
    assert_eq!(status["raw"]["game_id"], "252490");

    // A GameSpy v1 game reports its gamename.
    let server = serve(
        &["--game", "unrealtournament", "127.0.0.1:0"],
        &["gamespy1"],
    );
    let status = query(&["auto", &server.addr("gamespy1")]);
    assert_eq!(status["game"], "unrealtournament", "{status:#}");
    assert_eq!(status["rules"]["gamename"], "ut");

    let ran = run(&["serve", "x.toml", "--game", "sqp", "127.0.0.1:0"]);
    ran.assert_error(3, &["--game needs a game id", "--sqp"]);
}

#[test]
fn bulk_lines_take_games_and_auto() {
    let server = serve(
        &["--a2s", "127.0.0.1:0", "--minecraft-query", "127.0.0.1:0"],
        &["a2s", "minecraft-query"],
    );
    let a2s_port = server.addresses["a2s"].port();
    let list = format!(
        "sdtd 127.0.0.1:{}\nauto {}\nrust {}\ngta5a 127.0.0.1\n",
        a2s_port - 1,
        server.addr("minecraft-query"),
        server.addr("a2s"),
    );
    let ran = run_with_stdin(&["bulk", "-t", "300ms", "-r", "0"], &list);
    let mut lines = ran.json_lines();
    lines.sort_by_key(|l| l["line"].as_u64());
    assert_eq!(lines.len(), 4, "{ran:#?}");
    assert_eq!(lines[0]["game"], "sdtd");
    assert_eq!(lines[0]["query_port"], a2s_port);
    assert_eq!(lines[0]["target"], format!("127.0.0.1:{}", a2s_port - 1));
    assert_eq!(lines[1]["protocol"], "minecraft-query");
    assert_eq!(lines[1]["game"], "minecraft");
    assert_eq!(lines[2]["game"], "rust");
    assert_eq!(lines[3]["error_kind"], "unknown_protocol");
}

/// A child process killed when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(url: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut response = agent.get(url).call().unwrap();
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

#[test]
fn the_exporter_probes_games_and_auto() {
    let server = serve(&["--minecraft-query", "127.0.0.1:0"], &["minecraft-query"]);
    let mut child = Command::new(gsq_path())
        .args(["exporter", "--listen", "127.0.0.1:0", "-t", "300ms"])
        .env_remove("GSQ_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn gsq exporter");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _running = Running(child);
    let url = line.trim().strip_prefix("exporter ").unwrap().to_owned();
    let target = server.addr("minecraft-query");

    let (code, body) = get(&format!("{url}/probe?protocol=auto&target={target}"));
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("gsq_up{game=\"minecraft\"} 1"), "{body}");
    let (code, body) = get(&format!("{url}/probe?game=minecraft&target={target}"));
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("gsq_up{game=\"minecraft\"} 1"), "{body}");
    let (code, body) = get(&format!("{url}/probe?game=gta5a&target={target}"));
    assert_eq!(code, 400);
    assert!(body.contains("alt:V Multiplayer"), "{body}");
    let (code, _) = get(&format!("{url}/metrics"));
    assert_eq!(code, 200);
}
