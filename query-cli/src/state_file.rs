//! Loading a [`ServerState`] from a TOML or JSON file, chosen by extension.
//!
//! Errors say which file, which format, and where in it (serde's line and column), because
//! the person reading them is editing that file.

use std::fs;
use std::path::Path;

use query_net::state::ServerState;

use crate::exit::{Failure, Outcome};

/// The formats a state file can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFormat {
    /// `.toml`
    Toml,
    /// `.json`
    Json,
}

impl StateFormat {
    /// The format of `path`, by its extension.
    pub fn of(path: &Path) -> Outcome<Self> {
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("toml") => Ok(StateFormat::Toml),
            Some("json") => Ok(StateFormat::Json),
            _ => Err(
                Failure::state_file(format!("{}: unknown state file format", path.display()))
                    .hint("name the file *.toml or *.json"),
            ),
        }
    }
}

/// Reads and parses the state file at `path`.
pub fn load(path: &Path) -> Outcome<ServerState> {
    let format = StateFormat::of(path)?;
    let text = fs::read_to_string(path).map_err(|e| {
        let failure = Failure::state_file(format!("cannot read {}: {e}", path.display()));
        if e.kind() == std::io::ErrorKind::NotFound {
            failure
                .hint("check the path, or create the file (see 'gsq serve --help' for an example)")
        } else {
            failure
        }
    })?;
    parse(&text, format).map_err(|reason| {
        Failure::state_file(format!("{}: {reason}", path.display()))
            .hint("fix the file; see 'gsq serve --help' for the keys")
    })
}

/// Parses state text. An empty file is refused: it is what a reader sees halfway through
/// an editor's save, and serving a nameless server would be worse than keeping the old state.
pub fn parse(text: &str, format: StateFormat) -> Result<ServerState, String> {
    if text.trim().is_empty() {
        return Err("the file is empty".to_owned());
    }
    let state: ServerState = match format {
        StateFormat::Toml => toml::from_str(text).map_err(|e| one_line(&e.to_string()))?,
        StateFormat::Json => serde_json::from_str(text).map_err(|e| e.to_string())?,
    };
    let max = query_specs::sqp::MAX_METRICS;
    if state.metrics.len() > max {
        return Err(format!(
            "metrics: {} values, more than the {max} SQP's Metrics chunk holds",
            state.metrics.len()
        ));
    }
    Ok(state)
}

/// toml's errors draw the offending line over several lines; a log line needs one.
fn one_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // The shape is "TOML parse error at line L, column C", the source excerpt with a caret,
    // then the reason; keep the first and the last.
    match (lines.first(), lines.last()) {
        (Some(first), Some(last)) if lines.len() > 1 => format!("{first}: {last}"),
        (Some(first), _) => (*first).to_owned(),
        _ => message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn teams_are_numbers_or_names_and_metrics_are_bounded() {
        let state = parse(
            "metrics = [1, 2.5]\n[[players]]\nname = \"a\"\nteam = 3\n[[players]]\nname = \"b\"\nteam = \"red\"\n",
            StateFormat::Toml,
        )
        .unwrap();
        assert_eq!(state.metrics, [1.0, 2.5]);
        assert_eq!(state.players[0].team.as_deref(), Some("3"));
        assert_eq!(state.players[1].team.as_deref(), Some("red"));
        let json = parse(
            r#"{"players": [{"name": "c", "team": 0}]}"#,
            StateFormat::Json,
        )
        .unwrap();
        assert_eq!(json.players[0].team.as_deref(), Some("0"));
        let too_many = format!("metrics = [{}]", vec!["1"; 26].join(","));
        let why = parse(&too_many, StateFormat::Toml).unwrap_err();
        assert!(why.contains("26 values"), "{why}");
        assert!(parse("[[players]]\nteam = true\n", StateFormat::Toml).is_err());
    }

    #[test]
    fn toml_and_json_load_the_same_state() {
        let toml = parse(
            "name = \"Zoë's\"\nmax_players = 8\n[rules]\nb = 1\na = \"x\"\n",
            StateFormat::Toml,
        )
        .unwrap();
        let json = parse(
            r#"{"name": "Zoë's", "max_players": 8, "rules": {"b": 1, "a": "x"}}"#,
            StateFormat::Json,
        )
        .unwrap();
        assert_eq!(toml, json);
        assert_eq!(toml.rules.keys().collect::<Vec<_>>(), ["b", "a"]);
    }

    #[test]
    fn errors_are_one_line_and_say_where() {
        let err = parse("name = \"x\"\nmax_players = \"many\"\n", StateFormat::Toml).unwrap_err();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.contains("line 2"), "{err}");
        let err = parse(r#"{"nmae": "typo"}"#, StateFormat::Json).unwrap_err();
        assert!(err.contains("nmae"), "{err}");
        assert_eq!(
            parse("  \n", StateFormat::Toml).unwrap_err(),
            "the file is empty"
        );
    }

    #[test]
    fn format_comes_from_the_extension() {
        assert_eq!(
            StateFormat::of(Path::new("a/b.TOML")).unwrap(),
            StateFormat::Toml
        );
        assert_eq!(
            StateFormat::of(Path::new("s.json")).unwrap(),
            StateFormat::Json
        );
        let err = StateFormat::of(Path::new("state.yaml")).unwrap_err();
        assert!(err.to_string().contains("*.toml or *.json"), "{err}");
    }
}
