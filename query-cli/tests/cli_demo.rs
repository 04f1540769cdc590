//! `gsq demo`: the README's first command. It must work, be quick, and show every protocol.

mod cli_support;

use std::time::{Duration, Instant};

use cli_support::run;

#[test]
fn demo_queries_every_protocol_and_ends() {
    let started = Instant::now();
    let ran = run(&["demo", "--table"]);
    let took = started.elapsed();
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    // It takes well under a second on an idle machine; the bound only catches a hang, which a
    // machine busy with other work cannot be mistaken for.
    assert!(took < Duration::from_secs(60), "demo took {took:?}");
    assert_eq!(ran.stderr, "", "nothing on stderr when all goes well");
    let out = &ran.stdout;
    for protocol in ["sqp", "onequery", "samp", "gamespy1", "a2s"] {
        let header = format!("{protocol} 127.0.0.1:");
        assert_eq!(
            out.lines().filter(|l| l.starts_with(&header)).count(),
            1,
            "one table for {protocol}:\n{out}"
        );
    }
    for text in [
        "gsq demo — Café Ünïcode",
        "Zoë",
        "Jürgen",
        "Søren",
        "Highrise",
        "3 / 16",
    ] {
        assert!(out.contains(text), "{text:?} missing:\n{out}");
    }
}

#[test]
fn demo_json_is_one_status_per_protocol() {
    let ran = run(&["demo", "--json"]);
    let statuses = ran.json_lines();
    let mut protocols: Vec<&str> = statuses
        .iter()
        .map(|s| s["protocol"].as_str().unwrap())
        .collect();
    protocols.sort_unstable();
    // One status per protocol, none twice.
    assert_eq!(
        protocols,
        [
            "a2s",
            "bedrock",
            "doom3",
            "eye",
            "fivem",
            "gamespy1",
            "gamespy2",
            "gamespy3",
            "minecraft-query",
            "mumble",
            "onequery",
            "quake2",
            "quake3",
            "samp",
            "sqp",
            "teeworlds",
            "unreal2"
        ]
    );
    for status in &statuses {
        assert_eq!(status["num_players"], 3);
        assert_eq!(status["max_players"], 16);
        if status["protocol"] == "mumble" {
            // A Mumble pong carries counts and the version, no name.
            assert_eq!(status["name"], "");
            assert_eq!(status["version"], "1.0.3");
            assert_eq!(status["players"], serde_json::json!([]));
            continue;
        }
        // The Doom 3 engine's text is Latin-1, which has no dash.
        let name = match status["protocol"].as_str() {
            Some("doom3") => "gsq demo ? Café Ünïcode",
            _ => "gsq demo — Café Ünïcode",
        };
        assert_eq!(status["name"], name, "{status:#}");
        if status["protocol"] == "bedrock" {
            // A Bedrock pong carries counts, no names.
            assert_eq!(status["players"], serde_json::json!([]));
            continue;
        }
        if status["protocol"] == "fivem" {
            // FiveM's names come from its HTTP /players.json on the same port.
            assert_eq!(status["complete"], true, "{status:#}");
            assert_eq!(status["raw"]["players_source"], "/players.json");
        }
        let names: Vec<&str> = status["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Zoë", "Jürgen", "Søren"], "{status:#}");
        assert!(status["address"]
            .as_str()
            .unwrap()
            .starts_with("127.0.0.1:"));
    }
}

/// Under `script` (a pseudo-terminal of no size, as on some CI runners) the terminal reports a
/// width of 0: tables fall back to 80 columns instead of one character a line.
#[test]
fn tables_on_a_terminal_without_a_width_are_80_columns_wide() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "script (util-linux) is needed under CI"
        );
        eprintln!("skipped: no script command");
        return;
    }
    let command = format!("{} demo --table", cli_support::gsq_path());
    let output = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("COLUMNS")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{out}");
    let widest = out
        .lines()
        .filter(|line| line.starts_with('│') || line.starts_with('╭'))
        .map(|line| line.trim_end().chars().count())
        .max()
        .unwrap();
    assert!(
        (40..=80).contains(&widest),
        "widest table line {widest}:\n{out}"
    );
    assert!(out.contains("gsq demo — Café Ünïcode"), "{out}");
}
