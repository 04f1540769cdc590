//! Addresses on the command line: the server addresses of `query`, `bulk` and the exporter
//! ([`HostPort`], parsed by `query-net`) and the listen address of `serve`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

pub use query_net::address::{BadAddress, HostPort};

use crate::exit::{BadValue, Category};

/// The default ports as the help text lists them.
pub const DEFAULT_PORTS_HELP: &str =
    "sqp 7779, onequery 5520, samp 7777, gamespy1 23000 (UT99 servers: game port + 1, 7778), a2s 27015 (many games use a query port of their own), quake3 27960 (Call of Duty: 28960), gamespy2 2302 (Halo, ArmA; Battlefield Vietnam: 23000), gamespy3 29900, minecraft 25565, minecraft-query 25565, bedrock 19132, teeworlds 8303, mumble 64738, quake2 27910 (QuakeWorld: 27500), fivem 30120, doom3 27666 (Quake 4: 28004, ETQW: 27733), eye 22126 (ASE: game port + 123), unreal2 7778 (game port + 1), frostbite 47200 (Bad Company 2: 48888), teamspeak3 10011 (its voice port, 9987, is --voice-port)";

/// The exit category of a refused server address: [`Category::PortOutOfRange`] when the port
/// is a number outside 1-65535, else [`Category::BadAddress`].
pub fn category(error: &BadAddress) -> Category {
    if error.port_out_of_range() {
        Category::PortOutOfRange
    } else {
        Category::BadAddress
    }
}

/// A local address to listen on: `ip:port`, `[v6]:port`, or a port alone (all IPv4
/// interfaces). Port 0 picks a free port; `gsq serve` prints the one it got.
///
/// A port number above 65535 is [`Category::PortOutOfRange`], anything else that does not
/// parse [`Category::BadAddress`].
pub fn parse_listen(text: &str) -> Result<SocketAddr, BadValue> {
    let text = text.trim();
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let out_of_range = |port: &str| {
        BadValue::new(
            Category::PortOutOfRange,
            format!("port {port} is out of range (0-65535)"),
        )
    };
    let is_number = |port: &str| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
    let port = text.strip_prefix(':').unwrap_or(text);
    if is_number(port) {
        return match port.parse::<u16>() {
            Ok(port) => Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port))),
            Err(_) => Err(out_of_range(port)),
        };
    }
    // An IP address with a port that is a number but too large for one.
    if let Some((ip, port)) = text.rsplit_once(':') {
        let ip = ip
            .strip_prefix('[')
            .and_then(|ip| ip.strip_suffix(']'))
            .unwrap_or(ip);
        if is_number(port) && port.parse::<u16>().is_err() && ip.parse::<IpAddr>().is_ok() {
            return Err(out_of_range(port));
        }
    }
    Err(BadValue::new(
        Category::BadAddress,
        format!("{text:?} is not a listen address: expected ip:port, [ipv6]:port or a port number"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_net::Protocol;

    fn category_of(text: &str) -> Category {
        category(&text.parse::<HostPort>().unwrap_err())
    }

    #[test]
    fn out_of_range_ports_are_told_apart_from_malformed_addresses() {
        assert_eq!(category_of("host:70000"), Category::PortOutOfRange);
        assert_eq!(category_of("host:abc"), Category::BadAddress);
    }
    #[test]
    fn listen_addresses() {
        assert_eq!(
            parse_listen("127.0.0.1:0"),
            Ok("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(parse_listen("[::1]:9"), Ok("[::1]:9".parse().unwrap()));
        assert_eq!(parse_listen("7779"), Ok("0.0.0.0:7779".parse().unwrap()));
        assert_eq!(parse_listen(":7779"), Ok("0.0.0.0:7779".parse().unwrap()));
        let err = parse_listen("70000").unwrap_err();
        assert!(err.message.contains("out of range"), "{err}");
        assert_eq!(err.category, Category::PortOutOfRange);
        let err = parse_listen("127.0.0.1:70000").unwrap_err();
        assert_eq!(err.category, Category::PortOutOfRange, "{err}");
        let err = parse_listen("[::1]:70000").unwrap_err();
        assert_eq!(err.category, Category::PortOutOfRange, "{err}");
        let err = parse_listen("localhost:1").unwrap_err();
        assert_eq!(err.category, Category::BadAddress, "{err}");
        assert!(err.message.contains("not a listen address"), "{err}");
    }

    #[test]
    fn every_protocol_has_a_documented_default_port() {
        for p in Protocol::ALL {
            assert!(DEFAULT_PORTS_HELP.contains(&format!("{p} {}", p.default_port())));
        }
    }
}
