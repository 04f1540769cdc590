//! Joining the parts of a split A2S reply.

use std::io::Read as _;

use query_wire::parts::NumberedParts;
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

/// The largest UDP payload: what one part can carry at most.
const MAX_DATAGRAM: usize = 65_507;

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
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
            SplitForm::EarlySource => {
                let p = EarlySourcePart::from_bytes(datagram)?;
                Part {
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
            SplitForm::GoldSrc => {
                let p = GoldSrcPart::from_bytes(datagram)?;
                Part {
                    total: p.total,
                    number: p.number,
                    payload: p.payload,
                }
            }
        })
    }
}

/// How many reply ids one [`Reassembly`] holds parts of side by side; parts of further ids are
/// refused. A client asks one request at a time, so one id is its answer; the others are late
/// answers to a resent request, or strangers forging the server's address.
pub const MAX_REPLY_IDS: usize = 8;

/// How many compressed replies one [`Reassembly`] decompresses at most: each costs up to
/// [`MAX_DECOMPRESSED`] bytes of bzip2 work, and a reply to one request needs one (a second
/// when the request was resent). Further compressed replies are refused unread, so a server
/// that sends a new compressed id after each failure cannot keep a core busy.
pub const MAX_DECOMPRESSIONS: usize = 2;

/// Collects the parts of split replies, in any order and with duplicates, and joins a reply's
/// payloads into the whole reply (`FF FF FF FF` and the reply's type first), decompressed when
/// the reply was compressed.
///
/// Parts are kept per reply id (up to [`MAX_REPLY_IDS`] ids), so parts of another id never
/// take the room of a reply, and a number already held is dropped before any cap counts it.
/// Each id's header form is decided from the bytes of its first part (see [`SplitForm`]);
/// parts that come before it are kept as they are until then. A reply whose parts are all in
/// but do not join (a bad CRC32, over [`MAX_DECOMPRESSED`], parts that contradict each other)
/// is judged once: its later parts get the same error without the work being done again.
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
#[derive(Debug, Clone)]
pub struct Reassembly {
    replies: Vec<SplitReply>,
    /// Compressed replies decompressed so far.
    decompressions: usize,
    /// The most a compressed reply may declare and decompress to.
    max_decompressed: usize,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly {
            replies: Vec::new(),
            decompressions: 0,
            max_decompressed: MAX_DECOMPRESSED,
        }
    }
}

/// The parts of one reply id.
#[derive(Debug, Clone)]
struct SplitReply {
    id: u32,
    form: Option<SplitForm>,
    /// Datagrams that came before the first part told the form, as they came.
    early: Vec<Vec<u8>>,
    /// The payloads, once the form is known.
    parts: NumberedParts<Vec<u8>>,
    /// Set once every part was in: `Ok` after the reply was handed out, the error otherwise.
    verdict: Option<Result<()>>,
}

/// The id every header form carries at bytes 4..8.
fn reply_id(datagram: &[u8]) -> Result<u32> {
    match datagram.get(4..8) {
        Some(id) => Ok(u32::from_le_bytes([id[0], id[1], id[2], id[3]])),
        None => Err(Error::new(
            ErrorKind::UnexpectedEnd {
                need: 8,
                have: datagram.len(),
            },
            datagram.len(),
        )
        .in_field("Reassembly")),
    }
}

impl SplitReply {
    fn new(id: u32) -> Self {
        SplitReply {
            id,
            form: None,
            early: Vec::new(),
            parts: NumberedParts::new(MAX_PARTS as u32, MAX_PARTS * MAX_DATAGRAM),
            verdict: None,
        }
    }

    /// Files one datagram of this id; the joined reply once every part is in, decompressed
    /// while `decompressions` (counted up) is below [`MAX_DECOMPRESSIONS`].
    fn push(
        &mut self,
        datagram: &[u8],
        decompressions: &mut usize,
        max_decompressed: usize,
    ) -> Result<Option<Vec<u8>>> {
        match &self.verdict {
            Some(Ok(())) => return Ok(None),
            Some(Err(error)) => return Err(error.clone()),
            None => {}
        }
        if self.form.is_none() {
            self.form = SplitForm::of_first_part(datagram);
            let Some(form) = self.form else {
                if self.early.iter().any(|held| held == datagram) {
                    return Ok(None);
                }
                if self.early.len() >= MAX_PARTS {
                    let kind = ErrorKind::TooLong {
                        len: MAX_PARTS + 1,
                        max: MAX_PARTS,
                    };
                    return Err(Error::new(kind, 0).in_field("Reassembly"));
                }
                self.early.push(datagram.to_vec());
                return Ok(None);
            };
            // Parts that came first are filed now; one that does not fit is dropped.
            for early in std::mem::take(&mut self.early) {
                let _ = self.file(form, &early);
            }
        }
        let form = self.form.expect("decided above");
        self.file(form, datagram)?;
        if !self.parts.is_complete() {
            return Ok(None);
        }
        let joined = self.join(decompressions, max_decompressed);
        self.verdict = Some(joined.as_ref().map(|_| ()).map_err(Clone::clone));
        joined.map(Some)
    }

    fn file(&mut self, form: SplitForm, datagram: &[u8]) -> Result<()> {
        let part = form.part(datagram).map_err(|e| e.in_field("Reassembly"))?;
        let total = u32::from(part.total);
        self.parts
            .file(
                u32::from(part.number),
                Some(total),
                part.payload.len(),
                || part.payload.to_vec(),
            )
            .map_err(|e| e.in_field("Reassembly"))?;
        Ok(())
    }

    /// The payloads joined in order, decompressed when the id says so.
    fn join(&self, decompressions: &mut usize, max_decompressed: usize) -> Result<Vec<u8>> {
        let joined: Vec<u8> = self.parts.in_order().flatten().copied().collect();
        if self.id & COMPRESSED_ID == 0 {
            return Ok(joined);
        }
        if *decompressions >= MAX_DECOMPRESSIONS {
            let reason = "more compressed replies than MAX_DECOMPRESSIONS";
            return Err(Error::new(ErrorKind::Invalid(reason), 4).in_field("Reassembly"));
        }
        *decompressions += 1;
        decompress(&joined, max_decompressed)
    }
}

impl Reassembly {
    /// Nothing received yet.
    pub fn new() -> Self {
        Reassembly::default()
    }

    /// Nothing received yet, and a compressed reply may decompress to at most `max` bytes
    /// (and never more than [`MAX_DECOMPRESSED`]): a client passes its reply-byte cap, so what a
    /// server can make it hold stays within that cap.
    pub fn with_max_decompressed(max: usize) -> Self {
        Reassembly {
            max_decompressed: max.min(MAX_DECOMPRESSED),
            ..Reassembly::default()
        }
    }

    /// The reply the caller most likely waits for: the id whose first part arrived with the
    /// most parts held (the first seen among equals).
    fn best(&self) -> Option<&SplitReply> {
        self.replies
            .iter()
            .rev()
            .filter(|reply| reply.form.is_some())
            .max_by_key(|reply| reply.parts.len())
    }

    /// The header form of that reply, once its first part arrived.
    pub fn form(&self) -> Option<SplitForm> {
        self.best().and_then(|reply| reply.form)
    }

    /// How many distinct parts are held, of every id.
    pub fn parts_received(&self) -> usize {
        self.replies
            .iter()
            .map(|reply| reply.parts.len() + reply.early.len())
            .sum()
    }

    /// Adds one split datagram (starting `FE FF FF FF`); the joined reply once every part of
    /// its id is in. A datagram that is not a part, a part that contradicts the others of its
    /// id (another total, a number past it), a part of one id more than [`MAX_REPLY_IDS`],
    /// is an error and changes nothing. A compressed reply that does not decompress to its
    /// declared size and CRC32, or past [`MAX_DECOMPRESSIONS`], is an error, given again for
    /// its later parts.
    pub fn push(&mut self, datagram: &[u8]) -> Result<Option<Vec<u8>>> {
        if !datagram.starts_with(SPLIT_BYTES) {
            return Err(
                Error::new(ErrorKind::Invalid("not a part of a split reply"), 0)
                    .in_field("Reassembly"),
            );
        }
        let id = reply_id(datagram)?;
        let index = match self.replies.iter().position(|reply| reply.id == id) {
            Some(index) => index,
            None if self.replies.len() < MAX_REPLY_IDS => {
                self.replies.push(SplitReply::new(id));
                self.replies.len() - 1
            }
            None => {
                let reason = "parts of more reply ids than MAX_REPLY_IDS";
                return Err(Error::new(ErrorKind::Invalid(reason), 4).in_field("Reassembly"));
            }
        };
        self.replies[index].push(datagram, &mut self.decompressions, self.max_decompressed)
    }

    /// The part numbers not received yet of the reply whose first part arrived (the one with
    /// the most parts, if several did).
    pub fn missing_parts(&self) -> Vec<u8> {
        self.best().map_or_else(Vec::new, |reply| {
            reply
                .parts
                .missing()
                .into_iter()
                .filter_map(|n| u8::try_from(n).ok())
                .collect()
        })
    }
}

impl Reassembly {
    /// The joined payloads of the parts held from part 0 up to the first missing one: the
    /// start of a reply whose later parts never came, from which a client can still read the
    /// rows and pairs that arrived whole. `None` without part 0, and for a compressed reply,
    /// which cannot be decompressed in part.
    pub fn received_prefix(&self) -> Option<Vec<u8>> {
        let reply = self.best()?;
        if reply.id & COMPRESSED_ID != 0 || reply.parts.get(0).is_none() {
            return None;
        }
        Some(reply.parts.prefix().flatten().copied().collect())
    }
}

/// A compressed reply's payload: the [`Compression`] header, then bzip2 data that must
/// decompress to exactly the declared size with the declared CRC32.
fn decompress(joined: &[u8], max_decompressed: usize) -> Result<Vec<u8>> {
    let mut reader = Reader::new(joined);
    let header = Compression::decode(&mut reader, ()).map_err(|e| e.in_field("Compression"))?;
    let size = header.size as usize;
    if size > max_decompressed {
        let kind = ErrorKind::TooLong {
            len: size,
            max: max_decompressed,
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

    #[test]
    fn copies_and_other_ids_cannot_block_a_reply() {
        let whole = b"\xff\xff\xff\xffEabcdefgh";
        let mut r = Reassembly::new();
        r.push(&source_part(9, 2, 0, &whole[..6])).unwrap();
        // More copies of part 0 than a reply has parts, and parts of other ids.
        for copy in 0..(MAX_PARTS as u32 * 2) {
            assert_eq!(r.push(&source_part(9, 2, 0, b"forged")).unwrap(), None);
            let _ = r.push(&source_part(100 + copy % 4, 2, 0, b"\xff\xff\xff\xffEx"));
        }
        // Ids past MAX_REPLY_IDS are refused, and say so.
        let mut many = Reassembly::new();
        for id in 0..MAX_REPLY_IDS as u32 {
            many.push(&source_part(id, 2, 1, b"x")).unwrap();
        }
        let refused = many.push(&source_part(99, 2, 1, b"x")).unwrap_err();
        assert!(refused.to_string().contains("MAX_REPLY_IDS"), "{refused}");
        let joined = r.push(&source_part(9, 2, 1, &whole[6..])).unwrap();
        assert_eq!(joined.as_deref(), Some(&whole[..]));
    }

    #[test]
    fn a_reply_that_fails_to_decompress_is_judged_once() {
        // 1 MiB of varied bytes, compressed, with a wrong CRC32; then its last part resent
        // many times. Only the first completion decompresses.
        let whole: Vec<u8> = (0..MAX_DECOMPRESSED as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let datagram = compressed(&whole, whole.len() as u32, crc32fast::hash(&whole) ^ 1);
        let started = std::time::Instant::now();
        let first = Reassembly::new().push(&datagram).unwrap_err();
        let one_decompression = started.elapsed();
        assert!(first.to_string().contains("CRC32"), "{first}");

        let mut r = Reassembly::new();
        assert!(r.push(&datagram).is_err());
        let started = std::time::Instant::now();
        for _ in 0..200 {
            let again = r.push(&datagram).unwrap_err();
            assert!(again.to_string().contains("CRC32"), "{again}");
        }
        // 200 resends cost far less than 20 decompressions (they cost about 200 if redone).
        assert!(
            started.elapsed() < one_decompression * 20,
            "200 resends took {:?}, one decompression {one_decompression:?}",
            started.elapsed()
        );
    }

    #[test]
    fn new_compressed_ids_past_the_budget_are_refused_unread() {
        let whole = b"\xff\xff\xff\xffEsome rules\0".repeat(20);
        let crc = crc32fast::hash(&whole);
        let mut r = Reassembly::new();
        for id in 0..MAX_DECOMPRESSIONS as u32 {
            let mut bad = compressed(&whole, whole.len() as u32, crc ^ 1);
            bad[4] = id as u8;
            assert!(r.push(&bad).unwrap_err().to_string().contains("CRC32"));
        }
        // Even a good one: the budget is spent.
        let mut good = compressed(&whole, whole.len() as u32, crc);
        good[4] = 0x40;
        let refused = r.push(&good).unwrap_err().to_string();
        assert!(refused.contains("MAX_DECOMPRESSIONS"), "{refused}");
    }

    #[test]
    fn a_compressed_reply_may_decompress_only_to_the_callers_cap() {
        let whole = b"\xff\xff\xff\xffEsome rules\0".repeat(200);
        let crc = crc32fast::hash(&whole);
        let datagram = compressed(&whole, whole.len() as u32, crc);
        // Within the cap it joins; over it, it is refused before any bzip2 work, the cap named.
        let fits = Reassembly::with_max_decompressed(whole.len()).push(&datagram);
        assert_eq!(fits.unwrap().as_deref(), Some(&whole[..]));
        let over = Reassembly::with_max_decompressed(whole.len() - 1)
            .push(&datagram)
            .unwrap_err();
        assert!(over.to_string().contains("size"), "{over}");
        // A cap above MAX_DECOMPRESSED is held to it.
        let huge = Reassembly::with_max_decompressed(usize::MAX);
        assert_eq!(huge.max_decompressed, MAX_DECOMPRESSED);
    }
}
