//! The TeamSpeak 3 ServerQuery responder: one connection's commands answered from the server
//! state, as a sans-I/O [`StreamResponder`], the way a TeamSpeak 3 server answers a guest.
//!
//! - On connect: the `TS3` banner and the welcome line. Lines end with `\n\r`, as real
//!   servers end them.
//! - `use port=N`, `use sid=1` or `use 1`: selects the one virtual server, whose voice port is
//!   the state's port (9987 when it has none); another is `error id=1024`.
//! - `serverinfo`, `clientlist`, `channellist` (after `use`, else `error id=1024`): the state's
//!   name, counts, players and teams (as channels; one "Default Channel" without teams). The
//!   querying client is listed too, as a query client, as real servers list it.
//! - `login name password` or `login client_login_name=.. client_login_password=..`: accepted
//!   when a password is set and matches (compared in constant time), else `error id=520`.
//! - `version`, `quit` (then the connection closes); any other command `error id=256`.
//! - A line over [`MAX_COMMAND`] bytes or one that does not decode closes the connection;
//!   after [`MAX_COMMANDS`] commands the connection closes as a flood would.

use std::time::Instant;

use query_specs::teamspeak3::{
    ChannelEntry, ClientEntry, Command, ErrorLine, ServerInfo, CLIENT_TYPE_QUERY,
    CLIENT_TYPE_VOICE, COMMAND_NOT_FOUND, DEFAULT_VOICE_PORT, INVALID_LOGIN, INVALID_SERVER_ID, OK,
};
use query_wire::kv::{encode_rows, FromKeyValues, QueryText, ToKeyValues};
use query_wire::Decode;

use super::LineFraming;
use crate::state::{ServerState, SharedState};
use crate::stream::{FrameBuffer, StreamResponder};

/// The longest command line read.
pub const MAX_COMMAND: usize = 4096;
/// The most commands one connection may send.
pub const MAX_COMMANDS: usize = 64;
/// What the server says after its banner.
pub const WELCOME: &str = "Welcome to the TeamSpeak 3 ServerQuery interface, type \"help\" for a list of commands and \"help <command>\" for information on a specific command.";
/// The end of every line the responder writes.
const EOL: &[u8] = b"\n\r";

/// One connection of a ServerQuery server; see the [module](self) docs.
#[derive(Debug)]
pub struct Ts3Responder {
    state: SharedState,
    password: Option<String>,
    lines: FrameBuffer<LineFraming>,
    outbox: Vec<u8>,
    selected: bool,
    commands: usize,
    closing: bool,
    closed: bool,
}

impl Ts3Responder {
    /// A connection answered from `state`; `login` is accepted with `password` when one is
    /// given (any account name).
    pub fn new(state: SharedState, password: Option<String>) -> Self {
        let mut outbox = b"TS3".to_vec();
        outbox.extend_from_slice(EOL);
        outbox.extend_from_slice(WELCOME.as_bytes());
        outbox.extend_from_slice(EOL);
        Ts3Responder {
            state,
            password,
            lines: FrameBuffer::new(LineFraming::default(), MAX_COMMAND),
            outbox,
            selected: false,
            commands: 0,
            closing: false,
            closed: false,
        }
    }

    fn error_line(&mut self, id: u32, msg: &str) {
        let line = ErrorLine {
            error: true,
            id,
            msg: QueryText::from(msg),
            ..ErrorLine::default()
        };
        match line.to_vec() {
            Ok(bytes) => {
                self.outbox.extend_from_slice(&bytes);
                self.outbox.extend_from_slice(EOL);
            }
            Err(_) => self.closed = true,
        }
    }

    fn data_line(&mut self, line: Result<Vec<u8>, query_wire::Error>) {
        match line {
            Ok(line) => {
                self.outbox.extend_from_slice(&line);
                self.outbox.extend_from_slice(EOL);
                self.error_line(OK, "ok");
            }
            Err(_) => self.closed = true,
        }
    }

    fn on_line(&mut self, frame: &[u8]) -> Result<(), ()> {
        let line = query_specs::teamspeak3::Line::from_bytes(frame).map_err(|_| ())?;
        let command = Command::from_bytes(line.text()).map_err(|_| ())?;
        let name = command.name();
        if name.is_empty() {
            return Ok(());
        }
        self.commands += 1;
        if self.commands > MAX_COMMANDS {
            return Err(());
        }
        let state = self.state.load();
        match name.as_str() {
            "use" => {
                let voice = if state.port == 0 {
                    DEFAULT_VOICE_PORT
                } else {
                    state.port
                };
                let by_port = command.get("port").map(|p| p == voice.to_string());
                let by_sid = command
                    .get("sid")
                    .or_else(|| command.positional().first().copied())
                    .map(|sid| sid == "1");
                if by_port.or(by_sid) == Some(true) {
                    self.selected = true;
                    self.error_line(OK, "ok");
                } else {
                    self.error_line(INVALID_SERVER_ID, "invalid serverID");
                }
            }
            "login" => {
                let positional = command.positional();
                let given = command
                    .get("client_login_password")
                    .or_else(|| positional.get(1).copied());
                let accepted = matches!((&self.password, given), (Some(p), Some(g)) if same(p, g));
                if accepted {
                    self.error_line(OK, "ok");
                } else {
                    self.error_line(INVALID_LOGIN, "invalid loginname or password");
                }
            }
            "serverinfo" | "clientlist" | "channellist" if !self.selected => {
                self.error_line(INVALID_SERVER_ID, "invalid serverID");
            }
            "serverinfo" => self.data_line(server_info(&state)),
            "clientlist" => self.data_line(client_list(&state)),
            "channellist" => self.data_line(channel_list(&state)),
            "version" => self.data_line(Ok(b"version=3.13.7 build=0 platform=gsq".to_vec())),
            "quit" => {
                self.error_line(OK, "ok");
                self.closing = true;
            }
            _ => self.error_line(COMMAND_NOT_FOUND, "command not found"),
        }
        Ok(())
    }
}

/// Whether two secrets are equal, in time that depends on their lengths only.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The channels of `state`: its teams, or one default channel.
fn channels(state: &ServerState) -> Vec<String> {
    if state.teams.is_empty() {
        vec!["Default Channel".to_owned()]
    } else {
        state.teams.iter().map(|t| t.name.clone()).collect()
    }
}

/// The channel id (from 1) of a player's team.
fn channel_of(state: &ServerState, team: Option<&String>) -> usize {
    team.and_then(|t| state.teams.iter().position(|x| &x.name == t))
        .map_or(1, |i| i + 1)
}

fn text(s: &str) -> QueryText<'_> {
    QueryText::from(s)
}

fn server_info(state: &ServerState) -> Result<Vec<u8>, query_wire::Error> {
    let voice = if state.port == 0 {
        DEFAULT_VOICE_PORT
    } else {
        state.port
    };
    let version = if state.version.is_empty() {
        "3.13.7 [Build: 0]"
    } else {
        state.version.as_str()
    };
    ServerInfo {
        virtualserver_name: text(&state.name),
        virtualserver_version: Some(text(version)),
        virtualserver_platform: Some(text("gsq")),
        virtualserver_maxclients: state.max_players,
        virtualserver_clientsonline: state.num_players().saturating_add(1),
        virtualserver_queryclientsonline: Some(1),
        virtualserver_channelsonline: u32::try_from(channels(state).len()).ok(),
        virtualserver_uptime: Some(0),
        virtualserver_flag_password: Some(state.password),
        virtualserver_port: Some(voice),
        virtualserver_reserved_slots: Some(0),
        virtualserver_welcomemessage: Some(text(&state.motd)),
        rest: vec![
            (text("virtualserver_id"), text("1")),
            (text("virtualserver_status"), text("online")),
        ],
    }
    .to_vec()
}

fn client_list(state: &ServerState) -> Result<Vec<u8>, query_wire::Error> {
    let mut rows: Vec<ClientEntry<'_>> = state
        .players
        .iter()
        .enumerate()
        .map(|(i, p)| ClientEntry {
            clid: count(i + 1),
            cid: count(channel_of(state, p.team.as_ref())),
            client_database_id: Some(count(i + 1)),
            client_nickname: text(&p.name),
            client_type: CLIENT_TYPE_VOICE,
            rest: Vec::new(),
        })
        .collect();
    rows.push(ClientEntry {
        clid: count(state.players.len() + 1),
        cid: 1,
        client_database_id: Some(1),
        client_nickname: text("serveradmin"),
        client_type: CLIENT_TYPE_QUERY,
        rest: Vec::new(),
    });
    encode_rows(&rows)
}

fn channel_list(state: &ServerState) -> Result<Vec<u8>, query_wire::Error> {
    let names = channels(state);
    let rows: Vec<ChannelEntry<'_>> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let cid = i + 1;
            let inside = state
                .players
                .iter()
                .filter(|p| channel_of(state, p.team.as_ref()) == cid)
                .count()
                + usize::from(cid == 1);
            ChannelEntry {
                cid: count(cid),
                pid: 0,
                channel_order: Some(count(i)),
                channel_name: text(name),
                channel_topic: Some(QueryText::default()),
                total_clients: Some(i32::try_from(inside).unwrap_or(i32::MAX)),
                channel_needed_subscribe_power: Some(0),
                rest: Vec::new(),
            }
        })
        .collect();
    encode_rows(&rows)
}

/// A count or index as a ServerQuery id.
fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl StreamResponder for Ts3Responder {
    fn handle_bytes(&mut self, bytes: &[u8], _now: Instant) {
        if self.closed || self.closing {
            return;
        }
        self.lines.push(bytes);
        while !self.closed && !self.closing {
            let frame = match self.lines.next_frame() {
                Ok(Some(frame)) => frame.to_vec(),
                Ok(None) => return,
                Err(_) => {
                    self.closed = true;
                    return;
                }
            };
            if self.on_line(&frame).is_err() {
                self.closed = true;
            }
        }
    }

    fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        if self.outbox.is_empty() {
            return None;
        }
        if self.closing {
            self.closed = true;
        }
        Some(std::mem::take(&mut self.outbox))
    }

    fn is_closed(&self) -> bool {
        self.closed && self.outbox.is_empty()
    }
}
