//! Computed fields and encode-side views: a computed field is written from the others and
//! checked against them on decode; a view encodes the same bytes as its type from borrowed
//! slices and generated elements, without allocating.

use query_wire::{items, Decode, Encode, ErrorKind, Wire};

/// A row count computed from its cells, a tag byte computed from a value's variant, and a
/// list of named entries: the shapes a responder fills from its own state.
#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", view = GridView)]
pub struct Grid<'a> {
    #[wire(computed = cells.count() / usize::from(*width).max(1))]
    pub rows: u16,
    pub width: u8,
    #[wire(count = usize::from(*rows) * usize::from(*width))]
    pub cells: Vec<u16>,
    #[wire(count(prefix = u8), view)]
    pub entries: Vec<Entry<'a>>,
    #[wire(default)]
    pub cached: u32,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", view = EntryView)]
pub struct Entry<'a> {
    #[wire(str(prefix = u8))]
    pub name: &'a str,
    #[wire(computed = value.tag())]
    pub kind: u8,
    #[wire(ctx = *kind)]
    pub value: Scalar<'a>,
}

#[derive(Debug, Clone, PartialEq, Wire)]
#[wire(endian = "little", tag = u8, external)]
pub enum Scalar<'a> {
    #[wire(tag = 1)]
    Byte(u8),
    #[wire(tag = 2)]
    Text(#[wire(str(prefix = u8))] &'a str),
}

/// An envelope whose body is any type that encodes like `Grid`.
#[derive(Debug, PartialEq, Wire)]
#[wire(endian = "little", magic = b"G", view = EnvelopeView)]
pub struct Envelope<'a> {
    #[wire(len(prefix = u16), view)]
    pub grid: Grid<'a>,
}

fn grid() -> Grid<'static> {
    Grid {
        rows: 2,
        width: 3,
        cells: vec![1, 2, 3, 4, 5, 6],
        entries: vec![
            Entry {
                name: "on",
                kind: 1,
                value: Scalar::Byte(1),
            },
            Entry {
                name: "map",
                kind: 2,
                value: Scalar::Text("de"),
            },
        ],
        cached: 0,
    }
}

const GRID: &[u8] = &[
    2, 0, // rows
    3, // width
    1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, // cells
    2, // entries
    2, b'o', b'n', 1, 1, // "on" Byte(1)
    3, b'm', b'a', b'p', 2, 2, b'd', b'e', // "map" Text("de")
];

#[test]
fn computed_fields_are_written_from_the_others_whatever_they_hold() {
    let mut value = grid();
    assert_eq!(value.to_vec().unwrap(), GRID);
    // Stale values in computed fields do not reach the wire.
    value.rows = 99;
    value.entries[1].kind = 0;
    assert_eq!(value.to_vec().unwrap(), GRID);
    assert_eq!(value.encoded_len(()), GRID.len());
    assert_eq!(Grid::from_bytes(GRID).unwrap(), grid());
}

#[test]
fn a_decoded_computed_field_that_disagrees_is_an_error_at_its_offset() {
    // One row of width 0 has no cells, and no cells make 0 rows, not 1.
    let bytes = [1, 0, 0, 0];
    let err = Grid::from_bytes(&bytes).unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("disagrees with the fields it is computed from")
    );
    assert_eq!(err.offset(), 0);
    assert_eq!(err.path_string(), "Grid.rows");
}

#[test]
fn a_tag_computed_from_the_value_cannot_disagree_with_it() {
    let entry = Entry {
        name: "x",
        kind: 9,
        value: Scalar::Text("y"),
    };
    let bytes = entry.to_vec().unwrap();
    assert_eq!(bytes, [1, b'x', 2, 1, b'y']);
    let decoded = Entry::from_bytes(&bytes).unwrap();
    assert_eq!(decoded.kind, 2);
    // A kind no variant has is refused by the value before the check is reached.
    let err = Entry::from_bytes(&[1, b'x', 7, 0]).unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::UnknownTag { tag: 7 });
}

#[test]
fn a_computed_value_that_does_not_fit_its_field_is_an_encode_error() {
    let value = Grid {
        rows: 0,
        width: 1,
        cells: vec![0; 70_000],
        entries: Vec::new(),
        cached: 0,
    };
    let err = value.to_vec().unwrap_err();
    assert!(
        matches!(err.kind(), ErrorKind::OutOfRange { value: 70_000, .. }),
        "{err}"
    );
    assert_eq!(err.path_string(), "rows");
}

#[test]
fn a_view_encodes_the_same_bytes_from_slices_and_generated_elements() {
    struct Player {
        name: String,
        level: u8,
    }
    let players = [
        Player {
            name: "on".into(),
            level: 1,
        },
        Player {
            name: "map".into(),
            level: 0,
        },
    ];
    let cells = [1u16, 2, 3, 4, 5, 6];
    let view = GridView {
        width: 3,
        cells: &cells[..],
        entries: items::map(&players, |p| EntryView {
            name: &p.name,
            value: if p.level > 0 {
                Scalar::Byte(p.level)
            } else {
                Scalar::Text("de")
            },
        }),
    };
    assert_eq!(view.encoded_len(()), GRID.len());
    assert_eq!(view.to_vec().unwrap(), GRID);

    let generated = GridView {
        width: 3,
        cells: items::from_fn(6, |i| u16::try_from(i + 1).unwrap()),
        entries: grid().entries,
    };
    assert_eq!(generated.to_vec().unwrap(), GRID);
}

#[test]
fn a_view_is_checked_like_its_type() {
    // Seven cells are not a whole number of rows of 3.
    let view = GridView {
        width: 3,
        cells: &[0u16; 7][..],
        entries: &[] as &[Entry<'_>],
    };
    let err = view.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::LengthMismatch {
            declared: 6,
            actual: 7
        }
    );
    assert_eq!(err.path_string(), "cells");
}

#[test]
fn views_nest_and_length_prefixes_are_written_around_them() {
    let cells = [1u16, 2, 3, 4, 5, 6];
    let inner = GridView {
        width: 3,
        cells: &cells[..],
        entries: grid().entries,
    };
    let envelope = EnvelopeView { grid: inner };
    let bytes = envelope.to_vec().unwrap();
    assert_eq!(bytes[0], b'G');
    assert_eq!(u16::from_le_bytes([bytes[1], bytes[2]]), GRID.len() as u16);
    assert_eq!(&bytes[3..], GRID);
    assert_eq!(Envelope::from_bytes(&bytes).unwrap().grid, grid());
}

#[test]
fn encoding_a_view_into_a_buffer_allocates_nothing() {
    // The counter is live in this binary: a box counts.
    let boxed = allocation_counter::measure(|| drop(std::hint::black_box(Box::new(1u8))));
    assert_eq!(boxed.count_total, 1);

    let names = ["a", "bb", "ccc"];
    let mut out = [0u8; 64];
    let info = allocation_counter::measure(|| {
        let view = GridView {
            width: 1,
            cells: items::from_fn(names.len(), |i| u16::try_from(names[i].len()).unwrap()),
            entries: items::map(&names, |name| EntryView {
                name,
                value: Scalar::Byte(1),
            }),
        };
        let written = view.encode_into(&mut out).unwrap();
        std::hint::black_box(written);
    });
    assert_eq!(info.count_total, 0);
}

/// Values typed by their column, row after row.
#[derive(Debug, PartialEq, Wire)]
#[wire(endian = "little")]
pub struct Columns<'a> {
    #[wire(count(prefix = u8))]
    pub kinds: Vec<u8>,
    #[wire(until_end, each_ctx = |column| kinds[column], cycle = kinds.len())]
    pub cells: Vec<Scalar<'a>>,
}

#[test]
fn a_cycle_hands_each_element_its_column() {
    let table = Columns {
        kinds: vec![1, 2],
        cells: vec![
            Scalar::Byte(5),
            Scalar::Text("a"),
            Scalar::Byte(6),
            Scalar::Text("b"),
        ],
    };
    let bytes = table.to_vec().unwrap();
    assert_eq!(bytes, [2, 1, 2, 5, 1, b'a', 6, 1, b'b']);
    assert_eq!(Columns::from_bytes(&bytes).unwrap(), table);

    // A value of the wrong type for its column is refused, at its index.
    let wrong = Columns {
        kinds: vec![1, 2],
        cells: vec![Scalar::Byte(5), Scalar::Byte(6)],
    };
    let err = wrong.to_vec().unwrap_err();
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("variant does not match its tag")
    );
    assert_eq!(err.path_string(), "cells[1]");
}
