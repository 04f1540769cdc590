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

/// Datagrams read, or replies sent, per system call at most (on Linux; one elsewhere).
pub const BATCH: usize = if cfg!(target_os = "linux") { 32 } else { 1 };

/// Buffers for one `recvmmsg`: [`BATCH`] datagrams of up to [`RECV_BUFFER`] bytes.
#[derive(Debug)]
pub struct RecvBatch {
    buffers: Box<[u8]>,
    /// One plain receive per call, as on platforms without `recvmmsg`.
    plain: bool,
    /// Length and source of each datagram of the last call.
    received: Vec<(usize, Option<SocketAddr>)>,
}

impl Default for RecvBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl RecvBatch {
    /// Room for [`BATCH`] datagrams of up to [`RECV_BUFFER`] bytes.
    pub fn new() -> Self {
        RecvBatch {
            buffers: vec![0; BATCH * RECV_BUFFER].into_boxed_slice(),
            plain: !cfg!(target_os = "linux"),
            received: Vec::with_capacity(BATCH),
        }
    }

    /// Reads one datagram per call, with a plain receive: the path of platforms without
    /// `recvmmsg`, which Linux can run too (to test it, or to compare).
    pub fn plain() -> Self {
        RecvBatch {
            plain: true,
            ..RecvBatch::new()
        }
    }

    /// Reads what is waiting, up to [`BATCH`] datagrams (one for [`RecvBatch::plain`]),
    /// without blocking; `WouldBlock` when nothing is.
    pub fn recv(&mut self, socket: &UdpSocket) -> io::Result<usize> {
        #[cfg(target_os = "linux")]
        if !self.plain {
            return linux::recv(socket, &mut self.buffers, &mut self.received);
        }
        #[cfg(not(target_os = "linux"))]
        debug_assert!(self.plain, "only Linux reads in batches");
        let (len, from) = socket.try_recv_from(&mut self.buffers[..RECV_BUFFER])?;
        self.received.clear();
        self.received.push((len, Some(from)));
        Ok(1)
    }

    /// Datagram `i` of the last call: its source (`None` for an address family other than
    /// IP, which cannot happen on a UDP socket) and its bytes.
    pub fn datagram(&self, i: usize) -> (Option<SocketAddr>, &[u8]) {
        let (len, from) = self.received[i];
        let start = i * RECV_BUFFER;
        (from, &self.buffers[start..start + len])
    }
}

/// Datagrams waiting to go out with one `sendmmsg` (one plain send each elsewhere), each
/// copied into a slot of a fixed size.
#[derive(Debug)]
pub struct SendBatch {
    buffers: Box<[u8]>,
    slot: usize,
    /// Length of each queued datagram; datagram `i` starts at `i * slot`.
    lens: Vec<usize>,
    to: Vec<SocketAddr>,
}

impl SendBatch {
    /// Room for [`BATCH`] datagrams of up to `slot` bytes.
    pub fn new(slot: usize) -> Self {
        SendBatch {
            buffers: vec![0; BATCH * slot].into_boxed_slice(),
            slot,
            lens: Vec::with_capacity(BATCH),
            to: Vec::with_capacity(BATCH),
        }
    }

    /// Whether [`BATCH`] datagrams are queued.
    pub fn is_full(&self) -> bool {
        self.lens.len() == BATCH
    }

    /// Queues a copy of `datagram` for `to`; `false` (nothing queued) when the batch is full
    /// or the datagram is longer than a slot.
    pub fn push(&mut self, datagram: &[u8], to: SocketAddr) -> bool {
        if self.is_full() || datagram.len() > self.slot {
            return false;
        }
        let start = self.lens.len() * self.slot;
        self.buffers[start..start + datagram.len()].copy_from_slice(datagram);
        self.lens.push(datagram.len());
        self.to.push(to);
        true
    }

    fn datagram(&self, i: usize) -> Option<&[u8]> {
        let len = *self.lens.get(i)?;
        Some(&self.buffers[i * self.slot..][..len])
    }

    /// Sends every queued datagram, waiting while the socket's buffer is full, and empties
    /// the batch. `on_refused` gets the destination and error of each datagram the kernel
    /// refused; the rest still go. Returns how many went.
    pub async fn flush(
        &mut self,
        socket: &UdpSocket,
        mut on_refused: impl FnMut(SocketAddr, io::Error),
    ) -> usize {
        let mut done = 0;
        let mut sent = 0;
        while done < self.lens.len() {
            #[cfg(target_os = "linux")]
            let result = linux::send(socket, self, done);
            #[cfg(not(target_os = "linux"))]
            let result = socket
                .try_send_to(self.datagram(done).unwrap_or_default(), self.to[done])
                .map(|_| 1);
            match result {
                Ok(n) => {
                    done += n;
                    sent += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Err(e) = socket.writable().await {
                        for &to in &self.to[done..] {
                            on_refused(to, io::Error::new(e.kind(), e.to_string()));
                        }
                        break;
                    }
                }
                Err(e) => {
                    on_refused(self.to[done], e);
                    done += 1;
                }
            }
        }
        self.lens.clear();
        self.to.clear();
        sent
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

    /// One `sendmmsg` of `datagrams[first..]`; how many the kernel took (at least one),
    /// or the error of the first.
    pub(super) fn send(
        socket: &UdpSocket,
        batch: &super::SendBatch,
        first: usize,
    ) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        socket.try_io(Interest::WRITABLE, || {
            let count = batch.lens.len() - first;
            let slices: [[IoSlice<'_>; 1]; BATCH] = std::array::from_fn(|i| {
                [IoSlice::new(batch.datagram(first + i).unwrap_or_default())]
            });
            let to: [Option<SockaddrStorage>; BATCH] = std::array::from_fn(|i| {
                batch.to.get(first + i).map(|&to| SockaddrStorage::from(to))
            });
            let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(count, None);
            let cmsgs: [ControlMessage<'_>; 0] = [];
            let results = sendmmsg(
                fd,
                &mut headers,
                slices[..count].iter(),
                &to[..count],
                cmsgs,
                MsgFlags::MSG_DONTWAIT,
            )?;
            Ok(results.count())
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn socket_with(datagrams: &[&[u8]]) -> (UdpSocket, SocketAddr) {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        for datagram in datagrams {
            sender
                .send_to(datagram, receiver.local_addr().unwrap())
                .await
                .unwrap();
        }
        receiver.readable().await.unwrap();
        (receiver, sender.local_addr().unwrap())
    }

    #[tokio::test]
    async fn a_plain_batch_reads_one_datagram_per_call() {
        let (socket, from) = socket_with(&[b"one", b"two"]).await;
        let mut batch = RecvBatch::plain();
        assert_eq!(batch.recv(&socket).unwrap(), 1);
        assert_eq!(batch.datagram(0), (Some(from), &b"one"[..]));
        assert_eq!(batch.recv(&socket).unwrap(), 1);
        assert_eq!(batch.datagram(0), (Some(from), &b"two"[..]));
        let nothing = batch.recv(&socket).unwrap_err();
        assert_eq!(nothing.kind(), io::ErrorKind::WouldBlock);
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_batch_reads_every_waiting_datagram_in_one_call() {
        let (socket, from) = socket_with(&[b"one", b"two", b"three"]).await;
        let mut batch = RecvBatch::new();
        assert_eq!(batch.recv(&socket).unwrap(), 3);
        for (i, expected) in [&b"one"[..], b"two", b"three"].into_iter().enumerate() {
            assert_eq!(batch.datagram(i), (Some(from), expected));
        }
    }
}
