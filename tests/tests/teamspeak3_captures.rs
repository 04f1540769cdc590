//! TeamSpeak 3 ServerQuery: a real server's stream (banner, welcome, `serverinfo`,
//! `clientlist`, `channellist`, each answer ended by its error line, lines ended by `\n\r`,
//! the client having sent `use` before each command) decoded line by line with the declared
//! types, re-encoded to the same bytes, and read as a status compared field by field with the
//! other library's decode beside it.
//!
//! Where the other library disagrees with the bytes, the bytes win: it decodes the UTF-8 of
//! names a second time as Latin-1 (`Mist RÃ¡iders` for `Mist Ráiders`), which the comparison
//! undoes, and it lists the query client among the players.

use std::net::SocketAddr;

use query_net::engines::teamspeak3::status_from_stream;
use query_specs::teamspeak3::{ChannelEntry, ClientEntry, ErrorLine, Line, ServerInfo};
use query_tests::read_capture;
use query_wire::kv::{decode_rows, encode_rows, FromKeyValues, ToKeyValues};
use query_wire::{Decode, Reader};
use serde_json::Value;

fn capture() -> Option<(Vec<Vec<u8>>, Value)> {
    let pieces = read_capture("gameq/teamspeak3/teamspeak3_1_response.txt")?;
    let path =
        query_tests::vectors_dir()?.join("captures/gameq/teamspeak3/teamspeak3_1_result.json");
    let json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let (_, decoded) = json.as_object().unwrap().iter().next().unwrap();
    Some((pieces, decoded.clone()))
}

/// The other library's text with its second decode undone: its characters are the UTF-8
/// bytes of the name, each read as Latin-1.
fn their_text(value: &Value) -> String {
    let text = value.as_str().unwrap();
    let bytes: Option<Vec<u8>> = text.chars().map(|c| u8::try_from(c).ok()).collect();
    bytes
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_else(|| text.to_owned())
}

fn target() -> SocketAddr {
    "127.0.0.1:10011".parse().unwrap()
}

#[test]
fn every_line_decodes_and_reencodes_to_its_bytes() {
    let Some((pieces, _)) = capture() else {
        eprintln!("vectors absent: skipped");
        return;
    };
    let stream = pieces.concat();
    let mut r = Reader::new(&stream);
    let (mut errors, mut info, mut clients, mut channels) = (0, 0, 0, 0);
    while !r.is_empty() {
        let start = r.offset();
        let Ok(line) = Line::decode(&mut r, ()) else {
            // The `\r` of the last `\n\r`.
            assert_eq!(&stream[start..], b"\r");
            break;
        };
        let text = line.text();
        if text.starts_with(b"error") {
            let error = ErrorLine::from_bytes(text).unwrap();
            assert!(error.error && error.id == 0 && error.msg.as_str() == "ok");
            assert_eq!(error.to_vec().unwrap(), text);
            errors += 1;
        } else if text.starts_with(b"virtualserver_") {
            let decoded = ServerInfo::from_bytes(text).unwrap();
            assert_eq!(decoded.virtualserver_maxclients, 350);
            info += 1;
        } else if text.starts_with(b"clid=") {
            let rows: Vec<ClientEntry<'_>> = decode_rows(text).unwrap();
            assert_eq!(encode_rows(&rows).unwrap(), text, "clientlist re-encodes");
            clients += rows.len();
        } else if text.starts_with(b"cid=") {
            let rows: Vec<ChannelEntry<'_>> = decode_rows(text).unwrap();
            assert_eq!(encode_rows(&rows).unwrap(), text, "channellist re-encodes");
            channels += rows.len();
        }
    }
    assert_eq!((errors, info, clients, channels), (6, 1, 166, 214));
}

#[test]
fn the_status_matches_the_other_decode_field_by_field() {
    let Some((pieces, theirs)) = capture() else {
        return;
    };
    let pieces: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    let ours = status_from_stream(target(), &pieces).unwrap();
    assert_eq!(ours.name, theirs["virtualserver_name"].as_str().unwrap());
    assert_eq!(
        ours.version.as_deref(),
        theirs["virtualserver_version"].as_str()
    );
    assert_eq!(
        ours.max_players.to_string(),
        theirs["virtualserver_maxclients"].as_str().unwrap()
    );
    // 167 online, one of them a query client.
    assert_eq!(
        u64::from(ours.num_players),
        theirs["numplayers"].as_u64().unwrap()
    );
    assert_eq!(ours.password, Some(true));
    // Every serverinfo field, unescaped (`files\/virtualserver_1`, `Final\sday!`).
    for (key, value) in theirs.as_object().unwrap() {
        if key.starts_with("virtualserver_") || key.starts_with("connection_") {
            let ours_value = match key.as_str() {
                "virtualserver_name" => ours.name.clone(),
                "virtualserver_version" => ours.version.clone().unwrap(),
                "virtualserver_maxclients" => ours.max_players.to_string(),
                "virtualserver_clientsonline" => ours.raw[key].to_string(),
                "virtualserver_flag_password" => "1".to_owned(),
                _ => ours
                    .rules
                    .get(key)
                    .cloned()
                    .unwrap_or_else(|| panic!("{key}")),
            };
            assert_eq!(ours_value, value.as_str().unwrap(), "{key}");
        }
    }
    // People only: the other decode lists the query client too.
    let their_players = theirs["players"].as_array().unwrap();
    let their_people: Vec<&Value> = their_players
        .iter()
        .filter(|p| p["client_type"] == "0")
        .collect();
    assert_eq!(ours.players.len(), their_people.len());
    assert_eq!(ours.players.len(), 165);
    for (player, their) in ours.players.iter().zip(&their_people) {
        assert_eq!(player.name, their_text(&their["client_nickname"]));
        assert_eq!(
            player.id.map(|i| i.to_string()).as_deref(),
            their["clid"].as_str()
        );
        assert_eq!(player.extra["cid"], their["cid"].as_str().unwrap());
    }
    assert_eq!(
        ours.raw["query_clients"][0]["name"],
        "Unknown from 71.199.205.69:56260"
    );
    let channels = ours.raw["channels"].as_array().unwrap();
    let their_channels = theirs["teams"].as_array().unwrap();
    assert_eq!(channels.len(), their_channels.len());
    for (channel, their) in channels.iter().zip(their_channels) {
        assert_eq!(channel["name"], their_text(&their["channel_name"]));
        assert_eq!(channel["cid"].to_string(), their["cid"].as_str().unwrap());
        assert_eq!(
            channel["total_clients"].to_string(),
            their["total_clients"].as_str().unwrap()
        );
    }
    // A player's channel by name.
    assert_eq!(ours.players[1].name, "Waking Up");
    assert_eq!(
        ours.players[0].extra["channel"],
        channel_name(channels, 1542)
    );
}

fn channel_name(channels: &[Value], cid: u64) -> String {
    channels
        .iter()
        .find(|c| c["cid"] == cid)
        .and_then(|c| c["name"].as_str())
        .unwrap()
        .to_owned()
}

#[test]
fn the_stream_split_anywhere_reads_the_same() {
    let Some((pieces, _)) = capture() else {
        return;
    };
    let whole = pieces.concat();
    let expected = status_from_stream(target(), &[&whole]).unwrap();
    // Every cut in the banner and welcome, cuts through the rest, then one byte at a time.
    for cut in (1..200).chain((200..whole.len()).step_by(251)) {
        let got = status_from_stream(target(), &[&whole[..cut], &whole[cut..]]).unwrap();
        assert_eq!(got.rules, expected.rules, "{cut}");
    }
    let bytes: Vec<&[u8]> = whole.chunks(1).collect();
    let got = status_from_stream(target(), &bytes).unwrap();
    assert_eq!(got.players, expected.players);
}
