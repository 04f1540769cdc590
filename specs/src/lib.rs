//! Game-query protocols declared as types, one module per protocol: every packet here comes
//! from `#[derive(Wire)]` (binary) or `#[derive(KeyValues)]` (GameSpy and ServerQuery text),
//! none is hand-coded.
//!
//! | module | protocol | byte order | text |
//! |---|---|---|---|
//! | [`sqp`] | Unity / Multiplay SQP | big | u8-length UTF-8 |
//! | [`onequery`] | Hytale OneQuery V2 | little | u16-length UTF-8 |
//! | [`samp`] | SA:MP / open.mp | little | raw bytes, caller's code page |
//! | [`gamespy1`] | GameSpy v1 | text | Latin-1 / Windows-1252 |
//! | [`a2s`] | Valve A2S (Source, GoldSrc) | little | NUL-terminated, raw bytes |
//! | [`gamespy2`] | GameSpy 2 | big | NUL-terminated, Windows-1252 |
//! | [`gamespy3`] | GameSpy 3 and 4 (Minecraft Query), in parts | big | NUL-terminated, raw bytes |
//! | [`quake3`] | Quake 3 family (Quake 3, Call of Duty, Jedi Knight, Urban Terror) | text | Windows-1252, raw names |
//! | [`quake2`] | Quake 2 and QuakeWorld (`status`) | text | Windows-1252, raw names |
//! | [`fivem`] | FiveM and RedM `getinfo` (and the `players.json` entry) | text | UTF-8 |
//! | [`doom3`] | Doom 3 engine (Doom 3, Quake 4, Prey, ETQW) `getInfo` | little | NUL-terminated, Latin-1 |
//! | [`minecraft_java`] | Minecraft Java Edition server list ping | big, VarInt | VarInt-length UTF-8 |
//! | [`battleye`] | BattlEye RCon, CRC32-checked | little | raw bytes |
//! | [`frostbite`] | Frostbite RCON (Battlefield 3, 4, Hardline, Bad Company 2) | little | u32-length, NUL-ended, raw bytes |
//! | [`minecraft_legacy`] | Minecraft Java's legacy ping (before 1.7) | big | UTF-16BE units |
//! | [`bedrock`] | Minecraft Bedrock (RakNet unconnected ping) | big | u16-length UTF-8 |
//! | [`rcon`] | Source RCON and Minecraft RCON | little | NUL-terminated, raw bytes |
//! | [`teeworlds`] | Teeworlds 0.6, 0.7 and DDNet server info | decimal text; 0.7 packed integers | NUL-terminated UTF-8 |
//! | [`mumble`] | Mumble's ping | big | none |
//! | [`ase`] | All-Seeing Eye (Multi Theft Auto, Far Cry) | text | self-counting u8 length, raw bytes |
//! | [`teamspeak3`] | TeamSpeak 3 ServerQuery | text | escaped UTF-8 |
//! | [`unreal2`] | Unreal Engine 2 (UT2003/2004, Killing Floor, Red Orchestra) | little | u8 length: Latin-1, or UTF-16LE by the top bit |

pub mod a2s;
pub mod ase;
pub mod battleye;
pub mod bedrock;
pub mod doom3;
pub mod fivem;
pub mod frostbite;
pub mod gamespy1;
pub mod gamespy2;
pub mod gamespy3;
pub mod minecraft_java;
pub mod minecraft_legacy;
pub mod mumble;
pub mod onequery;
pub mod quake2;
pub mod quake3;
pub mod rcon;
pub mod samp;
pub mod sqp;
pub mod teamspeak3;
pub mod teeworlds;
pub mod unreal2;
