//! The catalogue of games `gsq` can query: people name the game they run, not its query
//! protocol.
//!
//! The catalogue is data, `games.toml` in this crate, compiled in and read once
//! ([`catalogue`]). A data file rather than a Rust table because it is generated from the most
//! used library's games list and then edited by people: one line per game, reviewable diffs,
//! and adding a game (or moving one from `[waiting]` when its protocol family lands) is a
//! one-line change. Everything in it is checked when it is read ([`Catalogue::parse`]): ids
//! and aliases unique, protocols known, ports in range, every waiting family explained.
//!
//! - [`Game`]: id (gamedig's, its former ids as aliases), display name, protocol, ports,
//!   protocol options and a note.
//! - [`plan`]: what to query for a protocol, a game or `auto`, and on which ports.
//! - [`identify`]: which game an answer came from.
//!
//! ```
//! use query_games::{catalogue, QueryPort};
//! use query_net::Protocol;
//!
//! let sdtd = catalogue().find("sdtd").unwrap();
//! assert_eq!(sdtd.name, "7 Days to Die");
//! assert_eq!(sdtd.protocol, Protocol::A2s);
//! assert_eq!(sdtd.port, Some(26900));
//! assert_eq!(sdtd.query, QueryPort::Offset(1));
//! // The query port follows the game port players connect to; the port as given is tried too.
//! assert_eq!(sdtd.query_ports(Some(27000)), Ok(vec![27001, 27000]));
//! // Former ids still work.
//! assert_eq!(catalogue().find("7D2D").unwrap().id, "sdtd");
//! ```

pub mod identify;
pub mod plan;

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use indexmap::IndexMap;
use query_net::Protocol;
use query_wire::TextEncoding;
use serde::{Deserialize, Serialize};

/// The catalogue's data, as compiled in.
pub const DATA: &str = include_str!("../games.toml");

/// The catalogue compiled into this crate, read on first use.
///
/// The data is checked by this crate's tests, so reading it cannot fail in a build that
/// passed them; should it fail anyway, the panic names the line at fault.
pub fn catalogue() -> &'static Catalogue {
    static CATALOGUE: OnceLock<Catalogue> = OnceLock::new();
    CATALOGUE.get_or_init(|| match Catalogue::parse(DATA) {
        Ok(catalogue) => catalogue,
        Err(e) => panic!("the compiled-in games.toml is invalid: {e}"),
    })
}

/// Where a game answers queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPort {
    /// A port of its own, whatever the game port is (ARK: 27015).
    Fixed(u16),
    /// The game port plus this (Rust: +1; 0 when the game port answers queries).
    Offset(i32),
}

/// One game whose protocol `gsq` speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    /// Lowercase id: gamedig's where it has the game.
    pub id: String,
    /// Former ids, accepted as well.
    pub aliases: Vec<String>,
    /// Display name.
    pub name: String,
    /// Its query protocol.
    pub protocol: Protocol,
    /// The default game port (players connect to it); `None` where no default is known.
    pub port: Option<u16>,
    /// Where it answers queries.
    pub query: QueryPort,
    /// A2S: its Steam app id (2400, The Ship, changes the reply's layout).
    pub a2s_app_id: Option<u32>,
    /// A2S: the game folder its servers report.
    pub a2s_folder: Option<String>,
    /// The `gamename` (Minecraft: `game_id`) its servers report.
    pub gamename: Vec<String>,
    /// Its text encoding, where it is not the protocol's default.
    pub encoding: Option<TextEncoding>,
    /// A server setting or habit a full answer depends on.
    pub note: Option<String>,
}

impl Game {
    /// The query port of a server on the default game port, if one is known.
    pub fn default_query_port(&self) -> Option<u16> {
        match self.query {
            QueryPort::Fixed(port) => Some(port),
            QueryPort::Offset(offset) => self.port.and_then(|port| offset_port(port, offset)),
        }
    }

    /// The query port as a fixed number, `None` where it is derived from the game port.
    pub fn fixed_query_port(&self) -> Option<u16> {
        match self.query {
            QueryPort::Fixed(port) => Some(port),
            QueryPort::Offset(_) => None,
        }
    }

    /// The offset from the game port, `None` where the query port is fixed.
    pub fn query_port_offset(&self) -> Option<i32> {
        match self.query {
            QueryPort::Fixed(_) => None,
            QueryPort::Offset(offset) => Some(offset),
        }
    }

    /// The ports to query for a server whose game port (the one players connect to) is
    /// `game_port`, most likely first; without one, the default query port.
    ///
    /// - Query port at an offset: the game port plus the offset, then the port as given (a
    ///   user may have given the query port).
    /// - A fixed query port: it, then the port as given, when the game port is the default
    ///   one; another game port is another server of the same host, whose query port cannot
    ///   be the fixed one (asking there would name a neighbour), so only the port as given.
    pub fn query_ports(&self, game_port: Option<u16>) -> Result<Vec<u16>, NoDefaultPort> {
        let Some(given) = game_port else {
            return self
                .default_query_port()
                .map(|port| vec![port])
                .ok_or_else(|| NoDefaultPort(self.id.clone()));
        };
        let derived = match self.query {
            QueryPort::Offset(offset) => offset_port(given, offset),
            QueryPort::Fixed(port) => (self.port == Some(given)).then_some(port),
        };
        let mut ports = Vec::with_capacity(2);
        ports.extend(derived);
        if !ports.contains(&given) {
            ports.push(given);
        }
        Ok(ports)
    }

    /// Whether `text` names this game: its id or an alias, in any letter case.
    pub fn is_named(&self, text: &str) -> bool {
        let text = text.trim();
        self.id.eq_ignore_ascii_case(text)
            || self.aliases.iter().any(|a| a.eq_ignore_ascii_case(text))
    }
}

/// `port + offset`, if that is a port (1-65535).
fn offset_port(port: u16, offset: i32) -> Option<u16> {
    u16::try_from(i32::from(port) + offset)
        .ok()
        .filter(|p| *p != 0)
}

/// A game without a default port was given none.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no default port is known for {0}: give the port players connect to, as HOST:PORT, or --query-port")]
pub struct NoDefaultPort(pub String);

/// A game of a protocol family `gsq` does not speak yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Waiting {
    /// Its id (gamedig's where it has the game).
    pub id: String,
    /// Former ids.
    pub aliases: Vec<String>,
    /// Display name.
    pub name: String,
    /// The protocol family it waits for.
    pub family: String,
    /// Its default game port, if known.
    pub port: Option<u16>,
    /// Where it answers queries (family permitting).
    pub query: QueryPort,
}

/// Every game: those `gsq` can query and those that wait for their protocol family.
#[derive(Debug, Clone)]
pub struct Catalogue {
    games: Vec<Game>,
    waiting: Vec<Waiting>,
    families: IndexMap<String, String>,
    /// Lowercase ids and aliases of `games`, to their index.
    names: HashMap<String, usize>,
}

/// What is wrong with catalogue data: the game (or line) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CatalogueError(String);

/// One line of `[games]` or `[waiting]`, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
    protocol: Option<String>,
    family: Option<String>,
    port: Option<u16>,
    query_port: Option<u16>,
    query_port_offset: Option<i32>,
    a2s_app_id: Option<u32>,
    a2s_folder: Option<String>,
    #[serde(default)]
    gamename: Vec<String>,
    encoding: Option<String>,
    note: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    games: IndexMap<String, Line>,
    #[serde(default)]
    waiting: IndexMap<String, Line>,
    #[serde(default)]
    families: IndexMap<String, String>,
}

impl Catalogue {
    /// Reads and checks catalogue data (the format of `games.toml`).
    pub fn parse(text: &str) -> Result<Catalogue, CatalogueError> {
        let file: File =
            toml::from_str(text).map_err(|e| CatalogueError(format!("games.toml: {e}")))?;
        let mut catalogue = Catalogue {
            games: Vec::with_capacity(file.games.len()),
            waiting: Vec::with_capacity(file.waiting.len()),
            families: file.families,
            names: HashMap::new(),
        };
        let mut seen: HashMap<String, String> = HashMap::new();
        for (id, line) in file.games.iter().chain(&file.waiting) {
            for name in std::iter::once(id).chain(&line.aliases) {
                check_id(id, name)?;
                if let Some(other) = seen.insert(name.clone(), id.clone()) {
                    return Err(CatalogueError(format!(
                        "{id}: the name {name:?} is {other}'s already"
                    )));
                }
            }
        }
        for (id, line) in file.games {
            let game = game(&id, line)?;
            catalogue
                .names
                .insert(game.id.clone(), catalogue.games.len());
            for alias in &game.aliases {
                catalogue.names.insert(alias.clone(), catalogue.games.len());
            }
            catalogue.games.push(game);
        }
        for (id, line) in file.waiting {
            let waiting = waiting(&id, line)?;
            if !catalogue.families.contains_key(&waiting.family) {
                return Err(CatalogueError(format!(
                    "{id}: the family {:?} has no line in [families] saying why it waits",
                    waiting.family
                )));
            }
            catalogue.waiting.push(waiting);
        }
        Ok(catalogue)
    }

    /// Every game `gsq` can query, in catalogue order.
    pub fn games(&self) -> &[Game] {
        &self.games
    }

    /// The games that wait for a protocol family `gsq` does not speak yet.
    pub fn waiting(&self) -> &[Waiting] {
        &self.waiting
    }

    /// Why `family` is not spoken yet.
    pub fn family_reason(&self, family: &str) -> Option<&str> {
        self.families.get(family).map(String::as_str)
    }

    /// The game with this id or alias, in any letter case.
    pub fn find(&self, name: &str) -> Option<&Game> {
        self.names
            .get(&name.trim().to_ascii_lowercase())
            .map(|&index| &self.games[index])
    }

    /// A waiting game with this id or alias.
    pub fn find_waiting(&self, name: &str) -> Option<&Waiting> {
        let name = name.trim();
        self.waiting.iter().find(|w| {
            w.id.eq_ignore_ascii_case(name)
                || w.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// The games matching `text`: its words each in the id, an alias or the name (any
    /// letter case), or `text` the protocol's name. Everything for an empty `text`.
    pub fn search(&self, text: &str) -> Vec<&Game> {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        self.games
            .iter()
            .filter(|game| {
                if words.len() == 1 && game.protocol.name() == words[0] {
                    return true;
                }
                let name = game.name.to_lowercase();
                words.iter().all(|word| {
                    game.id.contains(word.as_str())
                        || game.aliases.iter().any(|a| a.contains(word.as_str()))
                        || name.contains(word.as_str())
                })
            })
            .collect()
    }

    /// The games whose default game port or default query port is `port`.
    pub fn on_port(&self, port: u16) -> impl Iterator<Item = &Game> + '_ {
        self.games
            .iter()
            .filter(move |g| g.port == Some(port) || g.default_query_port() == Some(port))
    }
}

/// Ids and aliases: lowercase ASCII letters and digits (gamedig's form), so they are typed
/// without quoting and compared without case.
fn check_id(id: &str, name: &str) -> Result<(), CatalogueError> {
    let fine = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    if fine {
        Ok(())
    } else {
        Err(CatalogueError(format!(
            "{id}: {name:?} is not a lowercase id of letters and digits"
        )))
    }
}

fn query_port(id: &str, line: &Line) -> Result<QueryPort, CatalogueError> {
    let bad = |why: &str| Err(CatalogueError(format!("{id}: {why}")));
    if line.port == Some(0) || line.query_port == Some(0) {
        return bad("port 0 is not a port");
    }
    let query = match (line.query_port, line.query_port_offset) {
        (Some(_), Some(_)) => return bad("give query_port or query_port_offset, not both"),
        (Some(port), None) => QueryPort::Fixed(port),
        (None, offset) => QueryPort::Offset(offset.unwrap_or(0)),
    };
    if let (QueryPort::Offset(offset), Some(port)) = (query, line.port) {
        if offset_port(port, offset).is_none() {
            return bad(&format!("port {port} + offset {offset} is not a port"));
        }
    }
    if line.port.is_none() && line.query_port.is_none() && line.query_port_offset.is_none() {
        return bad("neither a game port nor a query port");
    }
    Ok(query)
}

fn game(id: &str, line: Line) -> Result<Game, CatalogueError> {
    let bad = |why: String| CatalogueError(format!("{id}: {why}"));
    if line.family.is_some() {
        return Err(bad(
            "`family` belongs in [waiting]; a game here has a `protocol`".into(),
        ));
    }
    let protocol: Protocol = line
        .protocol
        .as_deref()
        .ok_or_else(|| bad("no protocol".into()))?
        .parse()
        .map_err(|e| bad(format!("{e}")))?;
    let query = query_port(id, &line)?;
    let encoding = line
        .encoding
        .as_deref()
        .map(|e| e.parse::<TextEncoding>().map_err(|e| bad(e.to_string())))
        .transpose()?;
    if protocol != Protocol::A2s && (line.a2s_app_id.is_some() || line.a2s_folder.is_some()) {
        return Err(bad(format!("A2S options on a {protocol} game")));
    }
    if line.name.trim().is_empty() {
        return Err(bad("no name".into()));
    }
    Ok(Game {
        id: id.to_owned(),
        aliases: line.aliases,
        name: line.name,
        protocol,
        port: line.port,
        query,
        a2s_app_id: line.a2s_app_id,
        a2s_folder: line.a2s_folder,
        gamename: line.gamename,
        encoding,
        note: line.note,
    })
}

fn waiting(id: &str, line: Line) -> Result<Waiting, CatalogueError> {
    let bad = |why: &str| CatalogueError(format!("{id}: {why}"));
    let family = line
        .family
        .clone()
        .ok_or_else(|| bad("a waiting game names its `family`"))?;
    if line.protocol.is_some() {
        return Err(bad("a game with a `protocol` belongs in [games]"));
    }
    let query = query_port(id, &line).or_else(|e| {
        // Some families need no port (an HTTP API reached by an id): fine while waiting.
        if line.port.is_none() && line.query_port.is_none() && line.query_port_offset.is_none() {
            Ok(QueryPort::Offset(0))
        } else {
            Err(e)
        }
    })?;
    Ok(Waiting {
        id: id.to_owned(),
        aliases: line.aliases,
        name: line.name,
        family,
        port: line.port,
        query,
    })
}

/// A game as `gsq games --json` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GameJson<'a> {
    /// The id.
    pub id: &'a str,
    /// Former ids.
    pub aliases: &'a [String],
    /// Display name.
    pub name: &'a str,
    /// The protocol's name.
    pub protocol: Protocol,
    /// The default game port.
    pub port: Option<u16>,
    /// A fixed query port; `None` where derived from the game port.
    pub query_port: Option<u16>,
    /// The query port's offset from the game port; `None` where fixed.
    pub query_port_offset: Option<i32>,
    /// What a full answer depends on.
    pub notes: Option<&'a str>,
}

impl<'a> From<&'a Game> for GameJson<'a> {
    fn from(game: &'a Game) -> Self {
        GameJson {
            id: &game.id,
            aliases: &game.aliases,
            name: &game.name,
            protocol: game.protocol,
            port: game.port,
            query_port: game.fixed_query_port(),
            query_port_offset: game.query_port_offset(),
            notes: game.note.as_deref(),
        }
    }
}

impl fmt::Display for QueryPort {
    /// `27015`, `+1`, `-1277`, or `game port` for an offset of 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryPort::Fixed(port) => write!(f, "{port}"),
            QueryPort::Offset(0) => f.write_str("game port"),
            QueryPort::Offset(offset) => write!(f, "game port {offset:+}"),
        }
    }
}
