//! What a client learns besides replies: ICMP "port unreachable" answers to its requests, and
//! replies that came from another address of the server's port. Both the one-query driver
//! and bulk querying keep this bookkeeping, and conclude a timed-out query with it.
//!
//! A refusal is believed only for every attempt: at least as many refusals as the unanswered
//! step's attempts, and no datagram ever from the target. A reply to any request still answers
//! the query, so a forged ICMP message (which must name the client socket's port, chosen at
//! random) costs one resend, not the query.
//!
//! On Linux an unconnected socket hears of ICMP errors only with `IP_RECVERR` /
//! `IPV6_RECVERR` ([`report_refusals`]), which also queues each error with the address of the
//! request it answers ([`drain_refused`]): a socket shared by many targets can tell which
//! target's port is closed.

use std::io;
use std::net::SocketAddr;

use crate::engine::same_endpoint;
use crate::error::QueryError;

/// One query's refusals and replies from elsewhere.
#[derive(Debug, Default, Clone)]
pub struct Refusals {
    sent: u32,
    refused: u32,
    heard_from_target: bool,
    /// The latest other address of the target's port that sent datagrams, and how many.
    elsewhere: Option<(SocketAddr, u32)>,
}

impl Refusals {
    /// A request went out.
    pub fn sent(&mut self) {
        self.sent = self.sent.saturating_add(1);
    }

    /// A request was answered with ICMP "port unreachable".
    pub fn refused(&mut self) {
        self.refused = self.refused.saturating_add(1);
    }

    /// A datagram from `from` arrived for the query of `target`.
    pub fn received(&mut self, from: SocketAddr, target: SocketAddr) {
        if same_endpoint(from, target) {
            self.heard_from_target = true;
        } else if from.port() == target.port() {
            let count = match self.elsewhere {
                Some((other, count)) if other == from => count,
                _ => 0,
            };
            self.elsewhere = Some((from, count.saturating_add(1)));
        }
    }

    /// The query's result, with what was learned: a timeout whose every attempt was refused
    /// is [`QueryError::NothingListens`]; one while another address of the port sent
    /// datagrams is [`QueryError::AnsweredElsewhere`].
    pub fn conclude<T>(
        &self,
        target: SocketAddr,
        result: Result<T, QueryError>,
    ) -> Result<T, QueryError> {
        match result {
            Err(QueryError::Timeout { attempts, .. })
                if !self.heard_from_target && self.refused >= attempts.max(1) =>
            {
                Err(QueryError::NothingListens {
                    target,
                    attempts: self.sent,
                })
            }
            Err(timeout @ (QueryError::Timeout { .. } | QueryError::Deadline { .. })) => {
                match self.elsewhere {
                    Some((from, datagrams)) if !self.heard_from_target => {
                        Err(QueryError::AnsweredElsewhere {
                            timeout: Box::new(timeout),
                            target,
                            from,
                            datagrams,
                        })
                    }
                    _ => Err(timeout),
                }
            }
            other => other,
        }
    }
}

/// Whether a socket error reports an ICMP "port unreachable" for an earlier send.
pub fn is_refusal(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
    )
}

/// Makes an unconnected socket hear of ICMP errors (`IP_RECVERR` / `IPV6_RECVERR`, the latter
/// also for IPv4 on a dual-stack socket). Returns whether it now does. Linux only: elsewhere
/// a socket hears of them only when connected to its one peer.
///
/// A queued error wakes a task waiting for `Interest::ERROR` (not one waiting for datagrams).
#[cfg(target_os = "linux")]
pub fn report_refusals(socket: &impl std::os::fd::AsFd, ipv6: bool) -> bool {
    use nix::sys::socket::{setsockopt, sockopt};
    if ipv6 {
        setsockopt(socket, sockopt::Ipv6RecvErr, &true).is_ok()
    } else {
        setsockopt(socket, sockopt::Ipv4RecvErr, &true).is_ok()
    }
}

/// Reads the socket's queued ICMP errors ([`report_refusals`]) without blocking and calls
/// `refused` with the destination of each request a "port unreachable" answered; other
/// errors (host unreachable, too big) are read and left to the timeout. Returns how many
/// errors were read.
#[cfg(target_os = "linux")]
pub fn drain_refused(socket: &tokio::net::UdpSocket, mut refused: impl FnMut(SocketAddr)) -> usize {
    use std::os::fd::AsRawFd;

    use nix::libc;
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};

    // Clears the socket's error readiness, so that a task waiting for the next error waits.
    let _ = socket.try_io(tokio::io::Interest::ERROR, || {
        Err::<(), _>(io::ErrorKind::WouldBlock.into())
    });
    let fd = socket.as_raw_fd();
    let mut read = 0;
    // The queue holds at most what the receive buffer allows; the bound only guards a loop.
    for _ in 0..1024 {
        let mut payload = [0u8; 64];
        let mut iov = [io::IoSliceMut::new(&mut payload)];
        let mut control = nix::cmsg_space!(libc::sock_extended_err, libc::sockaddr_in6);
        let flags = MsgFlags::MSG_ERRQUEUE | MsgFlags::MSG_DONTWAIT;
        let Ok(message) = recvmsg::<SockaddrStorage>(fd, &mut iov, Some(&mut control), flags)
        else {
            break;
        };
        read += 1;
        let destination = message.address.and_then(|a| {
            a.as_sockaddr_in()
                .map(|v4| SocketAddr::V4((*v4).into()))
                .or_else(|| a.as_sockaddr_in6().map(|v6| SocketAddr::V6((*v6).into())))
        });
        let Ok(cmsgs) = message.cmsgs() else {
            continue;
        };
        for cmsg in cmsgs {
            let error = match cmsg {
                ControlMessageOwned::Ipv4RecvErr(error, _) => error,
                ControlMessageOwned::Ipv6RecvErr(error, _) => error,
                _ => continue,
            };
            let from_icmp = matches!(
                error.ee_origin,
                libc::SO_EE_ORIGIN_ICMP | libc::SO_EE_ORIGIN_ICMP6
            );
            let errno = i32::try_from(error.ee_errno).unwrap_or(0);
            if from_icmp && errno == libc::ECONNREFUSED {
                if let Some(destination) = destination {
                    refused(destination);
                }
            }
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn timeout() -> QueryError {
        QueryError::Timeout {
            waiting_for: "status request",
            attempts: 2,
            after: Duration::from_secs(2),
        }
    }

    fn target() -> SocketAddr {
        "192.0.2.1:27015".parse().unwrap()
    }

    #[test]
    fn every_attempt_refused_and_nothing_heard_is_nothing_listens() {
        let mut r = Refusals::default();
        r.sent();
        r.sent();
        r.refused();
        assert!(matches!(
            r.conclude::<()>(target(), Err(timeout())),
            Err(QueryError::Timeout { .. })
        ));
        r.refused();
        assert!(matches!(
            r.conclude::<()>(target(), Err(timeout())),
            Err(QueryError::NothingListens { attempts: 2, .. })
        ));
        // Anything from the target proves someone listens.
        r.received(target(), target());
        assert!(matches!(
            r.conclude::<()>(target(), Err(timeout())),
            Err(QueryError::Timeout { .. })
        ));
    }

    #[test]
    fn datagrams_from_another_address_of_the_port_are_named_at_the_timeout() {
        let mut r = Refusals::default();
        r.received("192.0.2.9:4000".parse().unwrap(), target());
        assert!(matches!(
            r.conclude::<()>(target(), Err(timeout())),
            Err(QueryError::Timeout { .. })
        ));
        let other: SocketAddr = "192.0.2.7:27015".parse().unwrap();
        r.received(other, target());
        r.received(other, target());
        let error = r.conclude::<()>(target(), Err(timeout())).unwrap_err();
        match &error {
            QueryError::AnsweredElsewhere {
                from, datagrams, ..
            } => {
                assert_eq!((*from, *datagrams), (other, 2));
            }
            other => panic!("{other:?}"),
        }
        let text = error.to_string();
        assert!(text.starts_with("no reply to the status request"), "{text}");
        assert!(text.contains("192.0.2.7:27015"), "{text}");
        // Other results pass through.
        assert_eq!(r.conclude(target(), Ok(5)).unwrap(), 5);
    }
}
