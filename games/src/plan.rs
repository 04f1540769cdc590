//! What to query: a protocol, a game, or `auto`, and the ports that follow from it.
//!
//! Every command that takes a protocol (`gsq query`, bulk lines, the exporter's `/probe` and
//! target file) reads it with [`Choice::from_str`] and asks [`Choice::attempts`] what to send
//! where. The attempts run at once; the first answer wins.
//!
//! ```
//! use query_games::plan::{Choice, Ports};
//! use query_net::Protocol;
//!
//! let sdtd: Choice = "7d2d".parse()?;
//! let attempts = sdtd.attempts(Ports { given: Some(26900), query: None })?;
//! let ports: Vec<u16> = attempts.iter().map(|a| a.port).collect();
//! assert_eq!(ports, [26901, 26900]);
//! assert!(attempts.iter().all(|a| a.protocol == Protocol::A2s));
//!
//! // A protocol takes the port as given, or its default.
//! let sqp: Choice = "sqp".parse()?;
//! assert_eq!(sqp.attempts(Ports::default())?[0].port, 7779);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

use query_net::Protocol;

use crate::{catalogue, Game, NoDefaultPort};

/// What a user asked to query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Find out: the protocols of the games that use the port first, then every protocol.
    Auto,
    /// This protocol; the port is its query port.
    Protocol(Protocol),
    /// This game; a port given is the game port, its query port follows from it.
    Game(&'static Game),
}

impl Choice {
    /// The protocol asked for, if one was.
    pub fn protocol(self) -> Option<Protocol> {
        match self {
            Choice::Auto => None,
            Choice::Protocol(protocol) => Some(protocol),
            Choice::Game(game) => Some(game.protocol),
        }
    }

    /// The game asked for, if one was.
    pub fn game(self) -> Option<&'static Game> {
        match self {
            Choice::Game(game) => Some(game),
            _ => None,
        }
    }

    /// Where and in which protocol to ask, the likeliest first; see [`Ports`].
    ///
    /// - A protocol: the query port, else the port as given, else the protocol's default.
    /// - A game: the query port, else those [`Game::query_ports`] derives from the port as
    ///   given (or its default query port), in its protocol and its [`companions`].
    /// - `auto`: with a port, first the games that use it (as their game port, at their
    ///   query port; or as their query port), then every protocol on the port itself; without
    ///   one, every protocol on its default port. A game's companions are asked with it
    ///   (Minecraft's UDP query beside its status ping). GameSpy 3 and Minecraft's query are
    ///   one wire protocol: only one of them is asked per port (Minecraft's where a Minecraft
    ///   game uses the port), so they never race each other; [`crate::identify`] names the
    ///   game from the answer.
    pub fn attempts(self, ports: Ports) -> Result<Vec<Attempt>, NoDefaultPort> {
        let mut attempts = Attempts::default();
        match self {
            Choice::Protocol(protocol) => {
                let port = ports
                    .query
                    .or(ports.given)
                    .unwrap_or(protocol.default_port());
                attempts.push(protocol, port, None, true);
            }
            Choice::Game(game) => {
                let list = match ports.query {
                    Some(port) => vec![port],
                    None => game.query_ports(ports.given)?,
                };
                for port in list {
                    attempts.push_game(game, port);
                }
            }
            Choice::Auto => match ports.query.or(ports.given) {
                Some(port) => {
                    let exact = ports.query.is_some();
                    for game in catalogue().games() {
                        if exact {
                            if game.default_query_port() == Some(port) {
                                attempts.push_game(game, port);
                            }
                            continue;
                        }
                        if game.port == Some(port) {
                            if let Ok(list) = game.query_ports(Some(port)) {
                                for derived in list {
                                    attempts.push_game(game, derived);
                                }
                            }
                        } else if game.default_query_port() == Some(port) {
                            attempts.push_game(game, port);
                        }
                    }
                    for protocol in Protocol::ALL {
                        attempts.push(protocol, port, None, false);
                    }
                }
                None => {
                    for protocol in Protocol::ALL {
                        attempts.push(protocol, protocol.default_port(), None, false);
                    }
                }
            },
        }
        Ok(attempts.0)
    }
}

/// The ports given with a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ports {
    /// The port of `HOST:PORT`: a game's game port, a protocol's query port.
    pub given: Option<u16>,
    /// `--query-port`: exactly this port, nothing derived.
    pub query: Option<u16>,
}

/// One query to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// The protocol to ask in.
    pub protocol: Protocol,
    /// The port to ask.
    pub port: u16,
    /// The game this attempt is for, when a game's ports chose it (the first such game).
    pub game: Option<&'static Game>,
    /// Whether the target's game or the games of its port chose it: `auto` starts these
    /// first and the protocols merely tried after a head start.
    pub likely: bool,
}

/// Attempts without two on one port in one wire protocol.
#[derive(Debug, Default)]
struct Attempts(Vec<Attempt>);

impl Attempts {
    fn push(&mut self, protocol: Protocol, port: u16, game: Option<&'static Game>, likely: bool) {
        let wire = wire(protocol);
        if self.0.iter().any(|a| a.port == port && wire_of(a) == wire) {
            return;
        }
        self.0.push(Attempt {
            protocol,
            port,
            game,
            likely,
        });
    }

    /// `game`'s protocol and its companions on `port`, all likely.
    fn push_game(&mut self, game: &'static Game, port: u16) {
        self.push(game.protocol, port, Some(game), true);
        for &companion in companions(game.protocol) {
            self.push(companion, port, Some(game), true);
        }
    }
}

/// The protocols a game of `protocol` may answer on the same port besides it: a Minecraft
/// Java server answers the status ping, and its UDP query when the operator turns it on.
pub fn companions(protocol: Protocol) -> &'static [Protocol] {
    match protocol {
        Protocol::Minecraft => &[Protocol::MinecraftQuery],
        _ => &[],
    }
}

/// Whether a game of `game_protocol` answers in `answer`'s protocol: its own wire protocol
/// or a companion's.
pub fn answers_in(game_protocol: Protocol, answer: Protocol) -> bool {
    wire(game_protocol) == wire(answer)
        || companions(game_protocol)
            .iter()
            .any(|&companion| wire(companion) == wire(answer))
}

fn wire_of(attempt: &Attempt) -> Protocol {
    wire(attempt.protocol)
}

/// The wire protocol: Minecraft's query is GameSpy 4, which the GameSpy 3 client speaks too.
pub fn wire(protocol: Protocol) -> Protocol {
    match protocol {
        Protocol::MinecraftQuery => Protocol::GameSpy3,
        other => other,
    }
}

/// Neither a protocol, a game, nor `auto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownChoice {
    /// As written.
    pub text: String,
    /// The protocol family a known game waits for, if it is one.
    pub waiting: Option<(String, String)>,
}

impl fmt::Display for UnknownChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.waiting {
            Some((name, family)) => write!(
                f,
                "{name} ({:?}) answers in a protocol gsq does not speak yet ({family})",
                self.text
            ),
            None => write!(
                f,
                "unknown protocol {:?}: expected one of {}, auto, or a game ('gsq games' lists them)",
                self.text,
                Protocol::names()
            ),
        }
    }
}

impl std::error::Error for UnknownChoice {}

/// The game named `text` (id or alias, any letter case), even where the name is a protocol's
/// too (`minecraft`): for places that take only games (`game=`, `gsq serve --game`).
pub fn game_named(text: &str) -> Result<&'static Game, UnknownChoice> {
    if let Some(game) = catalogue().find(text) {
        return Ok(game);
    }
    match text.parse::<Choice>() {
        Err(e) => Err(e),
        Ok(other) => Err(UnknownChoice {
            text: format!("{other}"),
            waiting: None,
        }),
    }
}

impl FromStr for Choice {
    type Err = UnknownChoice;

    /// `auto`, a protocol name, or a game's id or alias, in any letter case. A name that is
    /// both a protocol and a game id (`minecraft`, `quake3`, `samp`) is the protocol; the
    /// catalogue's tests check that both readings query the same ports.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Ok(Choice::Auto);
        }
        if let Ok(protocol) = text.parse::<Protocol>() {
            return Ok(Choice::Protocol(protocol));
        }
        if let Some(game) = catalogue().find(text) {
            return Ok(Choice::Game(game));
        }
        let waiting = catalogue().find_waiting(text).map(|w| {
            let why = catalogue().family_reason(&w.family).unwrap_or("");
            (w.name.clone(), format!("{}: {why}", w.family))
        });
        Err(UnknownChoice {
            text: text.to_owned(),
            waiting,
        })
    }
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Choice::Auto => f.write_str("auto"),
            Choice::Protocol(protocol) => write!(f, "{protocol}"),
            Choice::Game(game) => f.write_str(&game.id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(choice: &str, given: Option<u16>, query: Option<u16>) -> Vec<(Protocol, u16)> {
        choice
            .parse::<Choice>()
            .unwrap()
            .attempts(Ports { given, query })
            .unwrap()
            .iter()
            .map(|a| (a.protocol, a.port))
            .collect()
    }

    #[test]
    fn a_protocol_asks_its_port() {
        assert_eq!(ports("samp", None, None), [(Protocol::Samp, 7777)]);
        assert_eq!(ports("samp", Some(7000), None), [(Protocol::Samp, 7000)]);
        assert_eq!(
            ports("samp", Some(7000), Some(7001)),
            [(Protocol::Samp, 7001)]
        );
    }

    #[test]
    fn a_game_derives_its_query_port_and_tries_the_port_as_given() {
        // Offset +1.
        assert_eq!(ports("sdtd", None, None), [(Protocol::A2s, 26901)]);
        assert_eq!(
            ports("sdtd", Some(27000), None),
            [(Protocol::A2s, 27001), (Protocol::A2s, 27000)]
        );
        // A fixed query port: used for the default game port only.
        assert_eq!(ports("ase", None, None), [(Protocol::A2s, 27015)]);
        assert_eq!(
            ports("ase", Some(7777), None),
            [(Protocol::A2s, 27015), (Protocol::A2s, 7777)]
        );
        assert_eq!(ports("ase", Some(7787), None), [(Protocol::A2s, 7787)]);
        // The game port answers queries: one attempt.
        assert_eq!(ports("gtasam", Some(7778), None), [(Protocol::Samp, 7778)]);
        // --query-port is exact.
        assert_eq!(
            ports("sdtd", Some(26900), Some(28017)),
            [(Protocol::A2s, 28017)]
        );
        // Aliases.
        assert_eq!(ports("arkse", None, None), [(Protocol::A2s, 27015)]);
    }

    #[test]
    fn a_game_without_a_default_port_needs_one() {
        let brink: Choice = "brink".parse().unwrap();
        let err = brink.attempts(Ports::default()).unwrap_err();
        assert!(err.to_string().contains("brink"), "{err}");
        assert_eq!(ports("brink", Some(27015), None)[0], (Protocol::A2s, 27016));
    }

    #[test]
    fn auto_asks_the_games_of_the_port_first_and_minecraft_once() {
        let got = ports("auto", Some(25565), None);
        assert_eq!(got[0], (Protocol::Minecraft, 25565), "{got:?}");
        assert_eq!(got[1], (Protocol::MinecraftQuery, 25565), "{got:?}");
        assert!(
            !got.contains(&(Protocol::GameSpy3, 25565)),
            "GameSpy 3 and Minecraft's query race on one port: {got:?}"
        );
        // 7 Days to Die's game port: its query port first.
        let got = ports("auto", Some(26900), None);
        assert_eq!(got[0], (Protocol::A2s, 26901), "{got:?}");
        assert!(got.contains(&(Protocol::A2s, 26900)));
        // Every protocol is still tried on the port itself.
        for protocol in Protocol::ALL {
            assert!(
                got.iter()
                    .any(|&(p, port)| port == 26900 && wire(p) == wire(protocol)),
                "{protocol}: {got:?}"
            );
        }
        let attempts = "auto"
            .parse::<Choice>()
            .unwrap()
            .attempts(Ports {
                given: Some(26900),
                query: None,
            })
            .unwrap();
        assert!(attempts[0].likely && attempts[0].game.is_some());
        assert!(!attempts.last().unwrap().likely);
    }

    #[test]
    fn auto_without_a_port_asks_each_protocol_on_its_default() {
        let got = ports("auto", None, None);
        assert_eq!(got.len(), Protocol::ALL.len());
        for protocol in Protocol::ALL {
            assert!(got.contains(&(protocol, protocol.default_port())));
        }
    }

    #[test]
    fn names_parse_to_what_they_name() {
        assert_eq!("AUTO".parse::<Choice>(), Ok(Choice::Auto));
        assert_eq!(
            "minecraft".parse::<Choice>(),
            Ok(Choice::Protocol(Protocol::Minecraft))
        );
        assert_eq!("Rust".parse::<Choice>().unwrap().to_string(), "rust");
        let err = "tribes9".parse::<Choice>().unwrap_err().to_string();
        assert!(err.contains("gsq games") && err.contains("auto"), "{err}");
        assert_eq!(game_named("MineCraft").unwrap().id, "minecraft");
        assert!(game_named("sqp").is_err());
        assert!(game_named("gta5a")
            .unwrap_err()
            .to_string()
            .contains("alt:V Multiplayer"));
        let err = "gta5a".parse::<Choice>().unwrap_err().to_string();
        assert!(
            err.contains("alt:V Multiplayer") && err.contains("altvmp"),
            "{err}"
        );
    }
}
