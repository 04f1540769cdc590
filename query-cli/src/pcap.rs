//! UDP datagrams out of pcap and pcapng files, as tcpdump and Wireshark write them.
//!
//! The file format is read by pcap-file and the Ethernet, IP and UDP layers by etherparse:
//! IPv4 and IPv6, on Ethernet, BSD loopback (`NULL`/`LOOP`), raw IP and Linux cooked v1 and v2
//! (`SLL`, `SLL2`: `tcpdump -i any`) links. Packets that are not UDP, or that cannot be read
//! (cut short by the capture's snapshot length, IP fragments), are counted and skipped; a file
//! that breaks off inside a packet (a tcpdump killed while writing) gives the packets before
//! it and says where it ends; a file that is not a capture is an error naming what is wrong.

use std::net::{IpAddr, SocketAddr};

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError};

/// The first four bytes of a pcap file (either byte order, micro- or nanosecond timestamps)
/// and of a pcapng file (its section header block type).
const PCAP_MAGICS: [[u8; 4]; 5] = [
    [0xd4, 0xc3, 0xb2, 0xa1],
    [0xa1, 0xb2, 0xc3, 0xd4],
    [0x4d, 0x3c, 0xb2, 0xa1],
    [0xa1, 0xb2, 0x3c, 0x4d],
    [0x0a, 0x0d, 0x0d, 0x0a],
];

/// The largest capture file read, which bounds the memory a decode can take.
pub const MAX_CAPTURE: u64 = 256 << 20;

/// Whether `head`, a file's first bytes, starts a pcap or pcapng file.
pub fn is_capture(head: &[u8]) -> bool {
    head.len() >= 4 && PCAP_MAGICS.iter().any(|magic| head[..4] == magic[..])
}

/// One UDP datagram of a capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The packet's number in the file, from 1, as Wireshark counts.
    pub number: usize,
    pub source: SocketAddr,
    pub destination: SocketAddr,
    pub payload: Vec<u8>,
}

/// The UDP datagrams of a capture, how many packets were skipped as not readable UDP, and
/// where the file breaks off, if it does.
#[derive(Debug, Default)]
pub struct Capture {
    pub datagrams: Vec<Captured>,
    pub skipped: usize,
    /// Where the file ends inside a packet (a tcpdump killed while writing), said for a
    /// note; the packets before it are read.
    pub cut: Option<String>,
}

/// The largest snapshot length tcpdump and Wireshark write (262144): a packet record that
/// claims more than this, or than the file's own snapshot length, is corrupt, not cut short.
const MAX_SNAPLEN: u32 = 262_144;

/// Reads every UDP datagram of a pcap or pcapng file. A file that breaks off inside a packet
/// gives the packets before it and says where it ends ([`Capture::cut`]); a file with no
/// whole packet before its break, or a packet record that cannot be one, is an error.
pub fn read(bytes: &[u8]) -> Result<Capture, String> {
    let capture = if bytes.get(..4) == Some(&PCAP_MAGICS[4][..]) {
        read_pcapng(bytes)?
    } else {
        read_pcap(bytes)?
    };
    match &capture.cut {
        Some(cut) if capture.datagrams.is_empty() && capture.skipped == 0 => {
            Err(format!("{cut}, and no packet before it is whole"))
        }
        _ => Ok(capture),
    }
}

/// Where a file that ends inside packet or block `number` ends.
fn cut_at(what: &str, number: usize, offset: usize, length: usize) -> String {
    format!(
        "the file ends inside {what} {number} (byte {offset} of {length}; a capture stopped while writing?)"
    )
}

fn read_pcap(bytes: &[u8]) -> Result<Capture, String> {
    let (mut rest, parser) =
        PcapParser::new(bytes).map_err(|e| format!("not a readable pcap file: {e}"))?;
    let header = parser.header();
    let link = header.datalink;
    let mut capture = Capture::default();
    let mut number = 0;
    while !rest.is_empty() {
        number += 1;
        match parser.next_packet(rest) {
            Ok((remainder, packet)) => {
                capture.add(number, link, &packet.data);
                rest = remainder;
            }
            Err(PcapError::IncompleteBuffer) => {
                // The record's length says whether the file stops inside it or the record
                // is nonsense.
                if let Some(length) = rest.get(8..12) {
                    let length: [u8; 4] = length.try_into().unwrap_or_default();
                    let length = match header.endianness {
                        Endianness::Big => u32::from_be_bytes(length),
                        Endianness::Little => u32::from_le_bytes(length),
                    };
                    if length > header.snaplen.max(MAX_SNAPLEN) {
                        return Err(format!(
                            "packet {number} cannot be read: it claims {length} bytes, more than \
                             the snapshot length"
                        ));
                    }
                }
                let offset = bytes.len() - rest.len();
                capture.cut = Some(cut_at("packet", number, offset, bytes.len()));
                break;
            }
            Err(e) => return Err(format!("packet {number} cannot be read: {e}")),
        }
    }
    Ok(capture)
}

fn read_pcapng(bytes: &[u8]) -> Result<Capture, String> {
    let (mut rest, mut parser) =
        PcapNgParser::new(bytes).map_err(|e| format!("not a readable pcapng file: {e}"))?;
    let mut links: Vec<DataLink> = Vec::new();
    let mut capture = Capture::default();
    let mut number = 0;
    while !rest.is_empty() {
        let block = match parser.next_block(rest) {
            Ok((remainder, block)) => {
                rest = remainder;
                block
            }
            Err(PcapError::IncompleteBuffer) => {
                let offset = bytes.len() - rest.len();
                capture.cut = Some(cut_at(
                    "the block after packet",
                    number,
                    offset,
                    bytes.len(),
                ));
                break;
            }
            Err(e) => return Err(format!("block after packet {number} cannot be read: {e}")),
        };
        match block {
            Block::SectionHeader(_) => links.clear(),
            Block::InterfaceDescription(interface) => links.push(interface.linktype),
            Block::EnhancedPacket(packet) => {
                number += 1;
                let link = usize::try_from(packet.interface_id)
                    .ok()
                    .and_then(|i| links.get(i).copied())
                    .ok_or_else(|| format!("packet {number} names an undeclared interface"))?;
                capture.add(number, link, &packet.data);
            }
            Block::SimplePacket(packet) => {
                number += 1;
                let link = *links
                    .first()
                    .ok_or_else(|| format!("packet {number} comes before any interface"))?;
                capture.add(number, link, &packet.data);
            }
            _ => {}
        }
    }
    Ok(capture)
}

impl Capture {
    fn add(&mut self, number: usize, link: DataLink, frame: &[u8]) {
        match udp(link, frame) {
            Some((source, destination, payload)) => self.datagrams.push(Captured {
                number,
                source,
                destination,
                payload: payload.to_vec(),
            }),
            None => self.skipped += 1,
        }
    }
}

/// The length of a Linux cooked v2 header (`LINKTYPE_LINUX_SLL2`, what `tcpdump -i any`
/// writes since libpcap 1.10): protocol (2 bytes), reserved (2), interface index (4), ARPHRD
/// type (2), packet type (1), address length (1), address (8).
const SLL2_HEADER: usize = 20;

/// The length of a Linux cooked v1 header (`LINKTYPE_LINUX_SLL`, `tcpdump -i any -y
/// LINUX_SLL`, and libpcap before 1.10): packet type (2 bytes), ARPHRD type (2), address
/// length (2), address (8), protocol (2).
const SLL_HEADER: usize = 16;

/// The IP packet of a Linux cooked v2 frame, if its protocol is IPv4 or IPv6.
fn linux_sll2_payload(frame: &[u8]) -> Option<&[u8]> {
    ip_after(frame.get(..2)?, frame, SLL2_HEADER)
}

/// The IP packet of a Linux cooked v1 frame, if its protocol is IPv4 or IPv6. Read here
/// rather than by etherparse, which refuses the frames of the loopback device (ARPHRD 772)
/// that a capture on `any` holds.
fn linux_sll_payload(frame: &[u8]) -> Option<&[u8]> {
    ip_after(frame.get(14..16)?, frame, SLL_HEADER)
}

/// `frame` from `header` bytes on, if `protocol` (an EtherType) is IPv4 or IPv6.
fn ip_after<'a>(protocol: &[u8], frame: &'a [u8], header: usize) -> Option<&'a [u8]> {
    const IPV4: [u8; 2] = [0x08, 0x00];
    const IPV6: [u8; 2] = [0x86, 0xdd];
    (protocol == IPV4 || protocol == IPV6)
        .then(|| frame.get(header..))
        .flatten()
}

/// The UDP datagram in a link-layer frame, if it holds a whole one.
fn udp(link: DataLink, frame: &[u8]) -> Option<(SocketAddr, SocketAddr, &[u8])> {
    let sliced = match link {
        DataLink::ETHERNET => SlicedPacket::from_ethernet(frame),
        DataLink::LINUX_SLL => SlicedPacket::from_ip(linux_sll_payload(frame)?),
        DataLink::LINUX_SLL2 => SlicedPacket::from_ip(linux_sll2_payload(frame)?),
        DataLink::RAW | DataLink::IPV4 | DataLink::IPV6 => SlicedPacket::from_ip(frame),
        // A 4-byte address family in the host's byte order, then the IP packet.
        DataLink::NULL | DataLink::LOOP => SlicedPacket::from_ip(frame.get(4..)?),
        _ => return None,
    }
    .ok()?;
    let (source, destination): (IpAddr, IpAddr) = match sliced.net? {
        NetSlice::Ipv4(ip) => (
            ip.header().source_addr().into(),
            ip.header().destination_addr().into(),
        ),
        NetSlice::Ipv6(ip) => (
            ip.header().source_addr().into(),
            ip.header().destination_addr().into(),
        ),
        NetSlice::Arp(_) => return None,
    };
    let TransportSlice::Udp(udp) = sliced.transport? else {
        return None;
    };
    Some((
        SocketAddr::new(source, udp.source_port()),
        SocketAddr::new(destination, udp.destination_port()),
        udp.payload(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use etherparse::PacketBuilder;

    /// A pcap file (microseconds, little-endian) of `frames` on `link`.
    fn pcap(link: u32, frames: &[Vec<u8>]) -> Vec<u8> {
        let mut file = Vec::new();
        file.extend_from_slice(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]);
        file.extend_from_slice(&[0; 8]);
        file.extend_from_slice(&65535u32.to_le_bytes());
        file.extend_from_slice(&link.to_le_bytes());
        for (i, frame) in frames.iter().enumerate() {
            file.extend_from_slice(&(i as u32).to_le_bytes());
            file.extend_from_slice(&0u32.to_le_bytes());
            file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            file.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            file.extend_from_slice(frame);
        }
        file
    }

    fn ethernet_udp_v4(payload: &[u8]) -> Vec<u8> {
        let builder = PacketBuilder::ethernet2([0; 6], [0; 6])
            .ipv4([127, 0, 0, 1], [127, 0, 0, 2], 64)
            .udp(50000, 7777);
        let mut frame = Vec::new();
        builder.write(&mut frame, payload).unwrap();
        frame
    }

    fn raw_udp_v6(payload: &[u8]) -> Vec<u8> {
        let builder = PacketBuilder::ipv6(
            [0; 16],
            [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            64,
        )
        .udp(7777, 50001);
        let mut frame = Vec::new();
        builder.write(&mut frame, payload).unwrap();
        frame
    }

    #[test]
    fn udp_datagrams_come_out_of_ethernet_and_raw_ip_captures() {
        let file = pcap(1, &[ethernet_udp_v4(b"SAMP"), vec![1, 2, 3]]);
        assert!(is_capture(&file));
        let capture = read(&file).unwrap();
        assert_eq!(capture.skipped, 1);
        assert_eq!(capture.datagrams.len(), 1);
        let d = &capture.datagrams[0];
        assert_eq!(d.number, 1);
        assert_eq!(d.source, "127.0.0.1:50000".parse().unwrap());
        assert_eq!(d.destination, "127.0.0.2:7777".parse().unwrap());
        assert_eq!(d.payload, b"SAMP");

        let capture = read(&pcap(101, &[raw_udp_v6(b"reply")])).unwrap();
        assert_eq!(capture.datagrams[0].source, "[::]:7777".parse().unwrap());
        assert_eq!(
            capture.datagrams[0].destination,
            "[::1]:50001".parse().unwrap()
        );
    }

    #[test]
    fn linux_cooked_v2_frames_give_their_ip_packet() {
        let mut frame = vec![0x08, 0x00, 0, 0, 0, 0, 0, 1, 0x03, 0x04, 0, 6];
        frame.extend_from_slice(&[0; 8]);
        let ip = raw_udp_v6(b"x");
        frame.extend_from_slice(&ip);
        // The protocol says IPv4 but the packet is IPv6: etherparse reads the version itself.
        let capture = read(&pcap(276, &[frame.clone()])).unwrap();
        assert_eq!(capture.datagrams[0].payload, b"x");
        frame[..2].copy_from_slice(&[0x08, 0x06]); // ARP
        assert_eq!(read(&pcap(276, &[frame])).unwrap().skipped, 1);
    }

    #[test]
    fn linux_cooked_v1_frames_of_the_loopback_device_give_their_ip_packet() {
        // Packet type 0 (to us), ARPHRD 772 (loopback), address length 6, address, IPv6.
        let mut frame = vec![0, 0, 0x03, 0x04, 0, 6];
        frame.extend_from_slice(&[0; 8]);
        frame.extend_from_slice(&[0x86, 0xdd]);
        frame.extend_from_slice(&raw_udp_v6(b"y"));
        let capture = read(&pcap(113, &[frame.clone()])).unwrap();
        assert_eq!(capture.datagrams[0].payload, b"y");
        frame[14..16].copy_from_slice(&[0x08, 0x06]); // ARP
        assert_eq!(read(&pcap(113, &[frame.clone()])).unwrap().skipped, 1);
        frame.truncate(15);
        assert_eq!(read(&pcap(113, &[frame])).unwrap().skipped, 1);
    }

    #[test]
    fn a_cut_or_foreign_file_is_an_error_never_a_panic() {
        let file = pcap(1, &[ethernet_udp_v4(b"SAMP"), ethernet_udp_v4(b"more")]);
        for cut in 4..file.len() {
            // Cuts inside the header are errors; cuts inside a packet end the file there.
            let _ = read(&file[..cut]);
        }
        assert!(read(&file[..20]).is_err());
        // Cut inside the second packet: the first is read and the cut said.
        let capture = read(&file[..file.len() - 3]).unwrap();
        assert_eq!(capture.datagrams.len(), 1);
        assert!(capture.cut.unwrap().contains("inside packet 2"));
        // Cut inside the first: nothing whole, an error.
        assert!(read(&file[..30])
            .unwrap_err()
            .contains("no packet before it"));
        assert!(!is_capture(b"SAMP"));
        let mut corrupt = file.clone();
        corrupt[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&corrupt).is_err());
    }
}
