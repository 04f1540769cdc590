//! Batched socket calls: on Linux, up to [`BATCH`] datagrams read with one `recvmmsg`, and
//! replies sent with one `sendmmsg` (through nix).
//!
//! A responder's or a bulk client's work per datagram is small, so one system call per
//! datagram is most of its cost; a batch pays it once for many. Batches form only under
//! load: a quiet socket's `recvmmsg` returns the one datagram waiting, so latency is
//! unchanged. Elsewhere a batch is read with one plain receive, and
//! [`driver::serve_with`](crate::driver::serve_with) uses the plain path
//! ([`driver::serve_plain_with`](crate::driver::serve_plain_with)).

use std::io;
use std::net::SocketAddr;

use tokio::net::UdpSocket;

use crate::driver::RECV_BUFFER;

#[cfg(target_os = "linux")]
pub(crate) use linux::SendBatch;

/// Datagrams read, or replies sent, per system call at most (on Linux; one elsewhere).
pub const BATCH: usize = if cfg!(target_os = "linux") { 32 } else { 1 };

/// Buffers for one `recvmmsg`: [`BATCH`] datagrams of up to [`RECV_BUFFER`] bytes.
#[derive(Debug)]
pub(crate) struct RecvBatch {
    buffers: Box<[u8]>,
    /// Length and source of each datagram of the last call.
    received: Vec<(usize, Option<SocketAddr>)>,
}

impl RecvBatch {
    pub(crate) fn new() -> Self {
        RecvBatch {
            buffers: vec![0; BATCH * RECV_BUFFER].into_boxed_slice(),
            received: Vec::with_capacity(BATCH),
        }
    }

    /// Reads what is waiting, up to [`BATCH`] datagrams, without blocking; `WouldBlock` when
    /// nothing is.
    pub(crate) fn recv(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        #[cfg(target_os = "linux")]
        return linux::recv(socket, &mut self.buffers, &mut self.received);
        #[cfg(not(target_os = "linux"))]
        {
            let (len, from) = socket.try_recv_from(&mut self.buffers[..RECV_BUFFER])?;
            self.received.clear();
            self.received.push((len, Some(from)));
            Ok(1)
        }
    }

    /// Datagram `i` of the last call: its source (`None` for an address family other than
    /// IP, which cannot happen on a UDP socket) and its bytes.
    pub(crate) fn datagram(&self, i: usize) -> (Option<SocketAddr>, &[u8]) {
        let (len, from) = self.received[i];
        let start = i * RECV_BUFFER;
        (from, &self.buffers[start..start + len])
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::SocketAddr;
    use std::os::fd::AsRawFd;

    use nix::sys::socket::{
        recvmmsg, sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage,
    };
    use tokio::io::Interest;
    use tokio::net::UdpSocket;

    use super::BATCH;
    use crate::driver::RECV_BUFFER;
    use crate::limit::Stats;

    /// The largest reply datagram a batch holds (UDP's limit over IPv4).
    const MAX_REPLY: usize = 65_507;

    /// One `recvmmsg` into `buffers` ([`BATCH`] chunks of [`RECV_BUFFER`] bytes), each
    /// datagram's length and source into `received`.
    pub(super) fn recv(
        socket: &UdpSocket,
        buffers: &mut [u8],
        received: &mut Vec<(usize, Option<SocketAddr>)>,
    ) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        socket.try_io(Interest::READABLE, || {
            let mut chunks = buffers.chunks_exact_mut(RECV_BUFFER);
            let mut slices: [[IoSliceMut<'_>; 1]; BATCH] = std::array::from_fn(|_| {
                [IoSliceMut::new(
                    chunks.next().expect("the buffer holds BATCH chunks"),
                )]
            });
            let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
            let results = recvmmsg(
                fd,
                &mut headers,
                slices.iter_mut(),
                MsgFlags::MSG_DONTWAIT,
                None,
            )?;
            received.clear();
            received.extend(
                results.map(|message| (message.bytes, message.address.and_then(socket_addr))),
            );
            Ok(received.len())
        })
    }

    /// Replies waiting to go out with one `sendmmsg`.
    pub(crate) struct SendBatch {
        buffers: Box<[u8]>,
        /// Length of each queued reply; reply `i` starts at `i * MAX_REPLY`.
        lens: Vec<usize>,
        to: Vec<Option<SockaddrStorage>>,
    }

    impl SendBatch {
        pub(crate) fn new() -> Self {
            SendBatch {
                buffers: vec![0; BATCH * MAX_REPLY].into_boxed_slice(),
                lens: Vec::with_capacity(BATCH),
                to: Vec::with_capacity(BATCH),
            }
        }

        pub(crate) fn is_full(&self) -> bool {
            self.lens.len() == BATCH
        }

        /// Queues a copy of `reply` for `to`. A reply over UDP's limit cannot be sent at all and
        /// is counted as a send error, as the kernel would refuse it.
        pub(crate) fn push(&mut self, reply: &[u8], to: SocketAddr, stats: &Stats) {
            debug_assert!(!self.is_full());
            if reply.len() > MAX_REPLY {
                Stats::bump(&stats.send_errors);
                return;
            }
            let start = self.lens.len() * MAX_REPLY;
            self.buffers[start..start + reply.len()].copy_from_slice(reply);
            self.lens.push(reply.len());
            self.to.push(Some(SockaddrStorage::from(to)));
        }

        /// Sends every queued reply, waiting while the socket's buffer is full. A reply the
        /// kernel refuses is counted and skipped; the rest still go.
        pub(crate) async fn flush(&mut self, socket: &UdpSocket, stats: &Stats) {
            let mut sent = 0;
            while sent < self.lens.len() {
                match self.send_from(socket, sent) {
                    Ok(n) => {
                        for _ in 0..n {
                            Stats::bump(&stats.replies_sent);
                        }
                        sent += n;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if socket.writable().await.is_err() {
                            break;
                        }
                    }
                    Err(_) => {
                        Stats::bump(&stats.send_errors);
                        sent += 1;
                    }
                }
            }
            self.lens.clear();
            self.to.clear();
        }

        /// One `sendmmsg` of the queued replies from `first` on; how many the kernel took (at
        /// least one), or the error of the first.
        fn send_from(&self, socket: &UdpSocket, first: usize) -> io::Result<usize> {
            let fd = socket.as_raw_fd();
            socket.try_io(Interest::WRITABLE, || {
                let count = self.lens.len() - first;
                let slices: [[IoSlice<'_>; 1]; BATCH] = std::array::from_fn(|i| {
                    let len = self.lens.get(first + i).copied().unwrap_or(0);
                    [IoSlice::new(
                        &self.buffers[(first + i).min(BATCH - 1) * MAX_REPLY..][..len],
                    )]
                });
                let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(count, None);
                let cmsgs: [ControlMessage<'_>; 0] = [];
                let results = sendmmsg(
                    fd,
                    &mut headers,
                    slices[..count].iter(),
                    &self.to[first..],
                    cmsgs,
                    MsgFlags::MSG_DONTWAIT,
                )?;
                Ok(results.count())
            })
        }
    }

    fn socket_addr(address: SockaddrStorage) -> Option<SocketAddr> {
        if let Some(v4) = address.as_sockaddr_in() {
            Some(SocketAddr::V4((*v4).into()))
        } else {
            address
                .as_sockaddr_in6()
                .map(|v6| SocketAddr::V6((*v6).into()))
        }
    }
}
