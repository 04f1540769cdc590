//! Expansion snapshots: the pretty-printed code the derive emits for representative types, so
//! that a change to the generator is reviewed as a diff of what it emits.

fn expand(src: &str) -> String {
    let input: syn::DeriveInput = syn::parse_str(src).expect("test input parses");
    let tokens = super::expand(&input).unwrap_or_else(|e| panic!("derive failed: {e}"));
    let file: syn::File = syn::parse2(tokens).expect("expansion parses as items");
    prettyplease::unparse(&file)
}

fn errors(src: &str) -> Vec<String> {
    let input: syn::DeriveInput = syn::parse_str(src).expect("test input parses");
    let error = super::expand(&input).expect_err("the derive refuses this input");
    error.into_iter().map(|e| e.to_string()).collect()
}

#[test]
fn struct_with_magic_strings_and_numbers() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", magic = b"\x01")]
        pub struct ServerInfo<'a> {
            pub current_players: u16,
            #[wire(endian = "little")]
            pub max_players: u32,
            #[wire(str(prefix = u8, max = 64))]
            pub server_name: &'a str,
            #[wire(str(prefix = u16, encoding = "windows1252"))]
            pub map: String,
            #[wire(bytes(rest))]
            pub trailer: &'a [u8],
        }
        "#
    ));
}

#[test]
fn struct_with_ctx_when_len_and_repeats() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", ctx(requested: ChunkSet))]
        pub struct Chunks<'a> {
            pub count: u16,
            #[wire(when = requested.contains(ChunkSet::SERVER_INFO), len(prefix = u32, surplus = "skip"))]
            pub server_info: Option<ServerInfo<'a>>,
            #[wire(when = *count > 0, len(prefix = u32), until_end, min_count = 1, max_count = 64)]
            pub rules: Option<Vec<Rule<'a>>>,
            #[wire(count(prefix = u8), min_count = 1)]
            pub fields: Vec<FieldHeader<'a>>,
            #[wire(count = *count, each_ctx = |i| i as u8)]
            pub rows: Vec<Row>,
            #[wire(default)]
            pub cache: u32,
        }
        "#
    ));
}

#[test]
fn varint_values_tag_and_prefixes_a_length_that_includes_itself_and_checksums() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little", magic = b"BE")]
        pub struct Frame<'a> {
            #[wire(crc32(after))]
            pub checksum: u32,
            #[wire(varint)]
            pub id: i32,
            #[wire(str(prefix = varint, max = 765))]
            pub address: &'a str,
            #[wire(count(prefix = leb128), varint)]
            pub values: Vec<u64>,
            #[wire(len(prefix = varint))]
            pub packet: Packet<'a>,
            #[wire(len(prefix = u8, includes = 1), bytes(rest))]
            pub counted: &'a [u8],
            #[wire(crc32(before))]
            pub trailer: u32,
        }
        "#
    ));
    insta::assert_snapshot!(expand(
        r#"
        #[wire(tag = varint)]
        pub enum Packet<'a> {
            #[wire(tag = 0)]
            Request,
            #[wire(tag = 1)]
            Ping(i64),
            #[wire(other)]
            Unknown(i32, &'a [u8]),
        }
        "#
    ));
}

#[test]
fn teeworlds_packed_integers_signed_unsigned_and_in_a_list() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", magic = b"\x21")]
        pub struct Info<'a> {
            pub client_token: u32,
            #[wire(packed_int)]
            pub token: i32,
            #[wire(str(nul))]
            pub name: Text<'a>,
            #[wire(packed_int, computed = scores.count())]
            pub count: u32,
            #[wire(count = *count, packed_int)]
            pub scores: Vec<i32>,
        }
        "#
    ));
}

#[test]
fn tlv_enum_with_a_catch_all() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little", tag = u16, len = u16, surplus = "skip", ctx(flags: Flags))]
        pub enum Payload<'a> {
            #[wire(tag = 1)]
            ServerInfo(#[wire(ctx = flags)] ServerInfo<'a>),
            #[wire(tag = KIND_PLAYERS)]
            Players { #[wire(count(prefix = u8))] names: Vec<Name<'a>> },
            #[wire(tag = 3)]
            Empty,
            #[wire(other)]
            Unknown(u16, &'a [u8]),
        }
        "#
    ));
}

#[test]
fn external_tag_enum() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", tag = u8, external)]
        pub enum Value<'a> {
            #[wire(tag = 0)]
            Byte(u8),
            #[wire(tag = 4)]
            Str(#[wire(str(prefix = u8))] &'a str),
        }
        "#
    ));
}

#[test]
fn enum_chosen_by_the_magic_each_variant_starts_with() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(magic = PREFIX)]
        pub enum Request<'a> {
            #[wire(magic = b"getstatus")]
            Status(#[wire(str(rest))] Text<'a>),
            #[wire(magic = GETINFO)]
            Info {
                #[wire(str(until = b'\n', or_end))]
                challenge: Text<'a>,
            },
        }
        "#
    ));
}

#[test]
fn nested_value_that_must_fill_its_frame() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", ctx(requested: ChunkSet))]
        pub struct QueryResponse<'a> {
            pub challenge: u32,
            #[wire(len(prefix = u16), ctx = requested)]
            pub chunks: Chunks<'a>,
        }
        "#
    ));
}

#[test]
fn tlv_enum_whose_bodies_must_fill_their_frames() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", tag = u8, len = u16)]
        pub enum Record<'a> {
            #[wire(tag = 1)]
            Name(#[wire(str(prefix = u8))] &'a str),
            #[wire(tag = 2)]
            Players { count: u16, #[wire(count = *count)] names: Vec<Name<'a>> },
        }
        "#
    ));
}

#[test]
fn nul_terminated_text_and_bytes_then_a_trailing_field() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little")]
        pub struct Info<'a> {
            #[wire(str(nul))]
            pub name: &'a str,
            #[wire(str(nul, encoding = "latin1", max = 64))]
            pub map: String,
            #[wire(bytes(nul))]
            pub keywords: &'a [u8],
            #[wire(trailing)]
            pub challenge: Option<i32>,
        }
        "#
    ));
}

#[test]
fn an_option_present_when_its_marker_comes_next() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little", ctx(len: u8))]
        pub struct Wide {
            #[wire(if_next = b"\x01")]
            pub stray: Option<Stray>,
            #[wire(count = len)]
            pub units: Vec<u16>,
        }
        "#
    ));
}

#[test]
fn text_ended_by_a_byte_quoted_text_and_decimal_numbers() {
    insta::assert_snapshot!(expand(
        r#"
        pub struct Line<'a> {
            #[wire(dec(until = b' '))]
            pub score: i32,
            #[wire(str(quoted, encoding = "windows1252", max = 64))]
            pub name: Cow<'a, str>,
            #[wire(bytes(until = b'\n'))]
            pub extra: &'a [u8],
        }
        "#
    ));
}

#[test]
fn view_with_computed_count_and_cycled_element_context() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little", view = TableView)]
        pub struct Table<'a> {
            #[wire(computed = columns.count())]
            pub column_count: u8,
            #[wire(count = *column_count)]
            pub columns: Vec<Column<'a>>,
            #[wire(count(prefix = u16), each_ctx = |column| column, cycle = *column_count)]
            pub cells: Vec<Cell<'a>>,
            #[wire(view)]
            pub footer: Footer<'a>,
        }
        "#
    ));
}

#[test]
fn lists_ended_by_a_nul_byte() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "big", ctx(limit: usize))]
        pub struct Reply<'a> {
            #[wire(until_nul, max_count = limit)]
            pub pairs: Vec<KeyValue<'a>>,
            #[wire(until_nul(or_end), min_count = 1, str(nul))]
            pub names: Vec<Text<'a>>,
        }
        "#
    ));
}

#[test]
fn lists_and_text_ended_by_a_byte_string_or_before_a_byte() {
    insta::assert_snapshot!(expand(
        r#"
        pub struct Line<'a> {
            #[wire(before = b'"', max_count = 8, dec(until = b' '))]
            pub numbers: Vec<i64>,
            #[wire(str(quoted))]
            pub name: Text<'a>,
            #[wire(until(b"\r\n", or_end), bytes(until = b"; ", or_end))]
            pub fields: Vec<&'a [u8]>,
            #[wire(str(until = b"\r\n", or_end))]
            pub rest: Text<'a>,
        }
        "#
    ));
}

#[test]
fn text_and_lists_ended_by_any_of_several_byte_strings() {
    insta::assert_snapshot!(expand(
        r#"
        pub struct Request<'a> {
            #[wire(if_next = [b' ', b'\t'])]
            pub spaced: Option<Spaced>,
            #[wire(until([b"\r\n", b'\n'], or_end), bytes(until = [b';', LIST_END]))]
            pub words: Vec<&'a [u8]>,
            #[wire(str(until = [b"\n", b"\n\0", b"\0"], or_end, max = 64))]
            pub challenge: Text<'a>,
        }
        "#
    ));
}

#[test]
fn text_and_numbers_that_leave_their_terminator_to_the_next_field() {
    insta::assert_snapshot!(expand(
        r#"
        pub struct Part<'a> {
            #[wire(bytes(until = b"\\queryid\\"))]
            pub pairs: &'a [u8],
            #[wire(dec(until = b'.'))]
            pub query_id: u32,
            #[wire(dec(before = b'\\', or_end, max = 10))]
            pub part: u32,
            #[wire(str(before = [b"\r\n", b'\n']))]
            pub line: &'a str,
            #[wire(trailing)]
            pub last: Option<Final>,
        }
        "#
    ));
}

#[test]
fn bit_fields_flag_byte_and_ranges() {
    insta::assert_snapshot!(expand(
        r#"
        #[wire(endian = "little", magic = b"\xfe\xff\xff\xff")]
        pub struct Part {
            #[wire(range)]
            pub id: u32,
            #[wire(bit_width = 1)]
            pub last: bool,
            #[wire(bit_width = 7, range)]
            pub number: u8,
            #[wire(flags)]
            pub flags: u8,
            #[wire(flag(flags, 0x80))]
            pub port: Option<u16>,
            #[wire(flag(flags, EDF_GAME_ID))]
            pub game_id: Option<u64>,
        }
        "#
    ));
}

#[test]
fn every_error_of_a_declaration_is_reported() {
    let found = errors(
        r#"
        #[wire(endian = "middle", tag = u8)]
        pub struct Bad {
            #[wire(str(prefix = u9))]
            pub a: u32,
            #[wire(colour = 3, count(prefix = u8))]
            pub b: u8,
        }
        "#,
    );
    assert_eq!(
        found,
        [
            // Parsing and building first, then the rules across attributes.
            "unknown byte order \"middle\", expected one of: \"big\", \"little\"",
            "prefix must be one of u8, u16, u32, u64, varint, leb128, found `u9`",
            "unknown wire attribute `colour` on a field, expected one of: endian, str, bytes, dec, \
             len, count, until_end, until_nul, until, before, min_count, max_count, ctx, each_ctx, cycle, \
             when, trailing, if_next, bits, bit_width, flags, flag, range, default, computed, view, varint, packed_int, crc32",
            "`str` applies to `&'a str`, `String`, `Cow<'a, str>` and `Text<'a>`, not `u32`",
            "`tag` applies to enums only",
            "`count` applies to `Vec` fields, and `u8` is not one",
        ]
    );
}
