//! Server addresses as users type them: `host`, `host:port`, `1.2.3.4`, `[::1]:7777`, `::1`.
//!
//! The port may be left out, and each protocol then uses its usual query port. Parsing is
//! strict and happens before any network traffic, so a typo is reported (naming what is
//! wrong) rather than looked up as a host name that does not exist.
//!
//! ```
//! use query_net::address::HostPort;
//!
//! let address: HostPort = "[::1]:5520".parse().unwrap();
//! assert_eq!(address.literal(7779), Some("[::1]:5520".parse().unwrap()));
//! let named: HostPort = "play.example.com".parse().unwrap();
//! assert_eq!(named.with_port(7779), "play.example.com:7779");
//! let typo = "play.example.com:77790".parse::<HostPort>().unwrap_err();
//! assert!(typo.port_out_of_range());
//! ```

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use crate::driver;
use crate::error::QueryError;

/// A host and an optional port, checked for shape but not resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HostPort {
    host: Host,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Host {
    Ip(IpAddr),
    Name(String),
}

impl HostPort {
    /// The host as given: the name, or the IP address as text (IPv6 without brackets).
    pub fn host(&self) -> String {
        match &self.host {
            Host::Ip(ip) => ip.to_string(),
            Host::Name(name) => name.clone(),
        }
    }

    /// Whether the host is a name to look up rather than an IP address.
    pub fn is_name(&self) -> bool {
        matches!(self.host, Host::Name(_))
    }

    /// The port given, if any.
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// The socket address, when the host is an IP literal (no lookup needed).
    pub fn literal(&self, default_port: u16) -> Option<SocketAddr> {
        match self.host {
            Host::Ip(ip) => Some(SocketAddr::new(ip, self.port.unwrap_or(default_port))),
            Host::Name(_) => None,
        }
    }

    /// The socket address to send to, with `default_port` when none was given: the literal
    /// address, or the first address the name resolves to.
    pub async fn resolve(&self, default_port: u16) -> Result<SocketAddr, QueryError> {
        match self.literal(default_port) {
            Some(address) => Ok(address),
            None => driver::resolve(&self.with_port(default_port)).await,
        }
    }

    /// `host:port` for the resolver, with the port filled in and IPv6 in brackets.
    pub fn with_port(&self, default_port: u16) -> String {
        let port = self.port.unwrap_or(default_port);
        match &self.host {
            Host::Ip(IpAddr::V6(ip)) => format!("[{ip}]:{port}"),
            Host::Ip(IpAddr::V4(ip)) => format!("{ip}:{port}"),
            Host::Name(name) => format!("{name}:{port}"),
        }
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.host, self.port) {
            (Host::Ip(IpAddr::V6(ip)), Some(port)) => write!(f, "[{ip}]:{port}"),
            (Host::Ip(ip), Some(port)) => write!(f, "{ip}:{port}"),
            (Host::Name(name), Some(port)) => write!(f, "{name}:{port}"),
            (Host::Ip(ip), None) => write!(f, "{ip}"),
            (Host::Name(name), None) => f.write_str(name),
        }
    }
}

/// Why an address was refused; the message quotes the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid address {input:?}: {reason}")]
pub struct BadAddress {
    input: String,
    reason: String,
    port_out_of_range: bool,
}

impl BadAddress {
    /// What is wrong, without the input (for messages that already quote it).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Whether the port is a number, but outside 1-65535 (rather than not a number at all).
    pub fn port_out_of_range(&self) -> bool {
        self.port_out_of_range
    }
}

/// Why a port was refused.
enum PortProblem {
    /// Not a port at all: missing, or not a number.
    Malformed(String),
    /// A number outside the range.
    OutOfRange(String),
}

impl FromStr for HostPort {
    type Err = BadAddress;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let bad = |reason: String| BadAddress {
            input: input.to_owned(),
            reason,
            port_out_of_range: false,
        };
        let bad_port = |problem: PortProblem| match problem {
            PortProblem::Malformed(reason) => bad(reason),
            PortProblem::OutOfRange(reason) => BadAddress {
                port_out_of_range: true,
                ..bad(reason)
            },
        };
        let text = input.trim();
        if text.is_empty() {
            return Err(bad(
                "the address is empty; expected host or host:port".into()
            ));
        }
        // [v6] or [v6]:port
        if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest
                .split_once(']')
                .ok_or_else(|| bad("missing ']' after an IPv6 address".into()))?;
            let ip: Ipv6Addr = inside
                .parse()
                .map_err(|_| bad(format!("{inside:?} is not an IPv6 address")))?;
            let port = match after {
                "" => None,
                _ => match after.strip_prefix(':') {
                    Some(port) => Some(parse_port(port).map_err(bad_port)?),
                    None => return Err(bad(format!("unexpected {after:?} after ']'"))),
                },
            };
            return Ok(HostPort {
                host: Host::Ip(IpAddr::V6(ip)),
                port,
            });
        }
        // A bare IPv6 address has several colons and no port.
        if text.matches(':').count() > 1 {
            if let Some((address, port)) = looks_like_address_and_port(text) {
                let itself = match text.parse::<Ipv6Addr>() {
                    Ok(_) => format!(", or [{text}] for the address {text} itself"),
                    Err(_) => String::new(),
                };
                return Err(bad(format!(
                    "IPv6 with a port needs brackets: write [{address}]:{port} for port {port} \
                     of {address}{itself}"
                )));
            }
            let ip: Ipv6Addr = text.parse().map_err(|_| {
                bad("not an IPv6 address; write IPv6 with a port as [addr]:port".into())
            })?;
            return Ok(HostPort {
                host: Host::Ip(IpAddr::V6(ip)),
                port: None,
            });
        }
        let (host, port) = match text.split_once(':') {
            Some((host, port)) => (host, Some(parse_port(port).map_err(bad_port)?)),
            None => (text, None),
        };
        Ok(HostPort {
            host: parse_host(host).map_err(bad)?,
            port,
        })
    }
}

/// An unbracketed IPv6 address that reads as well as an address and a port (`::1:7779`:
/// `::1` port 7779, or the address `::1:7779`): its last group is a decimal number that
/// could be a port, and what comes before it is an IPv6 address of its own. Such a text is
/// refused rather than guessed, since either reading may be meant; brackets settle it.
fn looks_like_address_and_port(text: &str) -> Option<(&str, &str)> {
    let (address, port) = text.rsplit_once(':')?;
    let decimal = !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    (decimal && address.parse::<Ipv6Addr>().is_ok()).then_some((address, port))
}

fn parse_port(text: &str) -> Result<u16, PortProblem> {
    if text.is_empty() {
        return Err(PortProblem::Malformed(
            "the port after ':' is missing".into(),
        ));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PortProblem::Malformed(format!(
            "port {text:?} is not a number"
        )));
    }
    match text.parse::<u64>() {
        Ok(port @ 1..=65535) => Ok(u16::try_from(port).unwrap_or(u16::MAX)),
        _ => Err(PortProblem::OutOfRange(format!(
            "port {text} is out of range (1-65535)"
        ))),
    }
}

fn parse_host(text: &str) -> Result<Host, String> {
    if text.is_empty() {
        return Err("the host before ':' is missing".into());
    }
    if let Ok(ip) = text.parse::<Ipv4Addr>() {
        return Ok(Host::Ip(IpAddr::V4(ip)));
    }
    let valid = text.len() <= 253
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        && !text.starts_with(['-', '.'])
        && !text.contains("..");
    if valid {
        Ok(Host::Name(text.to_owned()))
    } else {
        Err(format!("{text:?} is not a host name or IP address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> HostPort {
        text.parse()
            .unwrap_or_else(|e| panic!("{text:?} should parse: {e}"))
    }

    fn err(text: &str) -> String {
        match text.parse::<HostPort>() {
            Ok(parsed) => panic!("{text:?} should fail, got {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn accepts_the_usual_shapes() {
        assert_eq!(ok("127.0.0.1").with_port(7777), "127.0.0.1:7777");
        assert_eq!(ok("127.0.0.1:1").with_port(7777), "127.0.0.1:1");
        assert_eq!(ok("[::1]:5520").with_port(1), "[::1]:5520");
        assert_eq!(ok("[::1]").with_port(5520), "[::1]:5520");
        assert_eq!(ok("::1").with_port(5520), "[::1]:5520");
        assert_eq!(
            ok("play.example.com").with_port(23000),
            "play.example.com:23000"
        );
        assert_eq!(ok("localhost:65535").port(), Some(65535));
        assert_eq!(
            ok("10.0.0.1:99").literal(1),
            Some("10.0.0.1:99".parse().unwrap())
        );
        assert_eq!(ok("localhost").literal(1), None);
        assert_eq!(ok("[::1]:7").to_string(), "[::1]:7");
    }

    fn out_of_range(text: &str) -> bool {
        text.parse::<HostPort>().unwrap_err().port_out_of_range()
    }

    #[test]
    fn out_of_range_ports_are_told_apart_from_malformed_addresses() {
        for text in [
            "host:70000",
            "host:0",
            "[::1]:99999",
            "h:123456789012345678901",
        ] {
            assert!(out_of_range(text), "{text}");
        }
        for text in [
            "", "host:abc", "host:", ":7777", "[::1", "a b:1", "1:2:3", "h:-1",
        ] {
            assert!(!out_of_range(text), "{text}");
        }
    }

    #[test]
    fn refuses_with_a_reason() {
        assert!(err("").contains("empty"));
        assert!(err("host:70000").contains("out of range"));
        assert!(err("host:0").contains("out of range"));
        assert!(err("host:abc").contains("not a number"));
        assert!(err("host:").contains("missing"));
        assert!(err(":7777").contains("host"));
        assert!(err("[::1").contains("']'"));
        assert!(err("[nope]:1").contains("IPv6"));
        assert!(err("a b:1").contains("not a host name"));
        assert!(err("1:2:3").contains("IPv6"));
        assert!(err("[::1]x").contains("after ']'"));
    }

    #[test]
    fn ipv6_without_brackets_that_could_end_in_a_port_is_refused_with_both_spellings() {
        let why = err("::1:7779");
        assert!(why.contains("[::1]:7779"), "{why}");
        assert!(why.contains("[::1:7779]"), "{why}");
        assert!(err("2001:db8::5:27015").contains("[2001:db8::5]:27015"));
        // Unambiguous bare addresses are still read as addresses, bracketed ones always.
        assert_eq!(ok("::1").with_port(7779), "[::1]:7779");
        assert_eq!(ok("2001:db8::1").with_port(7779), "[2001:db8::1]:7779");
        assert_eq!(ok("fe80::a:beef").with_port(1), "[fe80::a:beef]:1");
        assert_eq!(ok("[::1:7779]").with_port(1), "[::1:7779]:1");
    }

    #[tokio::test]
    async fn literals_resolve_without_a_lookup_and_names_through_the_resolver() {
        assert_eq!(
            ok("127.0.0.1").resolve(7).await.unwrap(),
            "127.0.0.1:7".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(ok("localhost:9").resolve(7).await.unwrap().port(), 9);
    }
}
