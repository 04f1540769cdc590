//! DNS SRV records: a Minecraft Java server named without a port is looked up as
//! `_minecraft._tcp.HOST` first, as the game does, so that `gsq query minecraft example.org`
//! reaches the server an SRV record moves to another host or port.
//!
//! Lenient by design: no SRV record (NXDOMAIN, an empty answer), a name server that does
//! not answer within [`SRV_WAIT`], or no usable record all fall back to the host's own
//! A/AAAA records on the default port; the lookup costs at most that wait. A record's target
//! is looked up through the same resolver. The handshake still carries the name the user gave
//! (a proxy routes by it), not the record's target.
//!
//! ```no_run
//! use query_net::address::HostPort;
//! use query_net::srv::SrvResolver;
//!
//! # async fn example() -> Result<(), query_net::QueryError> {
//! let resolver = SrvResolver::system()?;
//! let host: HostPort = "mc.example.org".parse().unwrap();
//! let address = resolver.resolve_minecraft(&host).await?;
//! println!("{host} is served at {address}");
//! # Ok(())
//! # }
//! ```

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_resolver::config::{NameServerConfig, ResolverConfig, ResolverOpts};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::proto::rr::{Name, RData, RecordType};
use hickory_resolver::TokioResolver;

use crate::address::HostPort;
use crate::driver;
use crate::error::QueryError;
use crate::protocol::Protocol;

/// The service and protocol labels of Minecraft Java's SRV records.
pub const MINECRAFT_SERVICE: &str = "_minecraft._tcp";

/// The longest an SRV lookup may take before the query goes on without it: a server
/// without a record must not wait for a slow name server.
pub const SRV_WAIT: Duration = Duration::from_millis(1500);

/// A DNS resolver for SRV records (and their targets' addresses).
#[derive(Clone)]
pub struct SrvResolver {
    resolver: TokioResolver,
}

impl std::fmt::Debug for SrvResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SrvResolver").finish_non_exhaustive()
    }
}

impl SrvResolver {
    /// The system's resolver configuration (`/etc/resolv.conf` on Unix, the registry on
    /// Windows), each name server asked once for at most [`SRV_WAIT`].
    pub fn system() -> Result<Self, QueryError> {
        let mut builder = TokioResolver::builder_tokio().map_err(|e| QueryError::Resolve {
            host: MINECRAFT_SERVICE.to_owned(),
            source: io::Error::other(format!("cannot read the system's DNS configuration: {e}")),
        })?;
        quick(builder.options_mut());
        Self::build(builder)
    }

    /// A resolver that asks the name server at `server` (UDP) alone.
    pub fn with_name_server(server: SocketAddr) -> Result<Self, QueryError> {
        let mut name_server = NameServerConfig::udp(server.ip());
        for connection in &mut name_server.connections {
            connection.port = server.port();
        }
        let config = ResolverConfig::from_parts(None, Vec::new(), vec![name_server]);
        let mut builder =
            TokioResolver::builder_with_config(config, TokioRuntimeProvider::default());
        quick(builder.options_mut());
        Self::build(builder)
    }

    fn build(
        builder: hickory_resolver::ResolverBuilder<TokioRuntimeProvider>,
    ) -> Result<Self, QueryError> {
        let resolver = builder.build().map_err(|e| QueryError::Resolve {
            host: MINECRAFT_SERVICE.to_owned(),
            source: io::Error::other(format!("cannot set up the DNS resolver: {e}")),
        })?;
        Ok(SrvResolver { resolver })
    }

    /// The target and port of `host`'s `_minecraft._tcp` record, if it has a usable one
    /// within [`SRV_WAIT`]: of the lowest priority, the heaviest. `None` for IP addresses,
    /// `localhost` (never sent to DNS) and names without a record.
    pub async fn minecraft(&self, host: &str) -> Option<(String, u16)> {
        let host = host.trim_end_matches('.');
        if host.parse::<IpAddr>().is_ok() || is_localhost(host) {
            return None;
        }
        // Fully qualified: one query, not one per search domain.
        let name = Name::from_ascii(format!("{MINECRAFT_SERVICE}.{host}.")).ok()?;
        let lookup = tokio::time::timeout(SRV_WAIT, self.resolver.lookup(name, RecordType::SRV));
        // Every failure (no record, no name server, no answer in time) means no record.
        let answers = lookup.await.ok()?.ok()?;
        answers
            .answers()
            .iter()
            .filter_map(|record| match &record.data {
                RData::SRV(srv) if srv.port != 0 && !srv.target.is_root() => Some(srv),
                _ => None,
            })
            .min_by_key(|srv| (srv.priority, std::cmp::Reverse(srv.weight)))
            .map(|srv| {
                let target = srv.target.to_ascii();
                (target.trim_end_matches('.').to_owned(), srv.port)
            })
    }

    /// Where to reach the Minecraft Java server `host`: a literal address as it is; a name
    /// with a port by its A/AAAA records; a name without one by its SRV record's target and
    /// port when it has one, else by its own records on port 25565.
    pub async fn resolve_minecraft(&self, host: &HostPort) -> Result<SocketAddr, QueryError> {
        let default_port = Protocol::Minecraft.default_port();
        if host.port().is_some() || !host.is_name() {
            return host.resolve(default_port).await;
        }
        match self.minecraft(&host.host()).await {
            Some((target, port)) => self.address_of(&target, port).await,
            None => host.resolve(default_port).await,
        }
    }

    /// The first address of `name`, asked of this resolver (an SRV target is in the same
    /// DNS as its record), with `port`.
    async fn address_of(&self, name: &str, port: u16) -> Result<SocketAddr, QueryError> {
        let what = format!("{name}:{port}");
        let fqdn = format!("{}.", name.trim_end_matches('.'));
        let found = tokio::time::timeout(SRV_WAIT, self.resolver.lookup_ip(fqdn.as_str())).await;
        let error = match found {
            Ok(Ok(found)) => match found.iter().next() {
                Some(ip) => return Ok(SocketAddr::new(ip, port)),
                None => "the name has no addresses".to_owned(),
            },
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_owned(),
        };
        // The system's own lookup knows what DNS may not (the hosts file, mDNS).
        driver::resolve(&what)
            .await
            .map_err(|_| QueryError::Resolve {
                host: what,
                source: io::Error::new(io::ErrorKind::NotFound, error),
            })
    }
}

/// One try per name server, briefly: an SRV lookup only adds to a query's time.
fn quick(options: &mut ResolverOpts) {
    options.timeout = SRV_WAIT;
    options.attempts = 1;
}

fn is_localhost(host: &str) -> bool {
    let lower = host.to_ascii_lowercase();
    lower == "localhost" || lower.ends_with(".localhost")
}
