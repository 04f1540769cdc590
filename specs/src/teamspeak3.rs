//! TeamSpeak 3 ServerQuery (TCP 10011): lines of text, declared with `#[derive(Wire)]` (the
//! line) and `#[derive(KeyValues)]` in the ServerQuery format (the fields of a row).
//!
//! The server greets with a [`BANNER`] line and a welcome line. Each command is one line
//! (`use port=9987`, `serverinfo`, `clientlist`, `channellist`, `login name password`, `quit`)
//! and its answer is zero or more data lines, then an [`ErrorLine`] (`error id=0 msg=ok`, or
//! another id: 2568 is a missing permission, whose id `failed_permid` names). A data line is
//! rows separated by `|`, each row `key=value` fields separated by spaces, values escaped
//! ([`QueryText`]).
//!
//! Lines end with `\n`; real servers send `\n\r`, so the `\r` of the one before begins each
//! line ([`Line::text`] says what to strip). Lenient: a bare `\n` or `\r\n` reads the same.
//!
//! ```
//! use query_specs::teamspeak3::{ClientEntry, ErrorLine, Line};
//! use query_wire::kv::{decode_rows, FromKeyValues};
//! use query_wire::Decode;
//!
//! let stream = b"clid=1 cid=2 client_database_id=3 client_nickname=Ann\\sB client_type=0\n\rerror id=0 msg=ok\n\r";
//! let line = Line::from_bytes(&stream[..stream.iter().position(|&b| b == b'\n').unwrap() + 1])?;
//! let clients: Vec<ClientEntry> = decode_rows(line.text())?;
//! assert_eq!(clients[0].client_nickname.as_str(), "Ann B");
//! let error = ErrorLine::from_bytes(b"error id=2568 msg=insufficient\\sclient\\spermissions failed_permid=4")?;
//! assert_eq!((error.id, error.failed_permid), (2568, Some(4)));
//! assert_eq!(error.msg.as_str(), "insufficient client permissions");
//! # Ok::<(), query_wire::Error>(())
//! ```

use query_wire::kv::QueryText;
use query_wire::{KeyValues, Wire};
use serde::Serialize;

/// The first line a ServerQuery server sends.
pub const BANNER: &[u8] = b"TS3";
/// The end of every line.
pub const LINE_END: u8 = b'\n';
/// The error id of success.
pub const OK: u32 = 0;
/// The error id of a command the query client lacks a permission for.
pub const INSUFFICIENT_PERMISSIONS: u32 = 2568;
/// The error id of a `use` for a virtual server that does not exist.
pub const INVALID_SERVER_ID: u32 = 1024;
/// The error id of a refused login.
pub const INVALID_LOGIN: u32 = 520;
/// The error id of a command the server does not know.
pub const COMMAND_NOT_FOUND: u32 = 256;
/// The voice port of a server's first virtual server.
pub const DEFAULT_VOICE_PORT: u16 = 9987;

/// One line of the stream, its `\n` included.
#[derive(Debug, Clone, PartialEq, Eq, Wire)]
pub struct Line<'a> {
    /// The bytes before the `\n`, with the `\r` servers put around it.
    #[wire(bytes(until = b'\n'))]
    pub raw: &'a [u8],
}

impl<'a> Line<'a> {
    /// The line's text: without the `\r` that a server's `\n\r` puts at its start, or a
    /// `\r\n` at its end.
    pub fn text(&self) -> &'a [u8] {
        let text = self.raw.strip_prefix(b"\r").unwrap_or(self.raw);
        text.strip_suffix(b"\r").unwrap_or(text)
    }
}

/// The line that ends every answer: `error id=0 msg=ok`.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "serverquery")]
pub struct ErrorLine<'a> {
    /// The bare word `error` that starts the line.
    #[kv(key = "error", flag)]
    pub error: bool,
    /// [`OK`], or why the command failed.
    pub id: u32,
    /// The message, e.g. `ok`, `insufficient client permissions`.
    pub msg: QueryText<'a>,
    /// The permission that was missing, by its server-side id (id 2568).
    pub failed_permid: Option<u32>,
    /// More about the error, some server versions.
    pub extra_msg: Option<QueryText<'a>>,
    /// Whatever else the server adds.
    #[kv(rest)]
    #[serde(skip)]
    pub rest: Vec<(QueryText<'a>, QueryText<'a>)>,
}

/// The answer to `serverinfo`: the fields a status needs, every other in
/// [`rest`](ServerInfo::rest) in the server's order.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "serverquery")]
pub struct ServerInfo<'a> {
    /// The server's name.
    pub virtualserver_name: QueryText<'a>,
    /// `3.13.7 [Build: 1655727713]`.
    pub virtualserver_version: Option<QueryText<'a>>,
    /// `Linux`, `Windows`...
    pub virtualserver_platform: Option<QueryText<'a>>,
    /// Slots.
    pub virtualserver_maxclients: u32,
    /// Clients connected, query clients included.
    pub virtualserver_clientsonline: u32,
    /// Query clients connected (this one included).
    pub virtualserver_queryclientsonline: Option<u32>,
    /// Channels.
    pub virtualserver_channelsonline: Option<u32>,
    /// Seconds since the virtual server started.
    pub virtualserver_uptime: Option<u64>,
    /// `1` when joining needs a password.
    pub virtualserver_flag_password: Option<bool>,
    /// The voice port.
    pub virtualserver_port: Option<u16>,
    /// Slots kept for those with the power to use them.
    pub virtualserver_reserved_slots: Option<u32>,
    /// The welcome message clients see.
    pub virtualserver_welcomemessage: Option<QueryText<'a>>,
    /// Every other field, in order.
    #[kv(rest)]
    pub rest: Vec<(QueryText<'a>, QueryText<'a>)>,
}

/// `client_type` of a person's voice client.
pub const CLIENT_TYPE_VOICE: u8 = 0;
/// `client_type` of a ServerQuery client (a bot, a status page, this query).
pub const CLIENT_TYPE_QUERY: u8 = 1;

/// One row of `clientlist`.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "serverquery")]
pub struct ClientEntry<'a> {
    /// The client's id while connected.
    pub clid: u32,
    /// The channel it is in.
    pub cid: u32,
    /// Its identity's id in the server's database.
    pub client_database_id: Option<u32>,
    /// Its nickname.
    pub client_nickname: QueryText<'a>,
    /// [`CLIENT_TYPE_VOICE`] or [`CLIENT_TYPE_QUERY`].
    pub client_type: u8,
    /// Fields of `clientlist -away -voice ...`, in order.
    #[kv(rest)]
    pub rest: Vec<(QueryText<'a>, QueryText<'a>)>,
}

/// One row of `channellist`.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues, Serialize)]
#[kv(format = "serverquery")]
pub struct ChannelEntry<'a> {
    /// The channel's id.
    pub cid: u32,
    /// Its parent's id, 0 at the top.
    pub pid: u32,
    /// The channel it is listed after.
    pub channel_order: Option<u32>,
    /// Its name.
    pub channel_name: QueryText<'a>,
    /// Its topic, often a bare key (empty).
    pub channel_topic: Option<QueryText<'a>>,
    /// Clients in it; `-1` where the query client may not see them (subscribe power).
    pub total_clients: Option<i32>,
    /// The power needed to subscribe to it.
    pub channel_needed_subscribe_power: Option<u32>,
    /// Other fields, in order.
    #[kv(rest)]
    pub rest: Vec<(QueryText<'a>, QueryText<'a>)>,
}

/// `use port=9987`: selects the virtual server on a voice port.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues)]
#[kv(format = "serverquery")]
pub struct UsePort {
    /// The command word.
    #[kv(key = "use", flag)]
    pub command: bool,
    /// The voice port.
    pub port: u16,
}

/// `use sid=1`: selects a virtual server by its id.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues)]
#[kv(format = "serverquery")]
pub struct UseSid {
    /// The command word.
    #[kv(key = "use", flag)]
    pub command: bool,
    /// The virtual server's id.
    pub sid: u32,
}

/// `login client_login_name=... client_login_password=...`: a query account's login.
#[derive(Clone, PartialEq, Eq, Default, KeyValues)]
#[kv(format = "serverquery")]
pub struct Login<'a> {
    /// The command word.
    #[kv(key = "login", flag)]
    pub command: bool,
    /// The account, `serveradmin` or one made with `queryloginadd`.
    pub client_login_name: QueryText<'a>,
    /// Its password.
    pub client_login_password: QueryText<'a>,
}

impl std::fmt::Debug for Login<'_> {
    /// The password is not shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login")
            .field("client_login_name", &self.client_login_name)
            .field("client_login_password", &"<redacted>")
            .finish()
    }
}

/// Any command line, as a responder reads it: the command is the first field's key.
#[derive(Debug, Clone, PartialEq, Eq, Default, KeyValues)]
#[kv(format = "serverquery")]
pub struct Command<'a> {
    /// The fields in order, the command word first (a key with no value).
    #[kv(rest)]
    pub fields: Vec<(QueryText<'a>, QueryText<'a>)>,
}

impl Command<'_> {
    /// The command word, lower case as servers take it; empty for a blank line.
    pub fn name(&self) -> String {
        self.fields
            .first()
            .map(|(k, _)| k.to_ascii_lowercase())
            .unwrap_or_default()
    }

    /// The value of a parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .skip(1)
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v.as_str())
    }

    /// Positional parameters (`login name password`, `use 1`): the keys after the command
    /// that have no value.
    pub fn positional(&self) -> Vec<&str> {
        self.fields
            .iter()
            .skip(1)
            .filter(|(_, v)| v.is_empty())
            .map(|(k, _)| k.as_str())
            .collect()
    }
}
