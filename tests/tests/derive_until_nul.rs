//! `#[wire(until_nul)]`: lists ended by a NUL byte, as GameSpy 2 and 3 end their key/value
//! lists, column names and column values with an empty string.

use query_wire::{Decode, Encode, ErrorKind, Text, Wire};

#[derive(Debug, PartialEq, Wire)]
pub struct Pair<'a> {
    #[wire(str(nul))]
    pub key: Text<'a>,
    #[wire(str(nul))]
    pub value: Text<'a>,
}

#[derive(Debug, PartialEq, Wire)]
pub struct Rules<'a> {
    #[wire(until_nul, max_count = 4)]
    pub pairs: Vec<Pair<'a>>,
    #[wire(until_nul(or_end), str(nul))]
    pub names: Vec<&'a str>,
}

#[derive(Debug, PartialEq, Wire)]
pub struct AtLeastOne<'a> {
    #[wire(until_nul, min_count = 1, str(nul))]
    pub names: Vec<&'a str>,
}

#[test]
fn lists_end_at_a_nul_and_round_trip() {
    let bytes = b"a\0\x01\0b\0\0\0x\0y\0\0";
    let rules = Rules::from_bytes(bytes).unwrap();
    assert_eq!(rules.pairs.len(), 2);
    assert_eq!(rules.pairs[0].key.as_bytes(), b"a");
    assert_eq!(rules.pairs[0].value.as_bytes(), b"\x01");
    assert_eq!(rules.pairs[1].value.as_bytes(), b"");
    assert_eq!(rules.names, ["x", "y"]);
    assert_eq!(rules.to_vec().unwrap(), bytes);
    assert_eq!(rules.encoded_len(()), bytes.len());
}

#[test]
fn empty_lists_are_a_lone_nul() {
    let rules = Rules::from_bytes(b"\0\0").unwrap();
    assert!(rules.pairs.is_empty() && rules.names.is_empty());
    assert_eq!(rules.to_vec().unwrap(), b"\0\0");
}

#[test]
fn or_end_lets_the_input_end_the_list() {
    // The second list has no closing NUL: the end of the datagram ends it.
    let rules = Rules::from_bytes(b"\0x\0y\0").unwrap();
    assert_eq!(rules.names, ["x", "y"]);
    let rules = Rules::from_bytes(b"\0").unwrap();
    assert!(rules.names.is_empty());
    // Encoding always closes the list.
    assert_eq!(rules.to_vec().unwrap(), b"\0\0");
}

#[test]
fn a_list_cut_before_its_nul_is_an_error_with_offset_and_path() {
    let err = Rules::from_bytes(b"a\0b\0").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnexpectedEnd { need: 1, have: 0 });
    assert_eq!(err.offset(), 4);
    assert_eq!(
        err.to_string(),
        "Rules.pairs at byte 4: need 1 bytes, have 0"
    );
    // Cut inside an element: the element's own error.
    let err = Rules::from_bytes(b"a\0b\0c").unwrap_err();
    assert_eq!(
        err.to_string(),
        "Rules.pairs[1].key at byte 5: need 1 bytes, have 0"
    );
}

#[test]
fn max_and_min_count_hold_both_ways() {
    let err = Rules::from_bytes(b"a\0a\0b\0b\0c\0c\0d\0d\0e\0e\0\0\0").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooLong { len: 5, max: 4 });
    let err = AtLeastOne::from_bytes(b"\0").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::TooFew { len: 0, min: 1 });
    assert!(AtLeastOne { names: vec![] }.to_vec().is_err());
}

#[test]
fn an_element_that_would_read_back_as_the_end_is_refused_on_encode() {
    let rules = Rules {
        pairs: vec![],
        names: vec!["x", ""],
    };
    let err = rules.to_vec().unwrap_err();
    assert_eq!(err.offset(), 3);
    assert_eq!(err.path_string(), "names[1]");
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("element of a NUL-terminated list is empty or starts with a NUL byte")
    );
    // A pair with an empty key starts with the NUL that ends the list.
    let rules = Rules {
        pairs: vec![Pair {
            key: Text::from_bytes(b""),
            value: Text::from_bytes(b"v"),
        }],
        names: vec![],
    };
    assert!(rules.to_vec().is_err());
}
