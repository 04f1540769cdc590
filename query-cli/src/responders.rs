//! The responders `serve` and `demo` run: one per protocol, or one for all of them on a port.

use std::fmt;
use std::net::SocketAddr;

use query_net::clock::Now;
use query_net::engine::{ReplySink, Responder, Verdict};
use query_net::engines::a2s::{A2sConfig, A2sResponder};
use query_net::engines::all::AllProtocols;
use query_net::engines::ase::{AseConfig, AseResponder};
use query_net::engines::bedrock::{BedrockConfig, BedrockResponder};
use query_net::engines::doom3::{Doom3Config, Doom3Responder, Layout};
use query_net::engines::fivem::{FivemConfig, FivemResponder};
use query_net::engines::gamespy1::{GameSpy1Config, GameSpy1Responder};
use query_net::engines::gamespy2::{GameSpy2Config, GameSpy2Responder};
use query_net::engines::gamespy3::{GameSpy3Config, GameSpy3Responder};
use query_net::engines::mumble::{MumbleConfig, MumbleResponder};
use query_net::engines::onequery::{Access, AuthSecret, OneQueryResponder, Permissions};
use query_net::engines::quake2::{Quake2Config, Quake2Responder};
use query_net::engines::quake3::{Quake3Config, Quake3Responder};
use query_net::engines::samp::{unknown_command, SampConfig, SampResponder};
use query_net::engines::sqp::SqpResponder;
use query_net::engines::teeworlds::{TeeworldsConfig, TeeworldsResponder};
use query_net::engines::unreal2::{Unreal2Config, Unreal2Responder};
use query_net::state::{ServerState, SharedState};
use query_net::Protocol;
use query_wire::TextEncoding;

use crate::cli::PublicAccess;
use crate::exit::Outcome;

/// What one socket answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// One protocol.
    One(Protocol),
    /// Every protocol, told apart by their first bytes.
    All,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Role::One(p) => write!(f, "{p}"),
            Role::All => f.write_str("all"),
        }
    }
}

/// How the responders present the server, beyond the state.
#[derive(Clone)]
pub struct Settings {
    /// How SA:MP, GameSpy and Quake 3 text is encoded on the wire.
    pub encoding: TextEncoding,
    /// What OneQuery clients without a secret get.
    pub onequery_public: PublicAccess,
    /// OneQuery auth tokens that grant everything.
    pub onequery_secrets: Vec<String>,
    /// The SA:MP RCON password; RCON is off without one.
    pub samp_rcon_password: Option<String>,
    /// GameSpy v1 `gamename` (`ut`, `bfield1942`...); not sent when empty.
    pub gamespy1_game_name: String,
    /// Quake 3, GameSpy 2 and GameSpy 3 `gamename` (a game's, `gsq serve --game`); not sent
    /// when empty.
    pub game_name: String,
    /// How A2S presents the server and whether INFO needs a challenge.
    pub a2s: A2sConfig,
}

impl fmt::Debug for Settings {
    /// Secrets are never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Settings")
            .field("encoding", &self.encoding)
            .field("onequery_public", &self.onequery_public)
            .field("onequery_secrets", &self.onequery_secrets.len())
            .field("samp_rcon", &self.samp_rcon_password.is_some())
            .field("gamespy1_game_name", &self.gamespy1_game_name)
            .field("game_name", &self.game_name)
            .field("a2s", &self.a2s)
            .finish()
    }
}

impl Default for Settings {
    /// Public, Windows-1252 text, no RCON, A2S as a current Source server.
    fn default() -> Self {
        Settings {
            encoding: TextEncoding::Windows1252,
            onequery_public: PublicAccess::All,
            onequery_secrets: Vec::new(),
            samp_rcon_password: None,
            gamespy1_game_name: String::new(),
            game_name: String::new(),
            a2s: A2sConfig::default(),
        }
    }
}

/// A responder of any protocol, as a serve loop holds it.
pub type AnyResponder = Box<dyn Responder + Send>;

/// A boxed responder, as a [`Responder`] again (for `Service` and `driver::serve`).
pub struct Boxed(pub AnyResponder);

impl fmt::Debug for Boxed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Boxed(..)")
    }
}

impl Responder for Boxed {
    fn handle(
        &mut self,
        from: SocketAddr,
        datagram: &[u8],
        now: Now,
        replies: &mut ReplySink,
    ) -> Verdict {
        self.0.handle(from, datagram, now, replies)
    }
}

/// A responder for `role`, reading `state`.
pub fn build(role: Role, state: &SharedState, settings: &Settings) -> Outcome<AnyResponder> {
    Ok(match role {
        Role::One(Protocol::Sqp) => Box::new(SqpResponder::new(state.clone())),
        Role::One(Protocol::OneQuery) => Box::new(onequery(state, settings)),
        Role::One(Protocol::Samp) => Box::new(samp(state, settings)),
        Role::One(Protocol::GameSpy1) => Box::new(gamespy1(state, settings)),
        Role::One(Protocol::A2s) => Box::new(a2s(state, settings)),
        Role::One(Protocol::Quake3) => Box::new(quake3(state, settings)),
        Role::One(Protocol::Quake2) => Box::new(quake2(state, settings)),
        Role::One(Protocol::Fivem) => {
            Box::new(FivemResponder::new(state.clone(), FivemConfig::default()))
        }
        Role::One(Protocol::Doom3) => Box::new(doom3(state, settings)),
        Role::One(Protocol::GameSpy2) => Box::new(gamespy2(state, settings)),
        Role::One(Protocol::GameSpy3) => Box::new(gamespy3(state, settings, false)),
        Role::One(Protocol::MinecraftQuery) => Box::new(gamespy3(state, settings, true)),
        Role::One(Protocol::Minecraft) => {
            return Err(crate::exit::Failure::usage(
                "Minecraft's status ping is TCP: gsq serve answers it with --minecraft-java",
            ))
        }
        Role::One(Protocol::Frostbite) => {
            return Err(crate::exit::Failure::usage(
                "Frostbite is TCP: gsq serve answers it with --frostbite",
            ))
        }
        Role::One(Protocol::TeamSpeak3) => {
            return Err(crate::exit::Failure::usage(
                "TeamSpeak 3's ServerQuery is TCP: gsq serve answers it with --teamspeak3",
            ))
        }
        Role::One(Protocol::Bedrock) => Box::new(BedrockResponder::new(
            state.clone(),
            BedrockConfig::default(),
        )),
        Role::One(Protocol::Teeworlds) => Box::new(TeeworldsResponder::new(
            state.clone(),
            TeeworldsConfig::default(),
        )),
        Role::One(Protocol::Mumble) => {
            Box::new(MumbleResponder::new(state.clone(), MumbleConfig::default()))
        }
        Role::One(Protocol::Ase) => Box::new(ase(state, settings)),
        Role::One(Protocol::Unreal2) => Box::new(Unreal2Responder::new(
            state.clone(),
            Unreal2Config::default(),
        )),
        Role::All => Box::new(
            AllProtocols::new(state.clone())
                .with_onequery(onequery(state, settings))
                .with_samp(samp(state, settings))
                .with_gamespy1(gamespy1(state, settings))
                .with_a2s(a2s(state, settings))
                .with_quake3(quake3(state, settings))
                .with_quake2(quake2(state, settings))
                .with_doom3(doom3(state, settings))
                .with_gamespy2(gamespy2(state, settings))
                .with_gamespy3(gamespy3(state, settings, false)),
        ),
    })
}

/// Doom 3's reply unless `--game` names a game of another layout (`gamename` `Q4MP`: Quake
/// 4; `baseETQW-1`: ETQW), with the game's `gamename`.
fn doom3(state: &SharedState, settings: &Settings) -> Doom3Responder {
    let game_name = settings.game_name.to_ascii_lowercase();
    let layout = if game_name.starts_with("q4") {
        Layout::Quake4
    } else if game_name.contains("etqw") {
        Layout::Etqw
    } else {
        Layout::Doom3
    };
    let mut config = Doom3Config::of(layout);
    if !settings.game_name.is_empty() {
        config.game_name.clone_from(&settings.game_name);
    }
    Doom3Responder::new(state.clone(), config)
}

/// ASE text is UTF-8 (as MTA sends it) unless `--encoding` chose another; `--game`'s
/// `gamename` is sent as the game's short name.
fn ase(state: &SharedState, settings: &Settings) -> AseResponder {
    let mut config = AseConfig::default();
    if settings.encoding != Settings::default().encoding {
        config.encoding = settings.encoding;
    }
    if !settings.game_name.is_empty() {
        config.game.clone_from(&settings.game_name);
    }
    AseResponder::new(state.clone(), config)
}

fn gamespy1(state: &SharedState, settings: &Settings) -> GameSpy1Responder {
    GameSpy1Responder::new(
        state.clone(),
        GameSpy1Config {
            game_name: settings.gamespy1_game_name.clone(),
            encoding: settings.encoding,
            ..GameSpy1Config::default()
        },
    )
}

fn gamespy2(state: &SharedState, settings: &Settings) -> GameSpy2Responder {
    GameSpy2Responder::new(
        state.clone(),
        GameSpy2Config {
            game_name: settings.game_name.clone(),
            encoding: settings.encoding,
            ..GameSpy2Config::default()
        },
    )
}

fn quake3(state: &SharedState, settings: &Settings) -> Quake3Responder {
    Quake3Responder::new(
        state.clone(),
        Quake3Config {
            game_name: settings.game_name.clone(),
            encoding: settings.encoding,
            ..Quake3Config::default()
        },
    )
}

/// Quake 2's `gamename` is `baseq2` unless one is given; its text in the serve encoding.
fn quake2(state: &SharedState, settings: &Settings) -> Quake2Responder {
    let defaults = Quake2Config::default();
    Quake2Responder::new(
        state.clone(),
        Quake2Config {
            game_name: if settings.game_name.is_empty() {
                defaults.game_name.clone()
            } else {
                settings.game_name.clone()
            },
            encoding: settings.encoding,
            ..defaults
        },
    )
}

/// Both GameSpy 3 and Minecraft responders require the challenge (a query without one gets
/// only the challenge back). Minecraft's text in its default encoding, the others' in the
/// serve encoding.
fn gamespy3(state: &SharedState, settings: &Settings, minecraft: bool) -> GameSpy3Responder {
    let encoding = if minecraft {
        query_net::engines::gamespy3::MINECRAFT_ENCODING
    } else {
        settings.encoding
    };
    GameSpy3Responder::new(
        state.clone(),
        GameSpy3Config {
            game_name: if minecraft {
                "MINECRAFT".to_owned()
            } else {
                settings.game_name.clone()
            },
            encoding,
            ..GameSpy3Config::default()
        },
    )
}

fn a2s(state: &SharedState, settings: &Settings) -> A2sResponder {
    A2sResponder::new(state.clone(), settings.a2s.clone())
}

fn onequery(state: &SharedState, settings: &Settings) -> OneQueryResponder {
    let public = match settings.onequery_public {
        PublicAccess::All => Permissions::all(),
        PublicAccess::Basic => Permissions::BASIC,
        PublicAccess::None => Permissions::empty(),
    };
    let secrets = settings
        .onequery_secrets
        .iter()
        .filter(|s| !s.is_empty())
        .map(|secret| AuthSecret {
            secret: secret.clone(),
            grants: Permissions::all(),
        })
        .collect();
    OneQueryResponder::new(state.clone()).with_access(Access { public, secrets })
}

fn samp(state: &SharedState, settings: &Settings) -> SampResponder {
    SampResponder::new(
        state.clone(),
        SampConfig {
            encoding: settings.encoding,
            rcon_password: settings.samp_rcon_password.clone(),
            ..SampConfig::default()
        },
    )
    .with_rcon_handler(rcon_command)
}

/// The RCON console of `gsq serve`: a few read-only commands answered from the state.
pub fn rcon_command(command: &str, state: &ServerState) -> Vec<String> {
    let (name, argument) = command
        .trim()
        .split_once(' ')
        .unwrap_or((command.trim(), ""));
    match name {
        "players" => {
            let mut lines = vec!["ID\tName\tPing\tScore".to_owned()];
            lines.extend(state.players.iter().enumerate().map(|(i, p)| {
                let id = p.id.map_or(i, |id| usize::try_from(id).unwrap_or(i));
                format!("{id}\t{}\t{}\t{}", p.name, p.ping, p.score)
            }));
            lines
        }
        "hostname" => vec![format!("hostname = \"{}\"", state.name)],
        "echo" => vec![argument.to_owned()],
        _ => unknown_command(command, state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::state::PlayerState;

    #[test]
    fn the_console_answers_from_the_state() {
        let state = ServerState {
            name: "Los Santos".into(),
            players: vec![PlayerState {
                name: "Zoë".into(),
                score: 3,
                ping: 40,
                id: Some(7),
                ..PlayerState::default()
            }],
            ..ServerState::default()
        };
        assert_eq!(rcon_command("players", &state)[1], "7\tZoë\t40\t3");
        assert_eq!(
            rcon_command("hostname", &state),
            ["hostname = \"Los Santos\""]
        );
        assert_eq!(rcon_command("echo hi there", &state), ["hi there"]);
        assert!(rcon_command("gmx", &state)[0].starts_with("Unknown command"));
    }

    #[test]
    fn every_role_builds() {
        let state = SharedState::default();
        let settings = Settings::default();
        for role in Protocol::DATAGRAM
            .map(Role::One)
            .into_iter()
            .chain([Role::All])
        {
            assert!(build(role, &state, &settings).is_ok(), "{role}");
        }
    }
}
