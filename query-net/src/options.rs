//! What a client asks for and how patiently.

use std::fmt;
use std::time::Duration;

use query_specs::sqp::ChunkSet;
use query_wire::TextEncoding;

/// How to query one server. The defaults suit a server on the internet: 1.5 s per attempt,
/// 2 retries, each protocol's usual text encoding, and what every server of the protocol can
/// answer (see [`players`](Options::players) and [`sqp_chunks`](Options::sqp_chunks)).
///
/// What is fetched depends on how the protocol asks for it:
/// - SA:MP, OneQuery and A2S ask for players (and SA:MP and A2S for rules) in requests of
///   their own; a server that leaves them unanswered still gives a status, so
///   [`players`](Options::players) and [`rules`](Options::rules) are on by default.
/// - SQP asks for every chunk in one request, and a reply's chunks carry no tags: a server that
///   lacks one chunk asked for cannot answer at all. So SQP asks for ServerInfo only, unless
///   [`sqp_chunks`](Options::sqp_chunks) names more.
/// - GameSpy v1 gets what its request string asks for ([`gamespy_request`](Options::gamespy_request)).
///
/// ```
/// use std::time::Duration;
/// use query_net::engines::sqp::ChunkSet;
/// use query_net::Options;
///
/// let options = Options {
///     timeout: Duration::from_millis(500),
///     players: false,
///     sqp_chunks: ChunkSet::SERVER_INFO | ChunkSet::SERVER_RULES,
///     ..Options::default()
/// };
/// assert_eq!(options.attempts(), 3);
/// assert_eq!(Options::default().sqp_chunks, ChunkSet::SERVER_INFO);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Options {
    /// How long to wait for each reply before sending the request again.
    pub timeout: Duration,
    /// How many times to resend an unanswered request (so `retries + 1` attempts).
    pub retries: u32,
    /// Fetch the player list where it is a request of its own (SA:MP `d` / `c`, OneQuery
    /// PLAYERS pages, A2S PLAYER). On by default. SQP reads [`sqp_chunks`](Options::sqp_chunks) instead.
    pub players: bool,
    /// Fetch the rules where they are a request of their own (SA:MP `r`, A2S RULES). On by
    /// default. SQP
    /// reads [`sqp_chunks`](Options::sqp_chunks) instead.
    pub rules: bool,
    /// The SQP chunks to ask for: ServerInfo by default, which every SQP server answers. Add
    /// `SERVER_RULES`, `PLAYER_INFO`, `TEAM_INFO` or `METRICS` for a server known to have them.
    /// Asked for exactly (an empty set asks for no chunk).
    pub sqp_chunks: ChunkSet,
    /// How to decode text the protocol declares no charset for (SA:MP, GameSpy): servers send
    /// their locale's code page, so the caller chooses. `None` means the protocol's usual one
    /// (Windows-1252 for SA:MP and GameSpy v1, UTF-8 for A2S); protocols that declare UTF-8
    /// ignore it.
    pub encoding: Option<TextEncoding>,
    /// OneQuery auth token: the shared secret a non-public server expects.
    pub auth_token: Option<String>,
    /// The GameSpy v1 request, `\status\` by default (some games answer only `\info\` or
    /// `\status\xserverquery`).
    pub gamespy_request: String,
    /// The most one query may take from its first send, whatever the server does: 15 s by
    /// default. [`timeout`](Options::timeout) bounds each wait, but a server that drips reply
    /// parts or pages, or answers each step just in time, could otherwise hold a query for many
    /// timeouts. When it passes, the query ends with what arrived (`complete: false`) or a
    /// timeout error; see [`Bounded`](crate::engine::Bounded).
    pub deadline: Duration,
    /// The most bytes of reply datagrams one query accepts from its server, 512 KiB by default
    /// (real status replies are a few KiB, A2S rule lists a few tens): it caps what a hostile
    /// server can make a query hold, GameSpy parts, SQP and OneQuery pages and A2S split parts
    /// alike. Reaching it ends the query with what arrived (`complete: false`) or an error.
    pub max_reply_bytes: usize,
    /// TeamSpeak 3: the virtual server to read, by voice port (9987 by default) or id.
    pub virtual_server: crate::engines::teamspeak3::VirtualServer,
    /// TeamSpeak 3: a query account to log in with, for servers whose guests may not read.
    pub query_login: Option<crate::engines::teamspeak3::QueryLogin>,
    /// Minecraft Java: ping after the status and take the pong's round trip as `ping_ms` (on
    /// by default). Off, the query ends at the status, one round trip instead of two, and
    /// `ping_ms` is the status request's round trip, as mcstatus's `status()` and gamedig
    /// measure it.
    pub minecraft_ping: bool,
}

impl Options {
    /// The default [`deadline`](Options::deadline): 15 s.
    pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(15);
    /// The default [`max_reply_bytes`](Options::max_reply_bytes): 512 KiB.
    pub const DEFAULT_MAX_REPLY_BYTES: usize = 512 * 1024;

    /// How many times a request is sent before giving up: `retries + 1`.
    pub fn attempts(&self) -> u32 {
        self.retries.saturating_add(1)
    }

    /// The encoding to decode undeclared text with: the chosen one, or else `protocol_default`.
    pub fn encoding_or(&self, protocol_default: TextEncoding) -> TextEncoding {
        self.encoding.unwrap_or(protocol_default)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            timeout: Duration::from_millis(1500),
            retries: 2,
            players: true,
            rules: true,
            sqp_chunks: ChunkSet::SERVER_INFO,
            encoding: None,
            auth_token: None,
            gamespy_request: "\\status\\".to_owned(),
            deadline: Self::DEFAULT_DEADLINE,
            max_reply_bytes: Self::DEFAULT_MAX_REPLY_BYTES,
            virtual_server: crate::engines::teamspeak3::VirtualServer::default(),
            query_login: None,
            minecraft_ping: true,
        }
    }
}

impl fmt::Debug for Options {
    /// Secrets are shown as `<redacted>`, so options can be logged.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("players", &self.players)
            .field("rules", &self.rules)
            .field("sqp_chunks", &self.sqp_chunks)
            .field("encoding", &self.encoding)
            .field("auth_token", &self.auth_token.as_ref().map(|_| Redacted))
            .field("gamespy_request", &self.gamespy_request)
            .field("deadline", &self.deadline)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("virtual_server", &self.virtual_server)
            .field("query_login", &self.query_login)
            .field("minecraft_ping", &self.minecraft_ping)
            .finish()
    }
}

/// An SA:MP RCON command and the password it needs, for
/// [`samp::rcon_session`](crate::engines::samp::rcon_session) (RCON answers with console lines,
/// not a status, so it is a session of its own rather than an option of a status query).
#[derive(Clone, PartialEq, Eq)]
pub struct RconCommand {
    /// The server's RCON password.
    pub password: String,
    /// The console command, e.g. `players` or `echo hello`.
    pub command: String,
}

impl fmt::Debug for RconCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RconCommand")
            .field("password", &Redacted)
            .field("command", &self.command)
            .finish()
    }
}

struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_documented_values() {
        let o = Options::default();
        assert_eq!(o.timeout, Duration::from_millis(1500));
        assert_eq!(o.retries, 2);
        assert_eq!(o.attempts(), 3);
        assert!(o.players && o.rules);
        assert_eq!(o.sqp_chunks, ChunkSet::SERVER_INFO);
        assert_eq!(o.encoding, None);
        assert_eq!(
            o.encoding_or(TextEncoding::Windows1252),
            TextEncoding::Windows1252
        );
        let chosen = Options {
            encoding: Some(TextEncoding::Windows1251),
            ..Options::default()
        };
        assert_eq!(
            chosen.encoding_or(TextEncoding::Windows1252),
            TextEncoding::Windows1251
        );
        assert_eq!(o.gamespy_request, "\\status\\");
        assert_eq!(o.auth_token, None);
        assert_eq!(o.deadline, Duration::from_secs(15));
        assert_eq!(o.max_reply_bytes, 512 * 1024);
    }

    #[test]
    fn debug_output_hides_secrets() {
        let o = Options {
            auth_token: Some("my-secret-token".to_owned()),
            ..Options::default()
        };
        let shown = format!("{o:?}");
        assert!(!shown.contains("my-secret-token"), "{shown}");
        let rcon = RconCommand {
            password: "hunter2".to_owned(),
            command: "players".to_owned(),
        };
        let shown = format!("{rcon:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("players"), "{shown}");
    }

    #[test]
    fn attempts_do_not_overflow() {
        let o = Options {
            retries: u32::MAX,
            ..Options::default()
        };
        assert_eq!(o.attempts(), u32::MAX);
    }
}
