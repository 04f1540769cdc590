//! The catalogue's data: consistent, complete against gamedig's list, nothing dropped silently.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::process::Command;

use query_games::plan::companions;
use query_games::{catalogue, Catalogue, QueryPort};
use query_net::Protocol;

#[test]
fn ids_and_aliases_are_unique_lowercase_names() {
    let mut seen = HashSet::new();
    let c = catalogue();
    let names = c
        .games()
        .iter()
        .flat_map(|g| std::iter::once(&g.id).chain(&g.aliases))
        .chain(
            c.waiting()
                .iter()
                .flat_map(|w| std::iter::once(&w.id).chain(&w.aliases)),
        );
    for name in names {
        assert!(seen.insert(name.clone()), "{name} is used twice");
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
            "{name}"
        );
    }
    assert!(c.games().len() > 250, "{} games", c.games().len());
}

#[test]
fn every_protocol_has_games_and_every_game_a_known_protocol() {
    for protocol in Protocol::ALL {
        assert!(
            catalogue()
                .games()
                .iter()
                .any(|g| g.protocol == protocol || companions(g.protocol).contains(&protocol)),
            "no game answers {protocol}"
        );
    }
    for game in catalogue().games() {
        assert!(Protocol::ALL.contains(&game.protocol), "{}", game.id);
    }
}

#[test]
fn ports_are_in_range() {
    for game in catalogue().games() {
        assert_ne!(game.port, Some(0), "{}", game.id);
        match game.query {
            QueryPort::Fixed(port) => assert_ne!(port, 0, "{}", game.id),
            QueryPort::Offset(offset) => {
                if let Some(port) = game.port {
                    let query = i32::from(port) + offset;
                    assert!((1..=65535).contains(&query), "{}: {query}", game.id);
                    assert_eq!(game.default_query_port(), u16::try_from(query).ok());
                }
            }
        }
        // With or without a port, every game plans at least one port, or says why not.
        match game.query_ports(None) {
            Ok(ports) => assert!(!ports.is_empty() && !ports.contains(&0), "{}", game.id),
            Err(e) => assert!(game.port.is_none(), "{}: {e}", game.id),
        }
        let ports = game.query_ports(Some(65535)).unwrap();
        assert!(ports.contains(&65535) && !ports.contains(&0), "{}", game.id);
    }
}

/// `minecraft`, `quake3` and `samp` are protocol names and game ids (or aliases): the name
/// reads as the protocol, which must then query what the game would.
#[test]
fn a_name_of_both_a_protocol_and_a_game_means_the_same_query() {
    for game in catalogue().games() {
        for name in std::iter::once(&game.id).chain(&game.aliases) {
            if let Ok(protocol) = name.parse::<Protocol>() {
                assert_eq!(protocol, game.protocol, "{name}");
                assert_eq!(game.query, QueryPort::Offset(0), "{name}");
                assert_eq!(game.port, Some(protocol.default_port()), "{name}");
            }
        }
    }
}

/// What is left out, and why: the list is printed (`cargo test -p query-games -- --nocapture`),
/// and a family gsq comes to speak fails the test until its games move to `[games]`.
#[test]
fn waiting_games_are_listed_with_their_reason() {
    let c = catalogue();
    let mut by_family: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for waiting in c.waiting() {
        assert!(
            waiting.family.parse::<Protocol>().is_err(),
            "gsq speaks {} now: move {} ({}) to [games]",
            waiting.family,
            waiting.id,
            waiting.name
        );
        by_family
            .entry(&waiting.family)
            .or_default()
            .push(&waiting.id);
    }
    for (family, ids) in &by_family {
        let reason = c.family_reason(family).expect("every family says why");
        assert!(!reason.is_empty());
        println!("{family} ({reason}): {}", ids.join(", "));
    }
    // No reason is left over for a family without games.
    let query = Catalogue::parse(query_games::DATA).unwrap();
    for waiting in query.waiting() {
        assert!(query.family_reason(&waiting.family).is_some());
    }
    let families: HashSet<&str> = by_family.keys().copied().collect();
    for line in query_games::DATA
        .lines()
        .skip_while(|l| *l != "[families]")
        .skip(1)
    {
        if let Some((family, _)) = line.split_once(" = ") {
            assert!(families.contains(family), "{family} has no waiting game");
        }
    }
}

#[test]
fn bad_data_is_refused_with_the_game_named() {
    let refused = |text: &str, needle: &str| {
        let err = Catalogue::parse(text).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
    };
    refused(
        "[games]\na = { name = \"A\", protocol = \"a2s\", port = 1 }\nb = { name = \"B\", aliases = [\"a\"], protocol = \"a2s\", port = 1 }\n",
        "b: the name \"a\" is a's already",
    );
    refused(
        "[games]\na = { name = \"A\", protocol = \"tribes\", port = 1 }\n",
        "tribes",
    );
    refused(
        "[games]\na = { name = \"A\", protocol = \"a2s\", port = 70000 }\n",
        "70000",
    );
    refused(
        "[games]\na = { name = \"A\", protocol = \"a2s\", port = 65535, query_port_offset = 1 }\n",
        "a: port 65535 + offset 1",
    );
    refused(
        "[games]\nA = { name = \"A\", protocol = \"a2s\", port = 1 }\n",
        "lowercase",
    );
    refused(
        "[games]\n[waiting]\nw = { name = \"W\", family = \"x\", port = 1 }\n",
        "w: the family \"x\" has no line in [families]",
    );
    refused(
        "[games]\na = { name = \"A\", protocol = \"sqp\", port = 1, a2s_folder = \"x\" }\n",
        "A2S options on a sqp game",
    );
}

/// Every game of gamedig's list is in the catalogue or waits for its family, under the same
/// id, with the same name and ports. Needs gamedig from `tests/interop/install.sh`; skipped
/// without it, except under CI=true.
#[test]
fn every_gamedig_game_is_here_or_waits() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let games_js = root.join("tests/interop/node_modules/gamedig/lib/games.js");
    let missing = |why: String| {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{why}; tests/interop/install.sh installs it");
        }
        eprintln!("skipped: {why} (run tests/interop/install.sh)");
    };
    if !games_js.exists() {
        return missing(format!(
            "gamedig is not installed at {}",
            games_js.display()
        ));
    }
    let script = format!(
        "import('{}').then(m => console.log(JSON.stringify(m.games)))",
        games_js.display()
    );
    let output = match Command::new("node").args(["-e", &script]).output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => panic!(
            "node could not read gamedig's list: {}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) => return missing(format!("node does not run: {e}")),
    };
    let list: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&output.stdout).expect("gamedig's list as JSON");
    let c = catalogue();
    let mut checked = 0;
    for (id, entry) in &list {
        let options = &entry["options"];
        let port = options["port"].as_u64().map(|p| p as u16);
        let query_port = options["port_query"].as_u64().map(|p| p as u16);
        let offset = match &options["port_query_offset"] {
            serde_json::Value::Array(offsets) => offsets[0].as_i64(),
            other => other.as_i64(),
        };
        let old_id = entry["extra"]["old_id"].as_str();
        let name = entry["name"].as_str().unwrap();
        let (our_name, aliases, our_port, our_query) = if let Some(game) = c.find(id) {
            (&game.name, &game.aliases, game.port, game.query)
        } else if let Some(waiting) = c.find_waiting(id) {
            (&waiting.name, &waiting.aliases, waiting.port, waiting.query)
        } else {
            panic!("gamedig's {id} ({name}) is neither in [games] nor in [waiting]");
        };
        assert_eq!(our_name, name, "{id}");
        if let Some(old_id) = old_id {
            assert!(aliases.iter().any(|a| a == old_id), "{id}: alias {old_id}");
        }
        // Hytale: gamedig reads an HTTP plugin on 5523; gsq speaks OneQuery on the game port.
        // TeamSpeak 3: gamedig's port is the voice port (9987), its ServerQuery port (10011) an
        // option; `teamspeak3` is gsq's protocol name too, whose port is the ServerQuery port
        // (the voice port is --voice-port).
        if id != "hytale" && id != "teamspeak3" {
            assert_eq!(our_port, port, "{id}: game port");
        }
        match (query_port, offset) {
            (Some(q), _) => assert_eq!(our_query, QueryPort::Fixed(q), "{id}"),
            (None, Some(o)) => assert_eq!(our_query, QueryPort::Offset(o as i32), "{id}"),
            (None, None) => assert_eq!(our_query, QueryPort::Offset(0), "{id}"),
        }
        checked += 1;
    }
    assert!(checked > 300, "{checked}");
}
