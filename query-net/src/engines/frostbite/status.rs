//! The answers of a Frostbite server mapped to a [`ServerStatus`].
//!
//! `serverInfo` is read by the game `version` names: the words up to the team scores are the
//! same everywhere ([`SERVER_INFO_HEAD`]), the scores are a count, that many scores and the
//! target score, and the words after them are the game's own ([`Game::tail`]: Bad Company 2
//! has the mod and map pack, Battlefield 3 matchmaking, Battlefield 4 and Hardline the Blaze
//! counts). `listPlayers all` is a table whose header names its columns: it is read by name,
//! so a game that adds or reorders columns (BF4's `ping` and `type`, BC2's `clanTag`) reads
//! the same.
//!
//! - Strict: counts that are no numbers, scores or a table whose counts run past the words,
//!   and a table without a `name` column are errors: such an answer would be read from the
//!   wrong words.
//! - Lenient: a server of an older build that sends fewer words after the scores, or a game
//!   not known here, keeps what it sent; words past the known ones are kept as
//!   `rules.word_N`; a score that is a fraction (BC2 and BF4 tickets) keeps its text in the
//!   team's `extra.score`.

use std::net::SocketAddr;
use std::time::Duration;

use indexmap::IndexMap;
use query_specs::frostbite::{Game, OK, SERVER_INFO_HEAD};
use serde_json::{json, Map, Value};

use crate::error::QueryError;
use crate::protocol::Protocol;
use crate::status::{Player, ServerStatus, Team};

/// The most teams a `serverInfo` may count (the games have two, squad modes up to four).
pub const MAX_TEAMS: usize = 16;

/// The words of the three answers, `OK` first in each.
#[derive(Debug, Clone, Default)]
pub struct Answers {
    /// `serverInfo`.
    pub server_info: Vec<String>,
    /// `version`.
    pub version: Vec<String>,
    /// `listPlayers all`.
    pub players: Vec<String>,
}

/// The answer's words after `OK`, or its first word as the error.
fn ok_words<'w>(request: &str, words: &'w [String]) -> Result<&'w [String], String> {
    match words.split_first() {
        Some((status, rest)) if status.as_bytes() == OK => Ok(rest),
        Some((status, _)) => Err(format!("the server answered {request} with {status:?}")),
        None => Err(format!("the server answered {request} with no words")),
    }
}

fn number<T: std::str::FromStr>(words: &[String], at: usize, what: &str) -> Result<T, QueryError> {
    let word = words
        .get(at)
        .ok_or_else(|| QueryError::protocol(format!("serverInfo ends before {what}")))?;
    word.trim()
        .parse()
        .map_err(|_| QueryError::protocol(format!("serverInfo's {what} is no number: {word:?}")))
}

/// Whether `words` (`OK` first) are a `listPlayers` table whose counts add up.
pub fn is_player_table(words: &[String]) -> bool {
    matches!(ok_words("listPlayers", words), Ok(rest) if player_table(rest).is_ok())
}

/// The columns and rows of a `listPlayers` answer's words after `OK`.
fn player_table(words: &[String]) -> Result<(&[String], Vec<&[String]>), QueryError> {
    let bad = |why: &str| QueryError::protocol(format!("listPlayers: {why}"));
    let columns: usize = words
        .first()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| bad("the column count is no number"))?;
    let names = words
        .get(1..1 + columns)
        .ok_or_else(|| bad("fewer column names than the count"))?;
    let rows: usize = words
        .get(1 + columns)
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| bad("the row count is no number"))?;
    let values = &words[2 + columns..];
    if columns == 0 || values.len() != columns.saturating_mul(rows) {
        return Err(bad("the values do not fill the rows the header counts"));
    }
    if !names.iter().any(|n| n == "name") {
        return Err(bad("no `name` column"));
    }
    Ok((names, values.chunks(columns).collect()))
}

/// The players of a table, each read by column name.
fn players(names: &[String], rows: &[&[String]]) -> Vec<Player> {
    rows.iter()
        .map(|row| {
            let mut player = Player::default();
            for (column, value) in names.iter().zip(row.iter()) {
                match column.as_str() {
                    "name" => player.name = value.clone(),
                    "score" => player.score = value.parse().ok(),
                    "ping" => player.ping = value.parse().ok(),
                    "teamId" => player.team = Some(value.clone()),
                    _ => {
                        player.extra.insert(column.clone(), value.clone());
                    }
                }
            }
            player
        })
        .collect()
}

/// The status of a server whose three answers are `answers`; `rtt` is the round trip of the
/// first answer, `events_skipped` the server's own packets that were passed over.
pub fn from_answers(
    address: SocketAddr,
    answers: &Answers,
    rtt: Duration,
    events_skipped: u64,
) -> Result<ServerStatus, QueryError> {
    let version = ok_words("version", &answers.version).map_err(QueryError::protocol)?;
    let info = ok_words("serverInfo", &answers.server_info).map_err(QueryError::protocol)?;
    let game_word = version.first().cloned().unwrap_or_default();
    let build = version.get(1).cloned().unwrap_or_default();
    let game = Game::from_version(game_word.as_bytes());

    let head = SERVER_INFO_HEAD.len();
    let teams: usize = number(info, head, "the team count")?;
    if teams > MAX_TEAMS {
        return Err(QueryError::protocol(format!(
            "serverInfo counts {teams} teams, more than {MAX_TEAMS}"
        )));
    }
    let mut rules = IndexMap::new();
    let mut by_name = Map::new();
    for (name, value) in SERVER_INFO_HEAD.iter().zip(info) {
        by_name.insert((*name).to_owned(), value.clone().into());
    }
    let mut team_list = Vec::with_capacity(teams);
    for i in 0..teams {
        let at = head + 1 + i;
        let _: f64 = number(info, at, "a team score")?;
        let text = info[at].clone();
        let mut team = Team {
            name: (i + 1).to_string(),
            score: text.parse::<i64>().ok(),
            extra: IndexMap::new(),
        };
        if team.score.is_none() {
            team.extra.insert("score".to_owned(), text);
        }
        team_list.push(team);
    }
    let target_at = head + 1 + teams;
    let _: f64 = number(info, target_at, "the target score")?;
    rules.insert("roundsPlayed".to_owned(), info[5].clone());
    rules.insert("roundsTotal".to_owned(), info[6].clone());
    rules.insert("targetScore".to_owned(), info[target_at].clone());
    by_name.insert(
        "scores".to_owned(),
        json!(info[head + 1..target_at].to_vec()),
    );
    by_name.insert("targetScore".to_owned(), info[target_at].clone().into());
    let tail_names = game.map_or(&[][..], Game::tail);
    for (i, value) in info[target_at + 1..].iter().enumerate() {
        let name = tail_names.get(i).map_or_else(
            || format!("word_{}", target_at + 2 + i),
            |n| (*n).to_owned(),
        );
        by_name.insert(name.clone(), value.clone().into());
        rules.insert(name, value.clone());
    }
    let password = rules.get("hasGamePassword").map(|v| v == "true");

    let mut raw = Map::new();
    raw.insert("game".to_owned(), game_word.clone().into());
    raw.insert("build".to_owned(), build.clone().into());
    raw.insert("serverInfo".to_owned(), Value::Object(by_name));
    raw.insert("events_skipped".to_owned(), events_skipped.into());

    let mut status = ServerStatus {
        protocol: Protocol::Frostbite,
        address,
        name: info[0].clone(),
        map: Some(info[4].clone()),
        game_type: Some(info[3].clone()),
        version: Some(format!("{game_word} {build}").trim().to_owned()),
        num_players: number(info, 1, "the player count")?,
        max_players: number(info, 2, "the slots")?,
        password,
        players: Vec::new(),
        teams: team_list,
        rules,
        ping_ms: rtt.as_secs_f64() * 1000.0,
        complete: true,
        raw: Value::Null,
    };
    match ok_words("listPlayers", &answers.players) {
        Ok(words) => {
            let (names, rows) = player_table(words)?;
            status.players = players(names, &rows);
            raw.insert("columns".to_owned(), json!(names));
        }
        Err(refused) => {
            status.complete = false;
            raw.insert("players_error".to_owned(), refused.into());
        }
    }
    status.raw = Value::Object(raw);
    Ok(status)
}
