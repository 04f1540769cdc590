//! The console `gsq serve --rcon` answers: a few srcds-like commands over the served state.
//!
//! The changes it makes (`hostname NAME`, `map NAME`, `kick NAME`) last until the state file
//! changes, which replaces the whole state.

use std::net::SocketAddr;

use query_net::rcon::server::CommandHandler;
use query_net::state::{ServerState, SharedState};

/// The commands, for `help`.
const HELP: &str = "\
status            the server's name, map and players
players           the players: name, score, ping
hostname [NAME]   show or set the server's name
map NAME          change the map (changelevel NAME too)
kick NAME         remove a player
echo TEXT         print TEXT
help              this list
";

/// Answers RCON commands from the shared state, and edits it.
#[derive(Debug, Clone)]
pub struct StateConsole {
    state: SharedState,
}

impl StateConsole {
    /// A console over `state`.
    pub fn new(state: SharedState) -> Self {
        StateConsole { state }
    }

    /// Runs `command` and returns its output.
    pub fn run(&self, command: &str) -> String {
        let command = command.trim();
        let (name, argument) = command
            .split_once(char::is_whitespace)
            .map_or((command, ""), |(name, rest)| (name, rest.trim()));
        let argument = argument.trim_matches('"');
        match name.to_ascii_lowercase().as_str() {
            "status" => status(&self.state.load()),
            "players" => players(&self.state.load()),
            "hostname" if argument.is_empty() => {
                format!("hostname = \"{}\"\n", self.state.load().name)
            }
            "hostname" => {
                self.state.update(|s| s.name = argument.to_owned());
                format!("hostname = \"{argument}\"\n")
            }
            "map" | "changelevel" if argument.is_empty() => {
                format!("map = \"{}\"\n", self.state.load().map)
            }
            "map" | "changelevel" => {
                self.state.update(|s| s.map = argument.to_owned());
                format!("changed the map to {argument}\n")
            }
            "kick" => self.kick(argument),
            "echo" => format!("{argument}\n"),
            "help" | "" => HELP.to_owned(),
            _ => format!("Unknown command \"{name}\"\n"),
        }
    }

    fn kick(&self, name: &str) -> String {
        if name.is_empty() {
            return "usage: kick NAME\n".to_owned();
        }
        if !self.state.load().players.iter().any(|p| p.name == name) {
            return format!("no player named \"{name}\"\n");
        }
        self.state.update(|s| {
            if let Some(at) = s.players.iter().position(|p| p.name == name) {
                s.players.remove(at);
            }
        });
        format!("kicked \"{name}\"\n")
    }
}

impl CommandHandler for StateConsole {
    async fn execute(&self, command: String, _peer: SocketAddr) -> String {
        self.run(&command)
    }
}

fn status(state: &ServerState) -> String {
    let mut out = format!(
        "hostname: {}\nmap     : {}\nplayers : {} ({} max)\n",
        state.name,
        state.map,
        state.num_players(),
        state.max_players
    );
    if !state.players.is_empty() {
        out.push('\n');
        out.push_str(&players(state));
    }
    out
}

fn players(state: &ServerState) -> String {
    let mut out = String::from("# name score ping\n");
    for (i, player) in state.players.iter().enumerate() {
        let id = player.id.map_or(i + 1, |id| id as usize);
        out.push_str(&format!(
            "#{id} \"{}\" {} {}\n",
            player.name, player.score, player.ping
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::state::PlayerState;

    fn console() -> StateConsole {
        StateConsole::new(SharedState::new(ServerState {
            name: "Test Server".into(),
            map: "de_dust2".into(),
            max_players: 16,
            players: vec![
                PlayerState {
                    name: "Zoë".into(),
                    score: 3,
                    ping: 40,
                    ..PlayerState::default()
                },
                PlayerState {
                    name: "Bob".into(),
                    ..PlayerState::default()
                },
            ],
            ..ServerState::default()
        }))
    }

    #[test]
    fn status_names_the_server_map_and_players() {
        let out = console().run("status");
        assert!(
            out.starts_with("hostname: Test Server\nmap     : de_dust2\nplayers : 2 (16 max)\n"),
            "{out}"
        );
        assert!(out.contains("#1 \"Zoë\" 3 40\n"), "{out}");
    }

    #[test]
    fn commands_change_the_state() {
        let console = console();
        assert_eq!(
            console.run("hostname \"New Name\""),
            "hostname = \"New Name\"\n"
        );
        assert_eq!(console.state.load().name, "New Name");
        console.run("changelevel cs_office");
        assert_eq!(console.state.load().map, "cs_office");
        assert_eq!(console.run("kick Bob"), "kicked \"Bob\"\n");
        assert_eq!(console.state.load().players.len(), 1);
        assert!(console.run("kick Bob").starts_with("no player"));
        assert!(console
            .run("sv_cheats 1")
            .starts_with("Unknown command \"sv_cheats\""));
    }
}
