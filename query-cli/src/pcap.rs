//! UDP datagrams out of pcap and pcapng files, as tcpdump and Wireshark write them.
//!
//! The file format is read by pcap-file and the Ethernet, IP and UDP layers by etherparse:
//! IPv4 and IPv6, on Ethernet, BSD loopback (`NULL`/`LOOP`), raw IP and Linux cooked (`SLL`)
//! links. Packets that are not UDP, or that cannot be read (cut short by the capture's
//! snapshot length, IP fragments), are counted and skipped; a file that is not a capture, or
//! that breaks off, is an error naming what is wrong.

use std::net::{IpAddr, SocketAddr};

use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};
use pcap_file::DataLink;

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

/// The UDP datagrams of a capture, and how many packets were skipped as not readable UDP.
#[derive(Debug, Default)]
pub struct Capture {
    pub datagrams: Vec<Captured>,
    pub skipped: usize,
}

/// Reads every UDP datagram of a pcap or pcapng file.
pub fn read(bytes: &[u8]) -> Result<Capture, String> {
    if bytes.get(..4) == Some(&PCAP_MAGICS[4][..]) {
        read_pcapng(bytes)
    } else {
        read_pcap(bytes)
    }
}

fn read_pcap(bytes: &[u8]) -> Result<Capture, String> {
    let mut reader =
        PcapReader::new(bytes).map_err(|e| format!("not a readable pcap file: {e}"))?;
    let link = reader.header().datalink;
    let mut capture = Capture::default();
    let mut number = 0;
    while let Some(packet) = reader.next_packet() {
        number += 1;
        let packet = packet.map_err(|e| format!("packet {number} cannot be read: {e}"))?;
        capture.add(number, link, &packet.data);
    }
    Ok(capture)
}

fn read_pcapng(bytes: &[u8]) -> Result<Capture, String> {
    let mut reader =
        PcapNgReader::new(bytes).map_err(|e| format!("not a readable pcapng file: {e}"))?;
    let mut links: Vec<DataLink> = Vec::new();
    let mut capture = Capture::default();
    let mut number = 0;
    while let Some(block) = reader.next_block() {
        let block =
            block.map_err(|e| format!("block after packet {number} cannot be read: {e}"))?;
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

/// The UDP datagram in a link-layer frame, if it holds a whole one.
fn udp(link: DataLink, frame: &[u8]) -> Option<(SocketAddr, SocketAddr, &[u8])> {
    let sliced = match link {
        DataLink::ETHERNET => SlicedPacket::from_ethernet(frame),
        DataLink::LINUX_SLL => SlicedPacket::from_linux_sll(frame),
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
    fn a_cut_or_foreign_file_is_an_error_never_a_panic() {
        let file = pcap(1, &[ethernet_udp_v4(b"SAMP"), ethernet_udp_v4(b"more")]);
        for cut in 4..file.len() {
            // Cuts inside the header are errors; cuts inside a packet end the file there.
            let _ = read(&file[..cut]);
        }
        assert!(read(&file[..20]).is_err());
        assert!(!is_capture(b"SAMP"));
        let mut corrupt = file.clone();
        corrupt[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(read(&corrupt).is_err());
    }
}
