//! The derive's output names everything by absolute path and keeps its locals to itself: it
//! compiles in a crate without the prelude, next to items that shadow the prelude's names, and
//! with fields and context bindings named like the generated locals.

#![no_implicit_prelude]

use ::query_wire::{Decode, Encode, Wire};

/// Items named like what generated code uses; resolving to any of them would break the build.
#[allow(dead_code, non_camel_case_types)]
mod shadows {
    pub struct Result;
    pub struct Ok;
    pub struct Err;
    pub struct Some;
    pub struct None;
    pub struct From;
    pub struct Default;
    pub struct Reader;
    pub struct Writer;
    pub struct usize;
    pub trait Iterator {}
    pub fn min() {}
}
#[allow(unused_imports)]
use shadows::*;

pub mod flags {
    ::query_wire::bitflags! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct Flags: u8 {
            const A = 1;
            const B = 2;
        }
    }
}
use flags::Flags;

/// Fields and context bindings named like the derive's own locals.
#[derive(Debug, PartialEq, Wire)]
#[wire(endian = "little", magic = b"NP", ctx(__r: Flags, __w: u8))]
pub struct Clashing<'a> {
    pub __count: u8,
    #[wire(when = __r.contains(Flags::A), str(prefix = u8))]
    pub __present: ::core::option::Option<&'a str>,
    #[wire(count = *__count, ctx = __w)]
    pub __elements: ::std::vec::Vec<Item>,
    #[wire(len(prefix = u16), until_end, str(prefix = u8, encoding = "latin1"))]
    pub __index: ::std::vec::Vec<::std::borrow::Cow<'a, str>>,
    #[wire(bits)]
    pub __tag: Flags,
    pub __field_body: ::query_wire::Uuid,
    #[wire(str(rest))]
    pub __value: ::std::string::String,
}

#[derive(Debug, PartialEq, Wire)]
#[wire(ctx(width: u8))]
pub struct Item {
    #[wire(count = width)]
    pub bytes: ::std::vec::Vec<u8>,
}

#[derive(Debug, PartialEq, Wire)]
#[wire(tag = u8, len = u8)]
pub enum Tlv<'a> {
    #[wire(tag = 1)]
    One(u16),
    #[wire(tag = 2)]
    Two { __e: bool },
    #[wire(other)]
    Other(u8, ::std::borrow::Cow<'a, [u8]>),
}

#[derive(Debug, PartialEq, Wire)]
#[wire(tag = u8, external)]
pub enum External {
    #[wire(tag = 7)]
    Seven,
    #[wire(other)]
    Else {
        __tag: u8,
        __body: ::std::vec::Vec<u8>,
    },
}

#[test]
fn derived_code_is_hygienic() {
    let value = Clashing {
        __count: 2,
        __present: ::core::option::Option::Some("hi"),
        __elements: ::std::vec![
            Item {
                bytes: ::std::vec![1, 2, 3],
            },
            Item {
                bytes: ::std::vec![4, 5, 6],
            },
        ],
        __index: ::std::vec![::std::borrow::Cow::Borrowed("é")],
        __tag: Flags::B,
        __field_body: ::query_wire::Uuid::nil(),
        __value: ::core::convert::From::from("tail"),
    };
    let ctx = (Flags::A, 3);
    let bytes = value.to_vec_with(ctx).unwrap();
    ::std::assert_eq!(bytes.len(), value.encoded_len(ctx));
    ::std::assert_eq!(&bytes[..6], b"NP\x02\x02hi");
    let decoded = Clashing::from_bytes_with(&bytes, ctx).unwrap();
    ::std::assert_eq!(decoded, value);

    for tlv in [
        Tlv::One(9),
        Tlv::Two { __e: true },
        Tlv::Other(5, ::std::borrow::Cow::Borrowed(b"raw")),
    ] {
        let bytes = tlv.to_vec().unwrap();
        ::std::assert_eq!(Tlv::from_bytes(&bytes).unwrap(), tlv);
    }
    ::std::assert_eq!(Tlv::Other(5, ::std::borrow::Cow::Borrowed(b"")).tag(), 5);

    let seven = External::Seven.to_vec_with(7).unwrap();
    ::std::assert!(seven.is_empty());
    let other = External::Else {
        __tag: 3,
        __body: ::std::vec![1],
    };
    let bytes = other.to_vec_with(3).unwrap();
    ::std::assert_eq!(External::from_bytes_with(&bytes, 3).unwrap(), other);
    ::std::assert!(External::Seven.to_vec_with(3).is_err());
}
