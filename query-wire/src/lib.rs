//! The runtime behind `#[derive(Wire)]`: declare a packet as a Rust type, get a fast, zero-copy,
//! symmetric codec whose errors say where the bytes went wrong.
//!
//! - [`Reader`] borrows a datagram and tracks the absolute offset; [`Writer`] encodes into a
//!   caller's `&mut [u8]` without allocating and fills in length prefixes after the fact.
//! - [`Decode`] and [`Encode`] are what [`Wire`](derive@Wire) implements; `encoded_len` is
//!   exact. The derive's vocabulary is documented on [`Wire`](derive@Wire).
//! - [`Error`] carries the byte offset, the field path and an [`ErrorKind`]:
//!   `QueryResponse.chunks.server_info.map at byte 91: need 9 bytes, have 3`.
//! - [`TextEncoding`] and [`Text`] cover the code pages old game servers speak.
//! - [`kv`] splits and writes backslash-delimited key/value text (GameSpy v1) and is the
//!   runtime of `#[derive(KeyValues)]`.
//!
//! A protocol author depends on this crate alone: it re-exports the derives.

mod codec;
mod decimal;
mod derive_support;
mod encoded;
mod error;
mod fill;
mod int;
pub mod items;
pub mod kv;
pub mod packed_int;
pub mod parts;
mod reader;
mod terminator;
mod text;
pub mod varint;
mod writer;

pub use codec::{Decode, Encode};
pub use encoded::Encoded;
pub use error::{Error, ErrorKind, PathSegment, Result};
pub use fill::{Padding, Reserved};
pub use int::{Endian, Integer, Number};
pub use items::Items;
pub use packed_int::PackedIntValue;
pub use reader::Reader;
pub use terminator::{AnyOf, Terminator};
pub use text::{Text, TextEncoding};
pub use varint::{LengthPrefix, VarIntValue};
pub use writer::{LengthSlot, Writer};

pub use query_derive::KeyValues;
#[doc = include_str!("derive_docs.md")]
pub use query_derive::Wire;

/// What the code `#[derive(Wire)]` generates calls besides [`Reader`] and [`Writer`]; not a
/// stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::decimal::*;
    pub use crate::derive_support::*;
}

/// Crates the generated code and protocol declarations use, re-exported so that a protocol
/// crate needs no direct dependency on them.
pub mod reexport {
    pub use bitflags;
    pub use uuid;
}

/// The SQP-style bit set of flags, re-exported for `#[wire(bits)]` fields.
pub use bitflags::bitflags;
pub use uuid::Uuid;
