//! What a client asks for and how patiently.

use std::fmt;
use std::time::Duration;

use query_wire::TextEncoding;

/// How to query one server. The defaults suit a server on the internet: 1.5 s per attempt,
/// 2 retries, everything fetched, each protocol's usual text encoding.
///
/// ```
/// use std::time::Duration;
/// use query_net::Options;
///
/// let options = Options {
///     timeout: Duration::from_millis(500),
///     players: false,
///     ..Options::default()
/// };
/// assert_eq!(options.attempts(), 3);
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Options {
    /// How long to wait for each reply before sending the request again.
    pub timeout: Duration,
    /// How many times to resend an unanswered request (so `retries + 1` attempts).
    pub retries: u32,
    /// Fetch the player list.
    pub players: bool,
    /// Fetch the rules.
    pub rules: bool,
    /// Fetch teams (SQP TeamInfo).
    pub teams: bool,
    /// Fetch metrics (SQP Metrics).
    pub metrics: bool,
    /// How to decode text the protocol declares no charset for (SA:MP, GameSpy): servers send
    /// their locale's code page, so the caller chooses. `None` means the protocol's usual one
    /// (Windows-1252 for SA:MP and GameSpy v1); protocols that declare UTF-8 ignore it.
    pub encoding: Option<TextEncoding>,
    /// OneQuery auth token: the shared secret a non-public server expects.
    pub auth_token: Option<String>,
    /// SA:MP RCON: run a console command instead of a status query.
    pub rcon: Option<RconCommand>,
    /// The GameSpy v1 request, `\status\` by default (some games answer only `\info\` or
    /// `\status\xserverquery`).
    pub gamespy_request: String,
}

impl Options {
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
            teams: true,
            metrics: true,
            encoding: None,
            auth_token: None,
            rcon: None,
            gamespy_request: "\\status\\".to_owned(),
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
            .field("teams", &self.teams)
            .field("metrics", &self.metrics)
            .field("encoding", &self.encoding)
            .field("auth_token", &self.auth_token.as_ref().map(|_| Redacted))
            .field("rcon", &self.rcon)
            .field("gamespy_request", &self.gamespy_request)
            .finish()
    }
}

/// An SA:MP RCON command and the password it needs.
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
        assert!(o.players && o.rules && o.teams && o.metrics);
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
        assert_eq!(o.rcon, None);
    }

    #[test]
    fn debug_output_hides_secrets() {
        let o = Options {
            auth_token: Some("my-secret-token".to_owned()),
            rcon: Some(RconCommand {
                password: "hunter2".to_owned(),
                command: "players".to_owned(),
            }),
            ..Options::default()
        };
        let shown = format!("{o:?}");
        assert!(!shown.contains("my-secret-token"), "{shown}");
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
