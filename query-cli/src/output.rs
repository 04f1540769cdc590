//! How results are shown: JSON for programs, tables for people.
//!
//! Everything printed in a table comes from a server that may be hostile, so text is made
//! safe for a terminal first: control characters (escape sequences could move the cursor or
//! retitle the window) are shown as `\u{..}` escapes.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};

use comfy_table::modifiers::UTF8_ROUND_CORNERS;
use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};
use indexmap::IndexMap;
use query_net::{Player, ServerStatus, Team};
use serde::Serialize;

use crate::cli::OutputArgs;
use crate::exit::{Failure, Outcome};

/// The output format chosen by the flags and whether stdout is a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables.
    Table,
    /// One JSON value per line.
    Json,
    /// Indented JSON.
    PrettyJson,
}

impl Format {
    /// `--pretty` or `--json` if given, `--table` if given, else a table on a terminal and
    /// JSON elsewhere.
    pub fn choose(args: &OutputArgs) -> Self {
        if args.pretty {
            Format::PrettyJson
        } else if args.json {
            Format::Json
        } else if args.table || io::stdout().is_terminal() {
            Format::Table
        } else {
            Format::Json
        }
    }
}

/// `value` as JSON text, compact or indented.
pub fn to_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Outcome<String> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.map_err(|e| Failure::internal(format!("cannot format the result as JSON: {e}")))
}

/// A JSON value that keeps its keys in the order they were written.
///
/// `serde_json::Value` sorts object keys unless serde_json's `preserve_order` feature is on,
/// and turning that on would change the key order of every crate in the workspace build.
/// Decoded packets read best in wire order, so they go through this instead.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum OrderedJson {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// Any number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<OrderedJson>),
    /// An object, keys in order.
    Object(IndexMap<String, OrderedJson>),
}

impl OrderedJson {
    /// `value` as JSON, keys in the order its `Serialize` writes them.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Outcome<Self> {
        serde_json::to_string(value)
            .and_then(|text| serde_json::from_str(&text))
            .map_err(|e| Failure::internal(format!("cannot format the result as JSON: {e}")))
    }

    /// Applies `edit` to every string value (not to object keys), depth first.
    pub fn map_strings(&mut self, edit: &impl Fn(&str) -> String) {
        match self {
            OrderedJson::String(text) => *text = edit(text),
            OrderedJson::Array(items) => items.iter_mut().for_each(|v| v.map_strings(edit)),
            OrderedJson::Object(fields) => fields.values_mut().for_each(|v| v.map_strings(edit)),
            OrderedJson::Null | OrderedJson::Bool(_) | OrderedJson::Number(_) => {}
        }
    }

    /// The field `key` of an object.
    #[cfg(test)]
    pub fn get(&self, key: &str) -> Option<&OrderedJson> {
        match self {
            OrderedJson::Object(fields) => fields.get(key),
            _ => None,
        }
    }
}

/// Writes `text` and a newline to stdout. A closed pipe (`gsq ... | head`) is not an error
/// worth a message; other write errors are.
pub fn print_line(text: &str) -> Outcome {
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")
        .and_then(|()| out.flush())
        .or_else(ignore_broken_pipe)
}

/// Treats a closed stdout as success: the reader has all it wanted.
pub fn ignore_broken_pipe(error: io::Error) -> Outcome {
    if error.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(Failure::internal(format!(
            "cannot write to stdout: {error}"
        )))
    }
}

/// A status in `format`: one line of JSON, indented JSON, or tables.
pub fn render_status(status: &ServerStatus, format: Format) -> Outcome<String> {
    match format {
        Format::Json => to_json(status, false),
        Format::PrettyJson => to_json(status, true),
        Format::Table => Ok(status_tables(status)),
    }
}

/// Text from a server, made safe to print on a terminal.
pub fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

fn new_table() -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .apply_modifier(UTF8_ROUND_CORNERS)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let columns = std::env::var("COLUMNS").ok();
    let width = table_width(table.width(), columns.as_deref());
    table.set_width(width);
    table
}

/// The width tables are fitted to when the terminal's own is unknown.
const FALLBACK_WIDTH: u16 = 80;

/// The width to fit tables to: the terminal's, else `$COLUMNS`, else 80 columns. A terminal
/// that reports a width of 0 (a pseudo-terminal under `script`, some CI runners) reports
/// none: fitting to it would wrap every cell one character a line.
fn table_width(reported: Option<u16>, columns: Option<&str>) -> u16 {
    reported
        .filter(|&width| width > 0)
        .or_else(|| {
            columns
                .and_then(|c| c.trim().parse::<u16>().ok())
                .filter(|&width| width > 0)
        })
        .unwrap_or(FALLBACK_WIDTH)
}

fn or_dash(value: Option<&str>) -> String {
    match value {
        Some(v) if !v.is_empty() => sanitize(v),
        _ => "-".to_owned(),
    }
}

/// The status as a header line, a key/value table, and tables of players, teams and rules.
pub fn status_tables(status: &ServerStatus) -> String {
    let mut out = String::new();
    // Loopback and LAN round trips are fractions of a millisecond.
    let decimals = if status.ping_ms < 10.0 { 2 } else { 0 };
    let _ = writeln!(
        out,
        "{} {}, answered in {:.*} ms{}",
        status.protocol,
        status.address,
        decimals,
        status.ping_ms,
        if status.complete {
            ""
        } else {
            " (incomplete: part of the reply never arrived)"
        }
    );

    let mut info = new_table();
    let password = match status.password {
        Some(true) => "yes",
        Some(false) => "no",
        None => "-",
    };
    let rows = [
        ("name", sanitize(&status.name)),
        ("map", or_dash(status.map.as_deref())),
        ("game type", or_dash(status.game_type.as_deref())),
        ("version", or_dash(status.version.as_deref())),
        (
            "players",
            format!("{} / {}", status.num_players, status.max_players),
        ),
        ("password", password.to_owned()),
    ];
    for (key, value) in rows {
        info.add_row(vec![Cell::new(key), Cell::new(value)]);
    }
    let _ = writeln!(out, "{info}");

    if !status.players.is_empty() {
        let _ = writeln!(out, "Players ({})", status.players.len());
        let _ = writeln!(out, "{}", players_table(&status.players));
    }
    if !status.teams.is_empty() {
        let _ = writeln!(out, "Teams ({})", status.teams.len());
        let _ = writeln!(out, "{}", teams_table(&status.teams));
    }
    if !status.rules.is_empty() {
        let _ = writeln!(out, "Rules ({})", status.rules.len());
        let mut rules = new_table();
        rules.set_header(vec!["rule", "value"]);
        for (key, value) in &status.rules {
            rules.add_row(vec![sanitize(key), sanitize(value)]);
        }
        let _ = writeln!(out, "{rules}");
    }
    out.truncate(out.trim_end().len());
    out
}

/// The columns a list of players needs: only those some player has a value for.
fn players_table(players: &[Player]) -> Table {
    let has = |f: fn(&Player) -> bool| players.iter().any(f);
    let (score, ping, id, team, uuid) = (
        has(|p| p.score.is_some()),
        has(|p| p.ping.is_some()),
        has(|p| p.id.is_some()),
        has(|p| p.team.is_some()),
        has(|p| p.uuid.is_some()),
    );
    let extra_keys = union_of_keys(players.iter().map(|p| &p.extra));

    let mut header = vec![Cell::new("name")];
    let numeric = |title: &str| Cell::new(title).set_alignment(CellAlignment::Right);
    if id {
        header.insert(0, numeric("id"));
    }
    if score {
        header.push(numeric("score"));
    }
    if ping {
        header.push(numeric("ping"));
    }
    if team {
        header.push(Cell::new("team"));
    }
    if uuid {
        header.push(Cell::new("uuid"));
    }
    header.extend(extra_keys.iter().map(|k| Cell::new(sanitize(k))));

    let mut table = new_table();
    table.set_header(header);
    let right = |text: String| Cell::new(text).set_alignment(CellAlignment::Right);
    let optional = |value: Option<String>| value.unwrap_or_else(|| "-".to_owned());
    for p in players {
        let mut row = Vec::new();
        if id {
            row.push(right(optional(p.id.map(|v| v.to_string()))));
        }
        row.push(Cell::new(sanitize(&p.name)));
        if score {
            row.push(right(optional(p.score.map(|v| v.to_string()))));
        }
        if ping {
            row.push(right(optional(p.ping.map(|v| v.to_string()))));
        }
        if team {
            row.push(Cell::new(or_dash(p.team.as_deref())));
        }
        if uuid {
            row.push(Cell::new(optional(p.uuid.map(|u| u.to_string()))));
        }
        for key in &extra_keys {
            row.push(Cell::new(or_dash(p.extra.get(key).map(String::as_str))));
        }
        table.add_row(row);
    }
    table
}

fn teams_table(teams: &[Team]) -> Table {
    let score = teams.iter().any(|t| t.score.is_some());
    let extra_keys = union_of_keys(teams.iter().map(|t| &t.extra));
    let mut header = vec![Cell::new("team")];
    if score {
        header.push(Cell::new("score"));
    }
    header.extend(extra_keys.iter().map(|k| Cell::new(sanitize(k))));
    let mut table = new_table();
    table.set_header(header);
    for t in teams {
        let mut row = vec![Cell::new(sanitize(&t.name))];
        if score {
            row.push(
                Cell::new(t.score.map_or_else(|| "-".to_owned(), |s| s.to_string()))
                    .set_alignment(CellAlignment::Right),
            );
        }
        for key in &extra_keys {
            row.push(Cell::new(or_dash(t.extra.get(key).map(String::as_str))));
        }
        table.add_row(row);
    }
    table
}

/// The keys of several maps, each once, in first-seen order.
fn union_of_keys<'a>(maps: impl Iterator<Item = &'a IndexMap<String, String>>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for map in maps {
        for key in map.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::Protocol;

    #[test]
    fn tables_fit_80_columns_when_the_terminal_reports_no_width() {
        assert_eq!(table_width(Some(120), Some("100")), 120);
        assert_eq!(table_width(Some(0), None), 80);
        assert_eq!(table_width(None, None), 80);
        assert_eq!(table_width(Some(0), Some("132")), 132);
        assert_eq!(table_width(None, Some("0")), 80);
        assert_eq!(table_width(None, Some("wide")), 80);
    }

    fn status() -> ServerStatus {
        let mut rules = IndexMap::new();
        rules.insert("difficulty".to_owned(), "hard".to_owned());
        ServerStatus {
            protocol: Protocol::Sqp,
            address: "127.0.0.1:7779".parse().unwrap(),
            name: "Evil\u{1b}]0;pwned\u{7} Server".to_owned(),
            map: Some("Highrise".to_owned()),
            game_type: None,
            version: Some("1.0".to_owned()),
            num_players: 2,
            max_players: 16,
            password: Some(false),
            players: vec![
                Player {
                    name: "Zoë".to_owned(),
                    score: Some(10),
                    ..Player::default()
                },
                Player {
                    name: "Jürgen".to_owned(),
                    ping: Some(35),
                    ..Player::default()
                },
            ],
            teams: Vec::new(),
            rules,
            ping_ms: 0.42,
            complete: true,
            raw: serde_json::Value::Null,
        }
    }

    #[test]
    fn tables_show_every_part_and_no_control_characters() {
        let text = status_tables(&status());
        assert!(
            text.starts_with("sqp 127.0.0.1:7779, answered in 0.42 ms"),
            "{text}"
        );
        for expected in [
            "Highrise",
            "2 / 16",
            "Zoë",
            "Jürgen",
            "difficulty",
            "hard",
            "score",
            "ping",
        ] {
            assert!(text.contains(expected), "{expected} missing:\n{text}");
        }
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{text:?}"
        );
        assert!(text.contains("\\u{1b}"), "{text}");
    }

    #[test]
    fn ordered_json_keeps_the_order_and_every_kind_of_value() {
        let text = r#"{"z":1,"a":[true,null,-2.5,"s"],"m":{"y":"é","b":18446744073709551615}}"#;
        let value: OrderedJson = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), text);
        let mut upper = value.clone();
        upper.map_strings(&|s| s.to_uppercase());
        assert_eq!(
            serde_json::to_string(&upper).unwrap(),
            r#"{"z":1,"a":[true,null,-2.5,"S"],"m":{"y":"É","b":18446744073709551615}}"#
        );
        assert_eq!(value.get("z"), Some(&OrderedJson::Number(1.into())));
    }

    #[test]
    fn json_is_the_status_itself() {
        let text = render_status(&status(), Format::Json).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["name"], "Evil\u{1b}]0;pwned\u{7} Server");
        assert_eq!(value["players"][0]["name"], "Zoë");
        assert!(!text.contains('\n'));
        assert!(render_status(&status(), Format::PrettyJson)
            .unwrap()
            .contains("\n  \"protocol\": \"sqp\""));
    }
}
