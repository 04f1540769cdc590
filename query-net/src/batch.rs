//! Batched socket calls: on Linux, up to [`BATCH`] datagrams read with one `recvmmsg`, and
//! replies sent with one `sendmmsg` (through nix), where consecutive datagrams to one
//! destination leave as one segmented message (UDP GSO, `UDP_SEGMENT`).
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
    /// The address each datagram of the last call was sent to, where the socket reports it
    /// ([`answer_from_destination`]).
    destinations: Vec<Option<Destination>>,
}

/// The local address a datagram was sent to, as `IP_PKTINFO` / `IPV6_PKTINFO` report it: a
/// reply sent from it reaches a client that checks where replies come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Destination {
    /// The address the client sent to.
    pub ip: std::net::IpAddr,
    /// The interface it arrived on (an IPv6 link-local address needs it to be sent from).
    pub interface: u32,
}

/// Makes a socket bound to a wildcard address (`0.0.0.0`, `::`) report each datagram's
/// destination address, so that [`SendBatch::push_from`] can answer from it: on a host with
/// several addresses, a reply from the primary address to a request sent to another is
/// dropped as spoofed by careful clients (`gsq` among them), as DNS servers found long ago.
/// Returns whether the socket now reports them; `false` for a socket bound to one address
/// (its replies leave from it anyway) and off Linux.
pub fn answer_from_destination(socket: &UdpSocket) -> bool {
    let Ok(local) = socket.local_addr() else {
        return false;
    };
    if !local.ip().is_unspecified() {
        return false;
    }
    #[cfg(target_os = "linux")]
    return linux::report_destinations(socket, local.is_ipv6()).is_ok();
    #[cfg(not(target_os = "linux"))]
    return false;
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
            destinations: Vec::with_capacity(BATCH),
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
            return linux::recv(
                socket,
                &mut self.buffers,
                &mut self.received,
                &mut self.destinations,
            );
        }
        #[cfg(not(target_os = "linux"))]
        debug_assert!(self.plain, "only Linux reads in batches");
        let (len, from) = socket.try_recv_from(&mut self.buffers[..RECV_BUFFER])?;
        self.received.clear();
        self.received.push((len, Some(from)));
        self.destinations.clear();
        self.destinations.push(None);
        Ok(1)
    }

    /// The address datagram `i` of the last call was sent to, if the socket reports it
    /// ([`answer_from_destination`]).
    pub fn destination(&self, i: usize) -> Option<Destination> {
        self.destinations.get(i).copied().flatten()
    }

    /// Datagram `i` of the last call: its source (`None` for an address family other than
    /// IP, which cannot happen on a UDP socket) and its bytes.
    pub fn datagram(&self, i: usize) -> (Option<SocketAddr>, &[u8]) {
        let (len, from) = self.received[i];
        let start = i * RECV_BUFFER;
        (from, &self.buffers[start..start + len])
    }
}

/// Largest datagram that is sent as a segment of a segmented (GSO) message: a segment must
/// fit the path's MTU, which is not known here; 1400 bytes fit the common ones, and is where
/// real servers split their replies. Larger datagrams go one per message, and the kernel
/// fragments them if it must.
pub const MAX_SEGMENT: usize = 1400;

/// Datagrams waiting to go out with one `sendmmsg` (one plain send each elsewhere), each
/// copied into a slot of a fixed size.
///
/// On Linux, a run of datagrams to one destination, all of one size but the last (which may
/// be shorter), leaves as one message that the kernel segments (UDP GSO): one trip through
/// the send path instead of one per datagram. The receiver still gets separate datagrams. A
/// multi-datagram reply is such a run, and so are the replies to one busy client. When a
/// segmented message fails, the rest of the flush goes one datagram per message; if the
/// datagram then goes alone, the kernel or the route refuses segmentation (no `UDP_SEGMENT`,
/// no checksum offload, a path MTU under [`MAX_SEGMENT`]), and the batch stops segmenting.
#[derive(Debug)]
pub struct SendBatch {
    buffers: Box<[u8]>,
    slot: usize,
    /// Length of each queued datagram; datagram `i` starts at `i * slot`.
    lens: Vec<usize>,
    to: Vec<SocketAddr>,
    /// The local address each datagram leaves from, where one was chosen.
    from: Vec<Option<Destination>>,
    /// Whether runs to one destination leave as segmented messages.
    segmentation: bool,
}

impl SendBatch {
    /// Room for [`BATCH`] datagrams of up to `slot` bytes.
    pub fn new(slot: usize) -> Self {
        SendBatch {
            buffers: vec![0; BATCH * slot].into_boxed_slice(),
            slot,
            lens: Vec::with_capacity(BATCH),
            to: Vec::with_capacity(BATCH),
            from: Vec::with_capacity(BATCH),
            segmentation: cfg!(target_os = "linux"),
        }
    }

    /// [`SendBatch::new`] that sends one datagram per message, never segmented: the path of
    /// kernels without UDP GSO, which any kernel can run (to test it, or to compare).
    pub fn unsegmented(slot: usize) -> Self {
        SendBatch {
            segmentation: false,
            ..SendBatch::new(slot)
        }
    }

    /// Whether runs to one destination leave as segmented messages: on Linux until the
    /// kernel refuses one.
    pub fn segments(&self) -> bool {
        self.segmentation
    }

    /// Whether [`BATCH`] datagrams are queued.
    pub fn is_full(&self) -> bool {
        self.lens.len() == BATCH
    }

    /// Queues a copy of `datagram` for `to`; `false` (nothing queued) when the batch is full
    /// or the datagram is longer than a slot.
    pub fn push(&mut self, datagram: &[u8], to: SocketAddr) -> bool {
        self.push_from(datagram, to, None)
    }

    /// [`push`](SendBatch::push), the datagram leaving from `from` (the address the request
    /// was sent to, [`RecvBatch::destination`]) where one is given; on Linux only, elsewhere
    /// from wherever the system chooses.
    pub fn push_from(
        &mut self,
        datagram: &[u8],
        to: SocketAddr,
        from: Option<Destination>,
    ) -> bool {
        if self.is_full() || datagram.len() > self.slot {
            return false;
        }
        let start = self.lens.len() * self.slot;
        self.buffers[start..start + datagram.len()].copy_from_slice(datagram);
        self.lens.push(datagram.len());
        self.to.push(to);
        self.from.push(from);
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
        // Cleared for the rest of this flush when a segmented message fails, so that each
        // datagram's own error is reported.
        let mut segment = self.segmentation;
        // The first datagram of a segmented message that failed as segmentation can make
        // one fail: if it then goes alone, segmentation was the cause (not, say, a
        // destination the kernel refuses anyway), and the batch stops segmenting.
        let mut suspect = None;
        while done < self.lens.len() {
            #[cfg(target_os = "linux")]
            let (result, segmented) = linux::send(socket, self, done, segment);
            #[cfg(not(target_os = "linux"))]
            let (result, segmented) = (
                socket
                    .try_send_to(self.datagram(done).unwrap_or_default(), self.to[done])
                    .map(|_| 1),
                false,
            );
            match result {
                Ok(n) => {
                    if suspect == Some(done) {
                        self.segmentation = false;
                    }
                    suspect = None;
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
                Err(e) if segmented => {
                    segment = false;
                    suspect = refuses_segmentation(&e).then_some(done);
                }
                Err(e) => {
                    suspect = None;
                    on_refused(self.to[done], e);
                    done += 1;
                }
            }
        }
        self.lens.clear();
        self.to.clear();
        self.from.clear();
        sent
    }
}

/// Whether `error`, from a segmented message, may say that the kernel, the device or the
/// route cannot segment (no `UDP_SEGMENT`, no checksum offload, a segment over the path's
/// MTU); `EINVAL` may also be the datagram's own fault (port 0), which a retry alone tells.
fn refuses_segmentation(error: &io::Error) -> bool {
    #[cfg(target_os = "linux")]
    return matches!(
        error.raw_os_error(),
        Some(nix::libc::EIO | nix::libc::EINVAL | nix::libc::ENOPROTOOPT | nix::libc::EOPNOTSUPP)
    );
    #[cfg(not(target_os = "linux"))]
    return error.kind() == io::ErrorKind::Unsupported;
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{self, IoSlice, IoSliceMut};
    use std::net::SocketAddr;
    use std::os::fd::AsRawFd;

    use nix::libc;
    use nix::sys::socket::{
        recvmmsg, sendmmsg, setsockopt, sockopt, ControlMessage, ControlMessageOwned, MsgFlags,
        MultiHeaders, SockaddrStorage,
    };
    use tokio::io::Interest;
    use tokio::net::UdpSocket;

    use super::{Destination, BATCH};
    use crate::driver::RECV_BUFFER;

    /// Turns on `IP_PKTINFO` (and `IPV6_RECVPKTINFO` on an IPv6 socket, which reports IPv4
    /// requests to a dual-stack socket as IPv4-mapped addresses).
    pub(super) fn report_destinations(socket: &UdpSocket, ipv6: bool) -> nix::Result<()> {
        if ipv6 {
            setsockopt(socket, sockopt::Ipv6RecvPacketInfo, &true)
        } else {
            setsockopt(socket, sockopt::Ipv4PacketInfo, &true)
        }
    }

    fn destination(
        message: &nix::sys::socket::RecvMsg<'_, '_, SockaddrStorage>,
    ) -> Option<Destination> {
        message.cmsgs().ok()?.find_map(|cmsg| match cmsg {
            ControlMessageOwned::Ipv4PacketInfo(info) => Some(Destination {
                ip: std::net::Ipv4Addr::from(u32::from_be(info.ipi_addr.s_addr)).into(),
                interface: u32::try_from(info.ipi_ifindex).unwrap_or(0),
            }),
            ControlMessageOwned::Ipv6PacketInfo(info) => Some(Destination {
                ip: std::net::Ipv6Addr::from(info.ipi6_addr.s6_addr).into(),
                interface: info.ipi6_ifindex,
            }),
            _ => None,
        })
    }

    /// The control message that makes a reply leave from `from`, on a socket of the family
    /// `ipv6`; `None` where the address cannot be the source on that socket.
    pub(super) enum Source {
        V4(libc::in_pktinfo),
        V6(libc::in6_pktinfo),
    }

    impl Source {
        pub(super) fn of(from: Destination, ipv6: bool) -> Option<Source> {
            use std::net::IpAddr;
            match (from.ip, ipv6) {
                (IpAddr::V4(ip), false) => Some(Source::V4(libc::in_pktinfo {
                    // The interface is left to the route: the address alone sets the source.
                    ipi_ifindex: 0,
                    ipi_spec_dst: libc::in_addr {
                        s_addr: u32::from(ip).to_be(),
                    },
                    ipi_addr: libc::in_addr { s_addr: 0 },
                })),
                (IpAddr::V4(ip), true) => Source::of(
                    Destination {
                        ip: IpAddr::V6(ip.to_ipv6_mapped()),
                        interface: 0,
                    },
                    true,
                ),
                (IpAddr::V6(ip), true) => Some(Source::V6(libc::in6_pktinfo {
                    ipi6_addr: libc::in6_addr {
                        s6_addr: ip.octets(),
                    },
                    // Only a link-local address needs its interface to be sent from.
                    ipi6_ifindex: if ip.is_unicast_link_local() {
                        from.interface
                    } else {
                        0
                    },
                })),
                (IpAddr::V6(_), false) => None,
            }
        }

        pub(super) fn message(&self) -> ControlMessage<'_> {
            match self {
                Source::V4(info) => ControlMessage::Ipv4PacketInfo(info),
                Source::V6(info) => ControlMessage::Ipv6PacketInfo(info),
            }
        }
    }

    /// Room for exactly the control messages of a call: the kernel reads all of
    /// `msg_controllen`, and space left over is refused as a malformed message.
    fn control_space(segmenting: bool, source: Option<&Source>) -> Option<Vec<u8>> {
        match (segmenting, source) {
            (false, None) => None,
            (true, None) => Some(nix::cmsg_space!(u16)),
            (false, Some(Source::V4(_))) => Some(nix::cmsg_space!(libc::in_pktinfo)),
            (false, Some(Source::V6(_))) => Some(nix::cmsg_space!(libc::in6_pktinfo)),
            (true, Some(Source::V4(_))) => Some(nix::cmsg_space!(u16, libc::in_pktinfo)),
            (true, Some(Source::V6(_))) => Some(nix::cmsg_space!(u16, libc::in6_pktinfo)),
        }
    }

    /// One `recvmmsg` into `buffers` ([`BATCH`] chunks of [`RECV_BUFFER`] bytes), each
    /// datagram's length and source into `received`, and the address it was sent to into
    /// `destinations` where the socket reports it.
    pub(super) fn recv(
        socket: &UdpSocket,
        buffers: &mut [u8],
        received: &mut Vec<(usize, Option<SocketAddr>)>,
        destinations: &mut Vec<Option<Destination>>,
    ) -> io::Result<usize> {
        let fd = socket.as_raw_fd();
        socket.try_io(Interest::READABLE, || {
            let mut chunks = buffers.chunks_exact_mut(RECV_BUFFER);
            let mut slices: [[IoSliceMut<'_>; 1]; BATCH] = std::array::from_fn(|_| {
                [IoSliceMut::new(
                    chunks.next().expect("the buffer holds BATCH chunks"),
                )]
            });
            // Room for either packet-info message, whichever the socket reports.
            let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(
                BATCH,
                Some(nix::cmsg_space!(libc::in6_pktinfo)),
            );
            let results = recvmmsg(
                fd,
                &mut headers,
                slices.iter_mut(),
                MsgFlags::MSG_DONTWAIT,
                None,
            )?;
            received.clear();
            destinations.clear();
            for message in results {
                received.push((message.bytes, message.address.and_then(socket_addr)));
                destinations.push(destination(&message));
            }
            Ok(received.len())
        })
    }

    /// One `sendmmsg` from datagram `first` on; how many datagrams the kernel took (at least
    /// one), or the error of the first message, and whether the call segmented.
    pub(super) fn send(
        socket: &UdpSocket,
        batch: &super::SendBatch,
        first: usize,
        segment: bool,
    ) -> (io::Result<usize>, bool) {
        let plan = Plan::of(batch, first, segment);
        let segmented = plan.segment_size.is_some();
        let fd = socket.as_raw_fd();
        let result = socket.try_io(Interest::WRITABLE, || {
            let slices: [IoSlice<'_>; BATCH] = std::array::from_fn(|i| {
                IoSlice::new(batch.datagram(first + i).unwrap_or_default())
            });
            // A message's datagrams are consecutive slices; the kernel joins them and cuts
            // the whole at the segment size.
            let messages = &plan.messages[..plan.count];
            let payloads: [&[IoSlice<'_>]; BATCH] = std::array::from_fn(|i| {
                messages.get(i).map_or(&[][..], |&(start, len)| {
                    &slices[start - first..start - first + len]
                })
            });
            let to: [Option<SockaddrStorage>; BATCH] = std::array::from_fn(|i| {
                messages
                    .get(i)
                    .map(|&(start, _)| SockaddrStorage::from(batch.to[start]))
            });
            // Segment sizes are at most `MAX_SEGMENT`, so they fit the `u16` of `UDP_SEGMENT`.
            let size = plan.segment_size.map(|size| size as u16);
            let ipv6 = batch.to[first].is_ipv6();
            let source = batch.from[first].and_then(|from| Source::of(from, ipv6));
            let mut control: Vec<ControlMessage<'_>> = Vec::with_capacity(2);
            control.extend(size.as_ref().map(ControlMessage::UdpGsoSegments));
            control.extend(source.as_ref().map(Source::message));
            let mut headers = MultiHeaders::<SockaddrStorage>::preallocate(
                plan.count,
                control_space(size.is_some(), source.as_ref()),
            );
            let taken = sendmmsg(
                fd,
                &mut headers,
                payloads[..plan.count].iter(),
                &to[..plan.count],
                &control,
                MsgFlags::MSG_DONTWAIT,
            )?
            .count();
            Ok(messages[..taken].iter().map(|&(_, len)| len).sum())
        });
        (result, segmented)
    }

    /// The messages of one `sendmmsg`. Segmentation is set per call, not per message: every
    /// message of a call that segments is cut at its one size, so a call holds runs of that
    /// size and single datagrams no longer than it; what does not fit waits for the next call.
    pub(super) struct Plan {
        /// First datagram and datagram count of each message.
        pub(super) messages: [(usize, usize); BATCH],
        pub(super) count: usize,
        /// The segment size of the call's runs; `None`: one datagram per message.
        pub(super) segment_size: Option<usize>,
    }

    impl Plan {
        pub(super) fn of(batch: &super::SendBatch, first: usize, segment: bool) -> Plan {
            let (lens, to) = (&batch.lens, &batch.to);
            let mut plan = Plan {
                messages: [(0, 0); BATCH],
                count: 0,
                segment_size: None,
            };
            let mut longest_single = 0;
            let mut start = first;
            while start < lens.len() {
                // The source address is set per call too: a call's messages share it.
                if batch.from[start] != batch.from[first] {
                    break;
                }
                let size = lens[start];
                let mut end = start + 1;
                if segment && (1..=super::MAX_SEGMENT).contains(&size) {
                    // The run: datagrams of the same size to the same destination, and one
                    // shorter (not empty) to end it.
                    while end < lens.len()
                        && to[end] == to[start]
                        && batch.from[end] == batch.from[start]
                    {
                        let len = lens[end];
                        if len == size || (1..size).contains(&len) {
                            end += 1;
                        }
                        if len != size {
                            break;
                        }
                    }
                }
                let len = end - start;
                if len > 1 {
                    match plan.segment_size {
                        None if longest_single <= size => plan.segment_size = Some(size),
                        Some(call_size) if call_size == size => {}
                        _ => break,
                    }
                } else if plan.segment_size.is_some_and(|call_size| size > call_size) {
                    break;
                } else {
                    longest_single = longest_single.max(size);
                }
                plan.messages[plan.count] = (start, len);
                plan.count += 1;
                start = end;
            }
            plan
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

    fn batch_of(datagrams: &[(usize, SocketAddr)], segmentation: bool) -> SendBatch {
        let mut batch = if segmentation {
            SendBatch::new(2000)
        } else {
            SendBatch::unsegmented(2000)
        };
        for (i, &(len, to)) in datagrams.iter().enumerate() {
            assert!(batch.push(&vec![i as u8; len], to));
        }
        batch
    }

    /// The messages of one call, (first datagram, count) each, and its segment size.
    #[cfg(target_os = "linux")]
    type Call = (Vec<(usize, usize)>, Option<usize>);

    /// The calls that flushing `batch` would make.
    #[cfg(target_os = "linux")]
    fn calls(batch: &SendBatch) -> Vec<Call> {
        let mut calls = Vec::new();
        let mut first = 0;
        while first < batch.lens.len() {
            let plan = linux::Plan::of(batch, first, batch.segments());
            let messages = plan.messages[..plan.count].to_vec();
            first = messages.last().map(|&(start, len)| start + len).unwrap();
            calls.push((messages, plan.segment_size));
        }
        calls
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn runs_to_one_destination_are_segmented_and_the_rest_goes_alone() {
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let b: SocketAddr = "127.0.0.1:2000".parse().unwrap();
        // Two runs of 100-byte segments, the first ended by a shorter one; B's datagrams
        // between them and after go alone, in the same call as they are no longer.
        let batch = batch_of(
            &[
                (100, a),
                (100, a),
                (60, a),
                (90, b),
                (100, a),
                (100, a),
                (80, b),
            ],
            true,
        );
        assert_eq!(
            calls(&batch),
            [(vec![(0, 3), (3, 1), (4, 2), (6, 1)], Some(100))]
        );
        // A run of another size, or a single datagram longer than the call's segments,
        // waits for the next call; so does a run after a longer single datagram.
        let batch = batch_of(
            &[
                (100, a),
                (100, a),
                (200, b),
                (50, a),
                (50, a),
                (300, b),
                (70, a),
                (70, a),
            ],
            true,
        );
        assert_eq!(
            calls(&batch),
            [
                (vec![(0, 2)], Some(100)),
                (vec![(2, 1)], None),
                (vec![(3, 2)], Some(50)),
                (vec![(5, 1)], None),
                (vec![(6, 2)], Some(70)),
            ]
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn long_or_empty_datagrams_and_unsegmented_batches_go_one_per_message() {
        let a: SocketAddr = "127.0.0.1:1000".parse().unwrap();
        let over = MAX_SEGMENT + 1;
        let batch = batch_of(
            &[(over, a), (over, a), (0, a), (0, a), (10, a), (0, a)],
            true,
        );
        assert_eq!(
            calls(&batch),
            [(vec![(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1)], None)]
        );
        let batch = batch_of(&[(100, a), (100, a), (100, a)], false);
        assert_eq!(calls(&batch), [(vec![(0, 1), (1, 1), (2, 1)], None)]);
    }

    /// Whatever the batch makes of them, each receiver gets each of its datagrams whole, on
    /// its own, in order.
    async fn every_datagram_arrives_alone(segmentation: bool) {
        let receivers = [
            UdpSocket::bind("127.0.0.1:0").await.unwrap(),
            UdpSocket::bind("127.0.0.1:0").await.unwrap(),
        ];
        let [a, b] = [0, 1].map(|i| receivers[i].local_addr().unwrap());
        let plan = [
            (300, a),
            (300, a),
            (300, a),
            (120, a),
            (40, b),
            (300, a),
            (300, a),
            (MAX_SEGMENT + 100, b),
            (0, a),
        ];
        let mut batch = batch_of(&plan, segmentation);
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let sent = batch
            .flush(&sender, |to, e| panic!("{to} refused: {e}"))
            .await;
        assert_eq!(sent, plan.len());
        // Loopback takes segmented messages on any kernel since 4.18.
        assert_eq!(batch.segments(), segmentation && cfg!(target_os = "linux"));
        for (receiver, address) in receivers.iter().zip([a, b]) {
            let mut buf = vec![0u8; 4000];
            for (i, _) in plan
                .iter()
                .enumerate()
                .filter(|(_, (_, to))| *to == address)
            {
                let (len, _) = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    receiver.recv_from(&mut buf),
                )
                .await
                .expect("every datagram arrives")
                .unwrap();
                assert_eq!(&buf[..len], &vec![i as u8; plan[i].0][..], "datagram {i}");
            }
        }
    }

    #[tokio::test]
    async fn segmented_batches_deliver_every_datagram_alone() {
        every_datagram_arrives_alone(true).await;
    }

    #[tokio::test]
    async fn unsegmented_batches_deliver_every_datagram_alone() {
        every_datagram_arrives_alone(false).await;
    }

    #[cfg(target_os = "linux")]
    proptest::proptest! {
        /// Whatever the batch holds, its calls take every datagram once and in order; a
        /// segmented message is a run to one destination of one size, the last no longer and
        /// not empty, within the segment limits; and no message of a call is longer than the
        /// call's segment size, so the kernel cuts only the runs.
        #[test]
        fn every_plan_sends_each_datagram_once_and_cuts_only_runs(
            datagrams in proptest::collection::vec(
                (proptest::sample::select(vec![0usize, 1, 50, 99, 100, 1400, 1401, 2000]), 0..3u16),
                0..=BATCH,
            ),
            segmentation: bool,
        ) {
            let datagrams: Vec<(usize, SocketAddr)> = datagrams
                .into_iter()
                .map(|(len, port)| (len, SocketAddr::from(([127, 0, 0, 1], 1000 + port))))
                .collect();
            let batch = batch_of(&datagrams, segmentation);
            let mut next = 0;
            for (messages, segment_size) in calls(&batch) {
                proptest::prop_assert!(!messages.is_empty());
                for (start, count) in messages {
                    proptest::prop_assert_eq!(start, next);
                    next += count;
                    let run = &datagrams[start..next];
                    let size = run[0].0;
                    if count > 1 {
                        proptest::prop_assert!(segmentation);
                        proptest::prop_assert_eq!(segment_size, Some(size));
                        proptest::prop_assert!((1..=MAX_SEGMENT).contains(&size));
                        proptest::prop_assert!(run.iter().all(|&(_, to)| to == run[0].1));
                        let (last, body) = run.split_last().unwrap();
                        proptest::prop_assert!(body.iter().all(|&(len, _)| len == size));
                        proptest::prop_assert!((1..=size).contains(&last.0));
                    } else if let Some(segment_size) = segment_size {
                        proptest::prop_assert!(size <= segment_size);
                    }
                }
            }
            proptest::prop_assert_eq!(next, datagrams.len());
        }
    }

    #[tokio::test]
    async fn a_refused_destination_fails_alone_and_segmentation_stays() {
        let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let a = receiver.local_addr().unwrap();
        // The kernel refuses port 0 (EINVAL), segmented or not.
        let nowhere: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let plan = [(100, a), (100, a), (100, nowhere), (100, nowhere), (100, a)];
        let mut batch = batch_of(&plan, true);
        let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut refused = Vec::new();
        let sent = batch.flush(&sender, |to, _| refused.push(to)).await;
        assert_eq!((sent, refused), (3, vec![nowhere, nowhere]));
        assert_eq!(batch.segments(), cfg!(target_os = "linux"));
        let mut buf = [0u8; 200];
        for i in [0u8, 1, 4] {
            let (len, _) = receiver.recv_from(&mut buf).await.unwrap();
            assert_eq!(&buf[..len], &[i; 100][..]);
        }
    }
}
