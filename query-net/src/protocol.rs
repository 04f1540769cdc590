//! The protocols this crate speaks, by the names users type.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A game-query protocol.
///
/// The names (`sqp`, `onequery`, `samp`, `gamespy1`, `a2s`, `quake3`, `gamespy2`, `gamespy3`,
/// `minecraft`, `minecraft-query`, `bedrock`, `quake2`, `fivem`, `doom3`, `teeworlds`, `mumble`,
/// `eye`, `unreal2`, `frostbite`, `teamspeak3`) are the same in `Display`, `FromStr`, JSON and the command line.
///
/// ```
/// use query_net::Protocol;
///
/// let p: Protocol = "onequery".parse()?;
/// assert_eq!(p, Protocol::OneQuery);
/// assert_eq!(p.to_string(), "onequery");
/// # Ok::<(), query_net::protocol::UnknownProtocol>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// Unity / Multiplay Server Query Protocol.
    Sqp,
    /// Hytale OneQuery V2.
    #[serde(rename = "onequery")]
    OneQuery,
    /// SA:MP and open.mp query.
    Samp,
    /// GameSpy v1 (backslash-separated text).
    #[serde(rename = "gamespy1")]
    GameSpy1,
    /// Valve A2S (Source and GoldSrc engines, and most games on Steam).
    A2s,
    /// The Quake 3 family: Quake 3, Call of Duty 1-4, Enemy Territory, Jedi Knight, Urban
    /// Terror (`getstatus`).
    Quake3,
    /// Quake 2 and QuakeWorld (Kingpin, Alien Arena, Daikatana) (`status`).
    Quake2,
    /// FiveM and RedM (CitizenFX): `getinfo`, and the player list over HTTP.
    Fivem,
    /// The Doom 3 engine: Doom 3, Quake 4, Prey, Enemy Territory: Quake Wars (`getInfo`).
    Doom3,
    /// GameSpy 2: Halo, SWAT 4, Hidden & Dangerous 2, ArmA, Battlefield Vietnam.
    GameSpy2,
    /// GameSpy 3 (Battlefield 2 and 2142, Crysis, Unreal Tournament 3), with the challenge of
    /// GameSpy 4 when the server asks for it.
    #[serde(rename = "gamespy3")]
    GameSpy3,
    /// Minecraft Java Edition's status ping over TCP (the server list ping every server
    /// answers), with the legacy ping for servers before 1.7.
    Minecraft,
    /// Minecraft's "Query" (enable-query in server.properties): GameSpy 4 over UDP, always
    /// with the challenge.
    #[serde(rename = "minecraft-query")]
    MinecraftQuery,
    /// Minecraft Bedrock Edition (and Geyser, Nukkit, PocketMine): RakNet's unconnected ping.
    Bedrock,
    /// Teeworlds 0.6 and 0.7, and DDNet: the server info (`gie3`), DDNet's extended form and
    /// 0.7's token exchange included.
    Teeworlds,
    /// Mumble (Murmur): the binary ping.
    Mumble,
    /// The All-Seeing Eye (ASE): Multi Theft Auto: San Andreas, Far Cry, Chaser. Named `eye`,
    /// as qstat names it: `ase` is the game id of Ark: Survival Evolved (an A2S game).
    #[serde(rename = "eye")]
    Ase,
    /// Unreal Engine 2: Unreal Tournament 2003 and 2004, Killing Floor, Red Orchestra,
    /// Darkest Hour (game port + 1).
    Unreal2,
    /// Frostbite's remote administration over TCP (Battlefield: Bad Company 2, 3, 4,
    /// Hardline): `serverInfo`, `version` and `listPlayers all`, which need no login.
    Frostbite,
    /// TeamSpeak 3's ServerQuery text interface over TCP: `serverinfo`, `clientlist` and
    /// `channellist` of one virtual server.
    #[serde(rename = "teamspeak3")]
    TeamSpeak3,
}

impl Protocol {
    /// Every protocol, in a stable order.
    pub const ALL: [Protocol; 20] = [
        Protocol::Sqp,
        Protocol::OneQuery,
        Protocol::Samp,
        Protocol::GameSpy1,
        Protocol::A2s,
        Protocol::Quake3,
        Protocol::Quake2,
        Protocol::Fivem,
        Protocol::Doom3,
        Protocol::GameSpy2,
        Protocol::GameSpy3,
        Protocol::Minecraft,
        Protocol::MinecraftQuery,
        Protocol::Bedrock,
        Protocol::Teeworlds,
        Protocol::Mumble,
        Protocol::Ase,
        Protocol::Unreal2,
        Protocol::Frostbite,
        Protocol::TeamSpeak3,
    ];

    /// Every protocol queried with datagrams: [`ALL`](Protocol::ALL) without the TCP ones
    /// ([`is_stream`](Protocol::is_stream)).
    pub const DATAGRAM: [Protocol; DATAGRAM_COUNT] = datagram_protocols();

    /// The port servers of the protocol usually answer on, for a target given without one:
    ///
    /// - SQP: 7779, the default query port of Unity's dedicated-server package.
    /// - OneQuery: 5520, the Hytale game port, which also answers queries.
    /// - SA:MP / open.mp: 7777, the game port, which also answers queries.
    /// - GameSpy v1: 23000, Battlefield 1942's query port (Unreal Tournament uses game port
    ///   + 1, 7778).
    /// - A2S: 27015, the Source engine's game port, which also answers queries (many games
    ///   answer on a query port of their own, which must then be given).
    /// - Quake 3: 27960, the game port, which also answers queries (Call of Duty uses 28960,
    ///   which must then be given).
    /// - GameSpy 2: 2302, where Halo and ArmA, the most played GameSpy 2 games, answer (4 of
    ///   the 6 captured servers); SWAT 4 (game port + 2), Hidden & Dangerous 2 and Battlefield
    ///   Vietnam (23000) use ports of their own, which must then be given.
    /// - GameSpy 3: 29900, Battlefield 2's query port.
    /// - Minecraft: 25565, the game port, which answers the status ping; its Query
    ///   (`enable-query`) answers on 25565 too, over UDP, unless `query.port` says otherwise.
    /// - Bedrock: 19132, the game port, which answers the ping.
    /// - Quake 2: 27910, the game port, which also answers queries (QuakeWorld: 27500,
    ///   Daikatana: game port + 10, which must then be given).
    /// - FiveM: 30120, the game port, which answers `getinfo` over UDP and serves
    ///   `/players.json` over TCP.
    /// - Doom 3: 27666, the game port, which also answers queries (Quake 4: 28004, ETQW:
    ///   27733, Prey: 27719, which must then be given).
    /// - Teeworlds / DDNet: 8303, the game port, which also answers queries.
    /// - Mumble: 64738, the voice port, which also answers the ping.
    /// - ASE: 22126, Multi Theft Auto's query port: its game port 22003 + 123, the offset
    ///   every ASE game uses.
    /// - Unreal 2: 7778, UT2004's query port: its game port 7777 + 1, the offset every
    ///   Unreal 2 game uses (Killing Floor: 7708).
    /// - Frostbite: 47200, the remote-administration port of Battlefield 3, 4 and Hardline
    ///   (Bad Company 2 uses 48888, which must then be given).
    /// - TeamSpeak 3: 10011, the ServerQuery port (the voice port, 9987 by default, is a
    ///   query option of its own).
    pub fn default_port(self) -> u16 {
        match self {
            Protocol::Sqp => 7779,
            Protocol::OneQuery => 5520,
            Protocol::Samp => 7777,
            Protocol::GameSpy1 => 23000,
            Protocol::A2s => 27015,
            Protocol::Quake3 => 27960,
            Protocol::GameSpy2 => 2302,
            Protocol::GameSpy3 => 29900,
            Protocol::Minecraft | Protocol::MinecraftQuery => 25565,
            Protocol::Bedrock => 19132,
            Protocol::Quake2 => 27910,
            Protocol::Fivem => 30120,
            Protocol::Doom3 => 27666,
            Protocol::Teeworlds => 8303,
            Protocol::Mumble => 64738,
            Protocol::Ase => 22126,
            Protocol::Unreal2 => 7778,
            Protocol::Frostbite => 47200,
            Protocol::TeamSpeak3 => 10011,
        }
    }

    /// The protocol's short name: `sqp`, `onequery`, `samp`, `gamespy1`, `a2s`, `quake3`,
    /// `gamespy2`, `gamespy3`, `minecraft`, `minecraft-query`, `bedrock`, `quake2`, `fivem`,
    /// `doom3`, `teeworlds`, `mumble`, `eye`, `unreal2`, `frostbite`, `teamspeak3`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Sqp => "sqp",
            Protocol::OneQuery => "onequery",
            Protocol::Samp => "samp",
            Protocol::GameSpy1 => "gamespy1",
            Protocol::A2s => "a2s",
            Protocol::Quake3 => "quake3",
            Protocol::GameSpy2 => "gamespy2",
            Protocol::GameSpy3 => "gamespy3",
            Protocol::Minecraft => "minecraft",
            Protocol::MinecraftQuery => "minecraft-query",
            Protocol::Bedrock => "bedrock",
            Protocol::Quake2 => "quake2",
            Protocol::Fivem => "fivem",
            Protocol::Doom3 => "doom3",
            Protocol::Teeworlds => "teeworlds",
            Protocol::Mumble => "mumble",
            Protocol::Ase => "eye",
            Protocol::Unreal2 => "unreal2",
            Protocol::Frostbite => "frostbite",
            Protocol::TeamSpeak3 => "teamspeak3",
        }
    }
}

/// How many protocols are queried with datagrams.
const DATAGRAM_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < Protocol::ALL.len() {
        if !Protocol::ALL[i].is_stream() {
            count += 1;
        }
        i += 1;
    }
    count
};

/// [`Protocol::ALL`] without the stream protocols, in the same order.
const fn datagram_protocols() -> [Protocol; DATAGRAM_COUNT] {
    let mut out = [Protocol::Sqp; DATAGRAM_COUNT];
    let (mut i, mut n) = (0, 0);
    while i < Protocol::ALL.len() {
        if !Protocol::ALL[i].is_stream() {
            out[n] = Protocol::ALL[i];
            n += 1;
        }
        i += 1;
    }
    out
}

impl Protocol {
    /// Whether the protocol runs over TCP (a [`StreamSession`](crate::stream::StreamSession))
    /// rather than datagrams: Minecraft's status ping, Frostbite and TeamSpeak 3.
    pub const fn is_stream(self) -> bool {
        matches!(
            self,
            Protocol::Minecraft | Protocol::Frostbite | Protocol::TeamSpeak3
        )
    }

    /// Every protocol's name, comma-separated, for help and error messages.
    pub fn names() -> String {
        Protocol::ALL.map(Protocol::name).join(", ")
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A protocol name that is not one of [`Protocol::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol {0:?}: expected one of {names}", names = Protocol::names())]
pub struct UnknownProtocol(pub String);

impl FromStr for Protocol {
    type Err = UnknownProtocol;

    /// Accepts the short names in any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownProtocol(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_display_fromstr_and_serde() {
        for p in Protocol::ALL {
            assert_eq!(p.to_string().parse::<Protocol>(), Ok(p));
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Protocol>(&json).unwrap(), p);
        }
    }

    #[test]
    fn datagram_protocols_are_all_but_the_streams() {
        let datagram: Vec<_> = Protocol::ALL
            .into_iter()
            .filter(|p| !p.is_stream())
            .collect();
        assert_eq!(datagram, Protocol::DATAGRAM);
    }

    #[test]
    fn parsing_ignores_case_and_rejects_unknown_names() {
        assert_eq!("GameSpy1".parse(), Ok(Protocol::GameSpy1));
        assert_eq!("A2S".parse(), Ok(Protocol::A2s));
        assert_eq!("Quake3".parse(), Ok(Protocol::Quake3));
        let err = "quake5".parse::<Protocol>().unwrap_err();
        assert!(err.to_string().contains("quake5"), "{err}");
        assert!(serde_json::from_str::<Protocol>("\"one_query\"").is_err());
    }
}
