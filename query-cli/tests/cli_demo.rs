//! `gsq demo`: the README's first command. It must work, be quick, and show every protocol.

mod cli_support;

use std::time::{Duration, Instant};

use cli_support::run;

#[test]
fn demo_queries_every_protocol_in_under_five_seconds() {
    let started = Instant::now();
    let ran = run(&["demo", "--table"]);
    let took = started.elapsed();
    assert_eq!(ran.code, Some(0), "{ran:#?}");
    assert!(took < Duration::from_secs(5), "demo took {took:?}");
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
    assert_eq!(statuses.len(), 10, "{ran:#?}");
    let mut protocols: Vec<&str> = statuses
        .iter()
        .map(|s| s["protocol"].as_str().unwrap())
        .collect();
    protocols.sort_unstable();
    assert_eq!(
        protocols,
        [
            "a2s",
            "bedrock",
            "gamespy1",
            "gamespy2",
            "gamespy3",
            "minecraft-query",
            "onequery",
            "quake3",
            "samp",
            "sqp"
        ]
    );
    for status in &statuses {
        assert_eq!(status["name"], "gsq demo — Café Ünïcode", "{status:#}");
        assert_eq!(status["num_players"], 3);
        assert_eq!(status["max_players"], 16);
        if status["protocol"] == "bedrock" {
            // A Bedrock pong carries counts, no names.
            assert_eq!(status["players"], serde_json::json!([]));
            continue;
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
