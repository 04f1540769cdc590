//! Sans-I/O streams: the TCP side of query-net (Minecraft Java status, and next RCON,
//! Frostbite, TeamSpeak 3).
//!
//! A datagram engine is handed whole datagrams; a stream engine is handed whatever bytes the
//! connection delivered, split anywhere (one byte at a time included), and must find its
//! frames in them. Three pieces do that, and none of them touches a socket:
//!
//! - [`Framing`] says, for the bytes buffered so far, whether a whole frame is there
//!   ([`FrameLen::Whole`]) or how many bytes it needs before it can be decoded
//!   ([`FrameLen::Need`]). [`declared_frame_len`] answers it for any declared packet, from
//!   the decode error the derive reports when its input ends early.
//! - [`FrameBuffer`] holds the bytes of the frame being read, refuses a frame whose declared
//!   size passes its cap before buffering it, and reports a stream that ends mid-frame: the
//!   contract of tokio-util's `codec::Decoder` (`Ok(None)` until a whole frame is buffered,
//!   `decode_eof` for the end). [`FrameCodec`] is that `Decoder`, for use with `Framed`.
//! - [`StreamSession`] is one exchange as a state machine: fed bytes, the end of the stream
//!   and the time; asked what to write, when to wake it, and for its result.
//!   [`run_stream`](crate::tcp::run_stream) runs one over a tokio `TcpStream`, with a
//!   connect timeout, the query's overall deadline and its byte cap.

use std::time::Instant;

use query_wire::{Decode, Error, ErrorKind, Reader};

use crate::error::QueryError;

/// How far the buffered bytes are from a whole frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameLen {
    /// The first `n` buffered bytes are one whole frame.
    Whole(usize),
    /// At least `n` bytes in all (counted from the frame's first byte) are needed before the
    /// frame can be decoded; more may be asked for once they are there.
    Need(usize),
}

/// Where a stream's frames begin and end.
///
/// Implemented by every `Fn(&[u8]) -> Result<FrameLen, Error>`, such as
/// `|buf: &[u8]| declared_frame_len::<Frame<'_>>(buf)` for a declared frame type (see
/// [`declared_frame_len`]).
pub trait Framing {
    /// The length of the frame at the start of `buf`, or how many bytes it needs. An error is
    /// a frame that cannot become valid whatever follows (a length prefix that is no number).
    fn frame_len(&self, buf: &[u8]) -> Result<FrameLen, Error>;
}

impl<F: Fn(&[u8]) -> Result<FrameLen, Error>> Framing for F {
    fn frame_len(&self, buf: &[u8]) -> Result<FrameLen, Error> {
        self(buf)
    }
}

/// [`Framing`] for a declared frame type `P`: decodes `P` from the front of `buf`; a decode
/// that runs out of input at the end of `buf` means more bytes are needed, as many as the
/// derive's [`ErrorKind::UnexpectedEnd`] says (a length prefix read whole gives the frame's
/// full size at once, a prefix cut short one more byte).
///
/// `P` should be the frame's envelope (its length prefix and the body as raw bytes), so that
/// an error inside a body that is all there is not taken for a body still arriving; the
/// session decodes the body once the frame is whole.
///
/// ```
/// use query_net::stream::{declared_frame_len, FrameLen};
/// use query_wire::Wire;
///
/// #[derive(Debug, Wire)]
/// #[wire(endian = "big")]
/// struct Envelope<'a> {
///     #[wire(bytes(prefix = u16))]
///     body: &'a [u8],
/// }
///
/// // A closure, so that the frame borrows from whatever buffer it is given.
/// let frame = |buf: &[u8]| declared_frame_len::<Envelope<'_>>(buf);
/// assert_eq!(frame(b"")?, FrameLen::Need(2));
/// assert_eq!(frame(b"\x00")?, FrameLen::Need(2));
/// assert_eq!(frame(b"\x00\x05ab")?, FrameLen::Need(7));
/// assert_eq!(frame(b"\x00\x05abcdeNEXT")?, FrameLen::Whole(7));
/// # Ok::<(), query_wire::Error>(())
/// ```
pub fn declared_frame_len<'a, P: Decode<'a, Ctx = ()>>(buf: &'a [u8]) -> Result<FrameLen, Error> {
    let mut reader = Reader::new(buf);
    match P::decode(&mut reader, ()) {
        Ok(_) => Ok(FrameLen::Whole(reader.offset())),
        Err(error) => match *error.kind() {
            ErrorKind::UnexpectedEnd { need, have } if error.offset() + have == buf.len() => {
                Ok(FrameLen::Need(error.offset().saturating_add(need)))
            }
            _ => Err(error.in_field(P::NAME)),
        },
    }
}

/// [`Framing`] for a frame whose declared header states its size: once the header `H` is
/// buffered, `frame_len` (given the header) is the whole frame's length, header included.
///
/// Use it where [`declared_frame_len`] would learn the size only bit by bit: a body that is a
/// list read element by element asks for one element more at a time, so a peer that drips
/// bytes would make every element cost a decode of everything before it.
///
/// ```
/// use query_net::stream::{header_frame_len, FrameLen};
/// use query_wire::Wire;
///
/// /// A count of u16 units, then the units.
/// #[derive(Debug, Wire)]
/// #[wire(endian = "big")]
/// struct Header {
///     units: u16,
/// }
///
/// let frame = |buf: &[u8]| header_frame_len(buf, |h: &Header| 2 + 2 * usize::from(h.units));
/// assert_eq!(frame(b"\x00")?, FrameLen::Need(2));
/// assert_eq!(frame(b"\x00\x03ab")?, FrameLen::Need(8));
/// assert_eq!(frame(b"\x00\x01abcd")?, FrameLen::Whole(4));
/// # Ok::<(), query_wire::Error>(())
/// ```
pub fn header_frame_len<'a, H: Decode<'a, Ctx = ()>>(
    buf: &'a [u8],
    frame_len: impl FnOnce(&H) -> usize,
) -> Result<FrameLen, Error> {
    let mut reader = Reader::new(buf);
    match H::decode(&mut reader, ()) {
        Ok(header) => {
            let len = frame_len(&header).max(reader.offset());
            Ok(if buf.len() >= len {
                FrameLen::Whole(len)
            } else {
                FrameLen::Need(len)
            })
        }
        Err(error) => match *error.kind() {
            ErrorKind::UnexpectedEnd { need, have } if error.offset() + have == buf.len() => {
                Ok(FrameLen::Need(error.offset().saturating_add(need)))
            }
            _ => Err(error.in_field(H::NAME)),
        },
    }
}

/// Why a stream's bytes do not make a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame declares (or has already buffered) more bytes than the cap allows. Raised as
    /// soon as the size is known, before the bytes are buffered.
    #[error("a frame of {need} bytes or more exceeds the cap of {max}")]
    TooLarge {
        /// The size the frame declared, or the bytes it already took without ending.
        need: usize,
        /// The cap.
        max: usize,
    },
    /// The stream ended inside a frame.
    #[error("the stream ended {missing} byte(s) short of a whole frame ({have} buffered)")]
    Truncated {
        /// Bytes of the frame that arrived.
        have: usize,
        /// Bytes it still needed, at least.
        missing: usize,
    },
    /// The bytes can never begin a valid frame.
    #[error("{0}")]
    Malformed(#[from] Error),
}

impl From<FrameError> for QueryError {
    fn from(error: FrameError) -> Self {
        match error {
            FrameError::Malformed(wire) => QueryError::Malformed(wire),
            other => QueryError::protocol(other.to_string()),
        }
    }
}

/// The bytes of a stream between frames: pushed in as they arrive, taken out a whole frame at a
/// time.
///
/// It holds at most one frame's cap plus the bytes of the latest push: a frame that declares
/// more than the cap is refused as soon as its size is known, and bytes that reach the cap
/// without making a frame are refused too. A driver that reads in chunks of a few KiB
/// therefore bounds what a connection can make it hold.
///
/// ```
/// use query_net::stream::{declared_frame_len, FrameBuffer, FrameError};
/// # use query_wire::Wire;
/// # #[derive(Debug, Wire)]
/// # struct Envelope<'a> { #[wire(bytes(prefix = u8))] body: &'a [u8] }
///
/// let mut frames = FrameBuffer::new(|b: &[u8]| declared_frame_len::<Envelope<'_>>(b), 16);
/// for byte in b"\x02hi\x03yo" {
///     frames.push(&[*byte]);
/// }
/// assert_eq!(frames.next_frame()?, Some(&b"\x02hi"[..]));
/// assert_eq!(frames.next_frame()?, None); // "\x03yo" needs one more byte
/// assert!(matches!(frames.finish(), Err(FrameError::Truncated { have: 3, missing: 1 })));
/// # Ok::<(), FrameError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FrameBuffer<F> {
    framing: F,
    max_frame: usize,
    buf: Vec<u8>,
    /// Bytes at the front that belong to frames already handed out.
    consumed: usize,
    /// The length of the frame handed out last, consumed on the next call.
    handed_out: usize,
    /// Buffered bytes (past `consumed`) below which asking the framing again is pointless.
    need: usize,
}

impl<F: Framing> FrameBuffer<F> {
    /// An empty buffer that finds frames with `framing` and refuses any over `max_frame` bytes.
    pub fn new(framing: F, max_frame: usize) -> Self {
        FrameBuffer {
            framing,
            max_frame,
            buf: Vec::new(),
            consumed: 0,
            handed_out: 0,
            need: 1,
        }
    }

    /// The cap on one frame's size.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// Bytes held that are not part of a frame handed out.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.consumed - self.handed_out
    }

    fn release_handed_out(&mut self) {
        self.consumed += std::mem::take(&mut self.handed_out);
        if self.consumed == self.buf.len() {
            self.buf.clear();
            self.consumed = 0;
        }
    }

    /// Appends bytes that arrived.
    pub fn push(&mut self, bytes: &[u8]) {
        self.release_handed_out();
        if self.consumed > 0 {
            // Move the partial frame to the front instead of growing behind frames already read.
            self.buf.drain(..self.consumed);
            self.consumed = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, `Ok(None)` while it is incomplete. The frame stays valid until
    /// the next call of any method that takes `&mut self`.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, FrameError> {
        self.release_handed_out();
        let pending = &self.buf[self.consumed..];
        if pending.len() < self.need {
            return Ok(None);
        }
        match self.framing.frame_len(pending)? {
            FrameLen::Whole(len) if len > self.max_frame => Err(FrameError::TooLarge {
                need: len,
                max: self.max_frame,
            }),
            FrameLen::Whole(0) => Err(FrameError::Malformed(Error::new(
                ErrorKind::Invalid("a frame of no bytes"),
                0,
            ))),
            FrameLen::Whole(len) => {
                self.need = 1;
                self.handed_out = len;
                let start = self.consumed;
                Ok(Some(&self.buf[start..start + len]))
            }
            FrameLen::Need(need) if need > self.max_frame => Err(FrameError::TooLarge {
                need,
                max: self.max_frame,
            }),
            FrameLen::Need(_) if pending.len() >= self.max_frame => Err(FrameError::TooLarge {
                need: pending.len() + 1,
                max: self.max_frame,
            }),
            FrameLen::Need(need) => {
                // A framing that asks for no more than it has would be asked again for ever.
                self.need = need.max(pending.len() + 1);
                Ok(None)
            }
        }
    }

    /// The stream ended: fine between frames, [`FrameError::Truncated`] inside one.
    pub fn finish(&mut self) -> Result<(), FrameError> {
        self.release_handed_out();
        match self.buffered() {
            0 => Ok(()),
            have => Err(FrameError::Truncated {
                have,
                missing: self.need.saturating_sub(have).max(1),
            }),
        }
    }
}

/// A [`Framing`] as a tokio-util [`Decoder`](tokio_util::codec::Decoder): each item is one
/// whole frame's bytes, a frame over the cap is an error before its bytes are buffered, and a
/// stream that ends mid-frame fails in `decode_eof`.
///
/// ```
/// use bytes::BytesMut;
/// use query_net::stream::{declared_frame_len, FrameCodec};
/// use tokio_util::codec::Decoder;
/// # use query_wire::Wire;
/// # #[derive(Debug, Wire)]
/// # struct Envelope<'a> { #[wire(bytes(prefix = u8))] body: &'a [u8] }
///
/// let mut codec = FrameCodec::new(|b: &[u8]| declared_frame_len::<Envelope<'_>>(b), 64);
/// let mut src = BytesMut::from(&b"\x02h"[..]);
/// assert_eq!(codec.decode(&mut src)?, None);
/// src.extend_from_slice(b"i\x01");
/// assert_eq!(codec.decode(&mut src)?.as_deref(), Some(&b"\x02hi"[..]));
/// assert!(codec.decode_eof(&mut src).is_err()); // "\x01" and then the end
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FrameCodec<F> {
    framing: F,
    max_frame: usize,
}

impl<F: Framing> FrameCodec<F> {
    /// A decoder of `framing`'s frames, refusing any over `max_frame` bytes.
    pub fn new(framing: F, max_frame: usize) -> Self {
        FrameCodec { framing, max_frame }
    }
}

impl<F: Framing> tokio_util::codec::Decoder for FrameCodec<F> {
    type Item = bytes::BytesMut;
    type Error = std::io::Error;

    fn decode(&mut self, src: &mut bytes::BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        if src.is_empty() {
            return Ok(None);
        }
        let too_large = |need| {
            invalid_data(FrameError::TooLarge {
                need,
                max: self.max_frame,
            })
        };
        match self.framing.frame_len(src).map_err(invalid_data)? {
            FrameLen::Whole(0) => Err(invalid_data("a frame of no bytes")),
            FrameLen::Whole(len) | FrameLen::Need(len) if len > self.max_frame => {
                Err(too_large(len))
            }
            FrameLen::Whole(len) => Ok(Some(src.split_to(len))),
            FrameLen::Need(_) if src.len() >= self.max_frame => Err(too_large(src.len() + 1)),
            FrameLen::Need(need) => {
                src.reserve(need.saturating_sub(src.len()));
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, src: &mut bytes::BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        match self.decode(src)? {
            Some(frame) => Ok(Some(frame)),
            None if src.is_empty() => Ok(None),
            None => Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!(
                    "the stream ended inside a frame ({} bytes buffered)",
                    src.len()
                ),
            )),
        }
    }
}

fn invalid_data(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, error)
}

/// One exchange over a byte stream, as a state machine.
///
/// A driver connects, then repeats: write everything [`poll_transmit`] yields, collect
/// [`poll_result`], then wait for bytes (→ [`handle_bytes`]), the end of the stream (→
/// [`handle_eof`]) or the [`poll_timeout`] deadline (→ [`handle_timeout`]). The bytes come
/// split wherever the network split them. Once `poll_result` has returned `Some`, the session
/// is finished and the driver closes the connection.
///
/// [`poll_transmit`]: StreamSession::poll_transmit
/// [`poll_result`]: StreamSession::poll_result
/// [`handle_bytes`]: StreamSession::handle_bytes
/// [`handle_eof`]: StreamSession::handle_eof
/// [`poll_timeout`]: StreamSession::poll_timeout
/// [`handle_timeout`]: StreamSession::handle_timeout
pub trait StreamSession {
    /// What a successful exchange produces.
    type Output;

    /// Bytes to write now, if any; each is written whole before the next is asked for.
    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]>;

    /// Bytes that arrived, in order, split anywhere.
    fn handle_bytes(&mut self, bytes: &[u8], now: Instant);

    /// The peer closed its side of the stream.
    fn handle_eof(&mut self, now: Instant);

    /// When the session wants [`handle_timeout`](StreamSession::handle_timeout) called; `None`
    /// when it only waits for bytes (the driver's deadline still ends it).
    fn poll_timeout(&self) -> Option<Instant>;

    /// The deadline from [`poll_timeout`](StreamSession::poll_timeout) has passed.
    fn handle_timeout(&mut self, now: Instant);

    /// The outcome, once: `Some` exactly one time, then `None`.
    fn poll_result(&mut self) -> Option<Result<Self::Output, QueryError>>;
}

impl<S: StreamSession + ?Sized> StreamSession for Box<S> {
    type Output = S::Output;

    fn poll_transmit(&mut self, now: Instant) -> Option<&[u8]> {
        (**self).poll_transmit(now)
    }
    fn handle_bytes(&mut self, bytes: &[u8], now: Instant) {
        (**self).handle_bytes(bytes, now);
    }
    fn handle_eof(&mut self, now: Instant) {
        (**self).handle_eof(now);
    }
    fn poll_timeout(&self) -> Option<Instant> {
        (**self).poll_timeout()
    }
    fn handle_timeout(&mut self, now: Instant) {
        (**self).handle_timeout(now);
    }
    fn poll_result(&mut self) -> Option<Result<Self::Output, QueryError>> {
        (**self).poll_result()
    }
}

/// The server side of one connection, as a state machine: fed the bytes that arrive (split
/// anywhere) and the time, asked what to write and whether it is done.
///
/// [`serve_stream`](crate::tcp::serve_stream) runs one per accepted connection, under the
/// listener's caps: it closes the connection when [`is_closed`](StreamResponder::is_closed)
/// says so, when the peer is idle or too slow, and never hands it more bytes than it reads in
/// one go. Garbage must close the connection, never panic.
pub trait StreamResponder {
    /// Bytes that arrived.
    fn handle_bytes(&mut self, bytes: &[u8], now: Instant);
    /// Bytes to write now, if any.
    fn poll_transmit(&mut self) -> Option<Vec<u8>>;
    /// When the responder wants [`handle_timeout`](StreamResponder::handle_timeout) called.
    /// By default never: the listener's idle and session timeouts cut a slow peer, which is
    /// all a responder that answers each request at once needs.
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
    /// The deadline from [`poll_timeout`](StreamResponder::poll_timeout) has passed. By
    /// default nothing happens, as no deadline is asked for.
    fn handle_timeout(&mut self, _now: Instant) {}
    /// Whether the connection should close (everything to write has been taken).
    fn is_closed(&self) -> bool;
}

/// Runs `session` without a network over a recorded stream: everything it writes is collected,
/// and `reply` is fed in the pieces given, then the end of the stream. For tests and for
/// `gsq decode`, which replays a server's bytes in read order.
///
/// Returns the result and the bytes the session wrote.
pub fn replay<S: StreamSession>(
    mut session: S,
    pieces: &[&[u8]],
    now: Instant,
) -> (Result<S::Output, QueryError>, Vec<u8>) {
    let mut written = Vec::new();
    let mut pieces = pieces.iter();
    loop {
        while let Some(bytes) = session.poll_transmit(now) {
            written.extend_from_slice(bytes);
        }
        if let Some(result) = session.poll_result() {
            return (result, written);
        }
        match pieces.next() {
            Some(piece) => session.handle_bytes(piece, now),
            None => {
                session.handle_eof(now);
                while let Some(bytes) = session.poll_transmit(now) {
                    written.extend_from_slice(bytes);
                }
                let result = session.poll_result().unwrap_or_else(|| {
                    Err(QueryError::protocol(
                        "the session did not finish at the end of the stream",
                    ))
                });
                return (result, written);
            }
        }
    }
}

/// Every way to cut `bytes` in two, then in single bytes: the splits a stream test feeds a
/// session to prove it reads a reply whatever the network did to it. Three-way cuts too for
/// replies of at most `three_way_max` bytes.
pub fn splits(bytes: &[u8], three_way_max: usize) -> Vec<Vec<&[u8]>> {
    let mut all = vec![vec![bytes]];
    for cut in 1..bytes.len() {
        all.push(vec![&bytes[..cut], &bytes[cut..]]);
    }
    if bytes.len() <= three_way_max {
        for a in 1..bytes.len() {
            for b in a + 1..bytes.len() {
                all.push(vec![&bytes[..a], &bytes[a..b], &bytes[b..]]);
            }
        }
    }
    all.push(bytes.chunks(1).collect());
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use query_wire::Wire;

    #[derive(Debug, Wire)]
    #[wire(endian = "big")]
    struct Envelope<'a> {
        #[wire(bytes(prefix = u16))]
        body: &'a [u8],
    }

    type Framing = fn(&[u8]) -> Result<FrameLen, Error>;

    fn envelope(buf: &[u8]) -> Result<FrameLen, Error> {
        declared_frame_len::<Envelope<'_>>(buf)
    }

    fn buffer(max: usize) -> FrameBuffer<Framing> {
        FrameBuffer::new(envelope, max)
    }

    const TWO_FRAMES: &[u8] = b"\x00\x03abc\x00\x00\x00\x02de";

    #[test]
    fn every_split_gives_the_same_frames() {
        for pieces in splits(TWO_FRAMES, usize::MAX) {
            let mut frames = buffer(16);
            let mut seen = Vec::new();
            for piece in &pieces {
                frames.push(piece);
                while let Some(frame) = frames.next_frame().unwrap() {
                    seen.push(frame.to_vec());
                }
            }
            frames.finish().unwrap();
            assert_eq!(
                seen,
                [&b"\x00\x03abc"[..], b"\x00\x00", b"\x00\x02de"],
                "{pieces:?}"
            );
        }
    }

    #[test]
    fn a_frame_over_the_cap_is_refused_from_its_prefix_alone() {
        let mut frames = buffer(8);
        frames.push(b"\x00\x07");
        assert_eq!(
            frames.next_frame(),
            Err(FrameError::TooLarge { need: 9, max: 8 })
        );
        assert_eq!(frames.buffered(), 2, "nothing of the body was waited for");
    }

    #[test]
    fn the_framing_is_asked_again_only_once_enough_bytes_arrived() {
        use std::cell::Cell;
        let calls = Cell::new(0);
        let counting = |buf: &[u8]| {
            calls.set(calls.get() + 1);
            declared_frame_len::<Envelope<'_>>(buf)
        };
        let mut frames = FrameBuffer::new(counting, 1 << 16);
        frames.push(b"\xff\xf0");
        assert_eq!(frames.next_frame(), Ok(None));
        for _ in 0..1000 {
            frames.push(b"x");
            assert_eq!(frames.next_frame(), Ok(None));
        }
        assert_eq!(
            calls.get(),
            1,
            "one byte at a time is not one decode per byte"
        );
    }

    #[test]
    fn eof_inside_a_frame_says_how_much_was_missing() {
        let mut frames = buffer(64);
        frames.push(b"\x00\x05ab");
        assert_eq!(frames.next_frame(), Ok(None));
        assert_eq!(
            frames.finish(),
            Err(FrameError::Truncated {
                have: 4,
                missing: 3
            })
        );
        let mut frames = buffer(64);
        frames.push(b"\x00\x01a");
        assert!(frames.next_frame().unwrap().is_some());
        assert_eq!(frames.finish(), Ok(()));
    }

    #[test]
    fn a_framing_that_never_completes_is_cut_at_the_cap() {
        // A terminator-ended frame (no length prefix): the cap bounds the wait for its end.
        #[derive(Debug, Wire)]
        struct Line<'a> {
            #[wire(bytes(until = b'\n'))]
            text: &'a [u8],
        }
        let mut frames = FrameBuffer::new(|b: &[u8]| declared_frame_len::<Line<'_>>(b), 32);
        frames.push(b"hello\nworld");
        assert_eq!(frames.next_frame().unwrap(), Some(&b"hello\n"[..]));
        assert_eq!(frames.next_frame().unwrap(), None);
        frames.push(&[b'a'; 40]);
        assert!(matches!(
            frames.next_frame(),
            Err(FrameError::TooLarge { max: 32, .. })
        ));
    }

    #[test]
    fn codec_follows_the_decoder_contract() {
        use bytes::BytesMut;
        use tokio_util::codec::Decoder;
        for pieces in splits(TWO_FRAMES, usize::MAX) {
            let mut codec = FrameCodec::new(envelope, 16);
            let mut src = BytesMut::new();
            let mut seen = Vec::new();
            for piece in &pieces {
                src.extend_from_slice(piece);
                while let Some(frame) = codec.decode(&mut src).unwrap() {
                    seen.push(frame.to_vec());
                }
            }
            assert_eq!(codec.decode_eof(&mut src).unwrap(), None);
            assert_eq!(seen.len(), 3);
        }
        let mut codec = FrameCodec::new(envelope, 16);
        let mut src = BytesMut::from(&b"\x01\x00"[..]);
        let error = codec.decode(&mut src).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
        assert!(error.to_string().contains("cap of 16"), "{error}");
    }
}
