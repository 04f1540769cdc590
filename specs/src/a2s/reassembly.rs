//! Joining the parts of a split A2S reply.

use std::io::Read as _;

use query_wire::{Decode, Error, ErrorKind, Reader, Result};
use serde::Serialize;

use super::{
    Compression, EarlySourcePart, GoldSrcPart, SourcePart, COMPRESSED_ID, SINGLE_BYTES, SPLIT_BYTES,
};

/// The most parts a reply may have. Source numbers parts in a u8 and GoldSrc in 4 bits; real
/// replies have a handful, and the cap bounds what a hostile server can make a client hold.
pub const MAX_PARTS: usize = 64;

/// The largest payload a compressed reply may decompress to, checked against the size it
/// declares before decompressing and enforced while decompressing: a small datagram cannot
/// expand into gigabytes.
pub const MAX_DECOMPRESSED: usize = 1 << 20;

/// The three header forms of a split reply's parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SplitForm {
    /// [`SourcePart`]: with the maximum packet size.
    Source,
    /// [`EarlySourcePart`]: without it.
    EarlySource,
    /// [`GoldSrcPart`]: number and total in one byte.
    GoldSrc,
}

/// The header fields of one part, whatever its form.
struct Part<'a> {
    id: u32,
    total: u8,
    number: u8,
    payload: &'a [u8],
}

impl SplitForm {
    /// The form whose first part `datagram` is, found from where the payload starts: a whole
    /// packet's `FF FF FF FF`, or for a compressed reply the compression header and bzip2's
    /// `BZh`. `None` for any other part, whose form cannot be told on its own.
    fn of_first_part(datagram: &[u8]) -> Option<SplitForm> {
        let starts_at = |offset: usize, magic: &[u8]| {
            datagram
                .get(offset..)
                .is_some_and(|rest| rest.starts_with(magic))
        };
        let compressed = datagram
            .get(4..8)
            .is_some_and(|id| id[3] & (COMPRESSED_ID >> 24) as u8 != 0);
        let gold_src_first = datagram.get(8).is_some_and(|packed| packed >> 4 == 0);
        let source_first = datagram.get(9) == Some(&0);
        if compressed {
            // Only Source compresses; the compression header (8 bytes) precedes the data.
            return match () {
                _ if source_first && starts_at(20, b"BZh") => Some(SplitForm::Source),
                _ if source_first && starts_at(18, b"BZh") => Some(SplitForm::EarlySource),
                _ => None,
            };
        }
        match () {
            _ if gold_src_first && starts_at(9, SINGLE_BYTES) => Some(SplitForm::GoldSrc),
            _ if source_first && starts_at(12, SINGLE_BYTES) => Some(SplitForm::Source),
            _ if source_first && starts_at(10, SINGLE_BYTES) => Some(SplitForm::EarlySource),
            _ => None,
        }
    }

    fn part(self, datagram: &[u8]) -> Result<Part<'_>> {
        Ok(match self {
            SplitForm::Source => {
                let p = SourcePart::from_bytes(datagram)?;
                Part {
                    id: p.id,
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
            SplitForm::EarlySource => {
                let p = EarlySourcePart::from_bytes(datagram)?;
                Part {
                    id: p.id,
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
            SplitForm::GoldSrc => {
                let p = GoldSrcPart::from_bytes(datagram)?;
                Part {
                    id: p.id,
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
        })
    }
}

/// Collects the parts of one split reply, in any order and with duplicates, and joins their
/// payloads into the whole reply (`FF FF FF FF` and the reply's type first), decompressed when
/// the reply was compressed.
///
/// The header form is decided from the bytes of the first part (see [`SplitForm`]); parts that
/// come before it are kept as they are until then. The reply's id is the first part's: parts
/// with another id belong to another reply and are left out, as are parts that repeat a number
/// already held.
///
/// ```
/// use query_specs::a2s::Reassembly;
///
/// // A GoldSrc reply in two parts (number in the upper 4 bits, total in the lower), the second
/// // first.
/// let mut parts = Reassembly::new();
/// assert_eq!(parts.push(b"\xfe\xff\xff\xff\x07\x00\x00\x00\x12rld\0")?, None);
/// let whole = parts.push(b"\xfe\xff\xff\xff\x07\x00\x00\x00\x02\xff\xff\xff\xffDwo")?;
/// assert_eq!(whole.as_deref(), Some(&b"\xff\xff\xff\xffDworld\0"[..]));
/// # Ok::<(), query_wire::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Reassembly {
    form: Option<SplitForm>,
    /// The parts received so far, as datagrams.
    datagrams: Vec<Vec<u8>>,
}

impl Reassembly {
    /// Nothing received yet.
    pub fn new() -> Self {
        Reassembly::default()
    }

    /// The header form, once the first part arrived.
    pub fn form(&self) -> Option<SplitForm> {
        self.form
    }

    /// How many parts are held.
    pub fn parts_received(&self) -> usize {
        self.datagrams.len()
    }

    /// Adds one split datagram (starting `FE FF FF FF`); the joined reply once every part is
    /// in. A datagram that is not a part, or a part that contradicts the others (another
    /// total, a number past it), is an error and changes nothing; so is a compressed reply
    /// that does not decompress to its declared size and CRC32.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Option<Vec<u8>>> {
        if !datagram.starts_with(SPLIT_BYTES) {
            return Err(
                Error::new(ErrorKind::Invalid("not a part of a split reply"), 0)
                    .in_field("Reassembly"),
            );
        }
        if self.datagrams.len() >= MAX_PARTS {
            return Err(Error::new(
                ErrorKind::TooLong {
                    len: MAX_PARTS + 1,
                    max: MAX_PARTS,
                },
                0,
            )
            .in_field("Reassembly"));
        }
        if self.form.is_none() {
            self.form = SplitForm::of_first_part(datagram);
        }
        self.datagrams.push(datagram.to_vec());
        let Some(form) = self.form else {
            return Ok(None);
        };
        match self.join(form) {
            Ok(whole) => Ok(whole),
            Err(error) => {
                self.datagrams.pop();
                if self.datagrams.is_empty() {
                    self.form = None;
                }
                Err(error)
            }
        }
    }

    /// The parts in order once all are in; `None` while some are missing.
    fn join(&self, form: SplitForm) -> Result<Option<Vec<u8>>> {
        let parts = self
            .datagrams
            .iter()
            .map(|datagram| form.part(datagram))
            .collect::<Result<Vec<Part<'_>>>>()
            .map_err(|e| e.in_field("Reassembly"))?;
        // The first part fixes the id and the total; it may not be the first datagram held.
        let Some(first) = parts.iter().find(|part| part.number == 0) else {
            return Ok(None);
        };
        let mut slots: Vec<Option<&[u8]>> = vec![None; usize::from(first.total)];
        for part in parts.iter().filter(|part| part.id == first.id) {
            if part.total != first.total || usize::from(part.number) >= slots.len() {
                let reason = "a part whose number or total contradicts the first part";
                return Err(Error::new(ErrorKind::Invalid(reason), 8).in_field("Reassembly"));
            }
            slots[usize::from(part.number)].get_or_insert(part.payload);
        }
        if slots.iter().any(Option::is_none) {
            return Ok(None);
        }
        let joined: Vec<u8> = slots.into_iter().flatten().flatten().copied().collect();
        if first.id & COMPRESSED_ID == 0 {
            return Ok(Some(joined));
        }
        decompress(&joined).map(Some)
    }

    /// The part numbers not received yet, once the first part told how many there are.
    pub fn missing_parts(&self) -> Vec<u8> {
        let Some(form) = self.form else {
            return Vec::new();
        };
        let parts: Vec<Part<'_>> = self
            .datagrams
            .iter()
            .filter_map(|d| form.part(d).ok())
            .collect();
        let Some(first) = parts.iter().find(|p| p.number == 0) else {
            return Vec::new();
        };
        (0..first.total)
            .filter(|n| !parts.iter().any(|p| p.id == first.id && p.number == *n))
            .collect()
    }
}

impl Reassembly {
    /// The joined payloads of the parts held from part 0 up to the first missing one: the
    /// start of a reply whose later parts never came, from which a client can still read the
    /// rows and pairs that arrived whole. `None` without part 0, and for a compressed reply,
    /// which cannot be decompressed in part.
    pub fn received_prefix(&self) -> Option<Vec<u8>> {
        let form = self.form?;
        let parts: Vec<Part<'_>> = self
            .datagrams
            .iter()
            .filter_map(|d| form.part(d).ok())
            .collect();
        let first = parts.iter().find(|p| p.number == 0)?;
        if first.id & COMPRESSED_ID != 0 {
            return None;
        }
        let mut prefix = Vec::new();
        for number in 0..first.total {
            let Some(part) = parts
                .iter()
                .find(|p| p.id == first.id && p.number == number)
            else {
                break;
            };
            prefix.extend_from_slice(part.payload);
        }
        Some(prefix)
    }
}

/// A compressed reply's payload: the [`Compression`] header, then bzip2 data that must
/// decompress to exactly the declared size with the declared CRC32.
fn decompress(joined: &[u8]) -> Result<Vec<u8>> {
    let mut reader = Reader::new(joined);
    let header = Compression::decode(&mut reader, ()).map_err(|e| e.in_field("Compression"))?;
    let size = header.size as usize;
    if size > MAX_DECOMPRESSED {
        let kind = ErrorKind::TooLong {
            len: size,
            max: MAX_DECOMPRESSED,
        };
        return Err(Error::new(kind, 0).in_field("size").in_field("Compression"));
    }
    let data_at = reader.offset();
    let mut out = Vec::with_capacity(size);
    // One byte more than declared is read, so that a payload longer than it shows.
    let read = bzip2::read::BzDecoder::new(reader.rest())
        .take(size as u64 + 1)
        .read_to_end(&mut out);
    let bad = |reason| Err(Error::new(ErrorKind::Invalid(reason), data_at).in_field("Compressed"));
    if read.is_err() {
        return bad("the compressed payload is not valid bzip2 data");
    }
    if out.len() != size {
        return bad("the compressed payload does not decompress to its declared size");
    }
    if crc32fast::hash(&out) != header.crc32 {
        return bad("the decompressed payload does not match its CRC32");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    fn source_part(id: u32, total: u8, number: u8, payload: &[u8]) -> Vec<u8> {
        let mut d = SPLIT_BYTES.to_vec();
        d.extend(id.to_le_bytes());
        d.extend([total, number]);
        d.extend(1248u16.to_le_bytes());
        d.extend(payload);
        d
    }

    #[test]
    fn source_parts_in_any_order_with_duplicates_and_strangers() {
        let whole = b"\xff\xff\xff\xffEabcdefgh";
        let mut r = Reassembly::new();
        assert_eq!(r.push(&source_part(9, 3, 2, &whole[10..])).unwrap(), None);
        assert_eq!(
            r.push(&source_part(9, 3, 2, b"late duplicate")).unwrap(),
            None
        );
        assert_eq!(r.push(&source_part(5, 3, 1, b"zz")).unwrap(), None);
        assert_eq!(r.push(&source_part(9, 3, 0, &whole[..7])).unwrap(), None);
        assert_eq!(r.form(), Some(SplitForm::Source));
        assert_eq!(r.missing_parts(), vec![1]);
        assert_eq!(r.received_prefix().as_deref(), Some(&whole[..7]));
        let joined = r.push(&source_part(9, 3, 1, &whole[7..10])).unwrap();
        assert_eq!(joined.as_deref(), Some(&whole[..]));
    }

    #[test]
    fn a_part_that_contradicts_the_first_is_refused_and_forgotten() {
        let mut r = Reassembly::new();
        r.push(&source_part(9, 2, 0, b"\xff\xff\xff\xffE")).unwrap();
        assert!(r.push(&source_part(9, 3, 1, b"x")).is_err());
        assert!(r.push(&source_part(9, 2, 2, b"x")).is_err());
        assert_eq!(r.parts_received(), 1);
        assert!(r.push(b"\xff\xff\xff\xffI").is_err());
    }

    fn compressed(payload: &[u8], size: u32, crc32: u32) -> Vec<u8> {
        let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        encoder.write_all(payload).unwrap();
        let data = encoder.finish().unwrap();
        let mut d = SPLIT_BYTES.to_vec();
        d.extend((COMPRESSED_ID | 3).to_le_bytes());
        d.extend([1, 0]);
        d.extend(size.to_le_bytes());
        d.extend(crc32.to_le_bytes());
        d.extend(data);
        d
    }

    #[test]
    fn compressed_replies_are_checked_and_capped() {
        let whole = b"\xff\xff\xff\xffEsome rules\0".repeat(20);
        let (size, crc) = (whole.len() as u32, crc32fast::hash(&whole));
        let joined = Reassembly::new()
            .push(&compressed(&whole, size, crc))
            .unwrap();
        assert_eq!(joined, Some(whole.clone()));
        let wrong_crc = Reassembly::new().push(&compressed(&whole, size, crc ^ 1));
        assert!(wrong_crc.unwrap_err().to_string().contains("CRC32"));
        let wrong_size = Reassembly::new().push(&compressed(&whole, size - 1, crc));
        assert!(wrong_size.unwrap_err().to_string().contains("size"));
        // A bomb: 8 MiB of zeros in a few hundred bytes, declared honestly.
        let bomb = vec![0u8; 8 << 20];
        let declared = Reassembly::new().push(&compressed(&bomb, bomb.len() as u32, 0));
        assert!(matches!(
            declared.unwrap_err().kind(),
            ErrorKind::TooLong { .. }
        ));
        // The same bomb declaring a small size stops after one byte past it.
        let lying = Reassembly::new().push(&compressed(&bomb, 100, 0));
        assert!(lying.unwrap_err().to_string().contains("declared size"));
    }
}
