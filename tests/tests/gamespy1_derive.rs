//! `#[derive(KeyValues)]` beyond what GameSpy v1 declares: required, default, flag, parse,
//! skip and alias fields, raw and owned values, enums, routing of unknown indexed keys, error
//! paths and offsets, and generated code that needs no prelude.

use std::borrow::Cow;
use std::net::Ipv4Addr;

use query_specs::gamespy1::{Player, Reply};
use query_wire::kv::{FromKeyValues, ToKeyValues};
use query_wire::{ErrorKind, KeyValues, Text, TextEncoding};

#[derive(Debug, PartialEq, KeyValues)]
#[kv(encoding = "latin-1")]
struct Config<'a> {
    name: Cow<'a, str>,
    #[kv(default)]
    retries: u8,
    #[kv(flag)]
    verbose: bool,
    #[kv(parse)]
    address: Option<Ipv4Addr>,
    #[kv(key = "max", alias = "maximum", alias = "limit")]
    max: Option<u32>,
    raw: Option<Text<'a>>,
    owned: Option<String>,
    bytes: Option<&'a [u8]>,
    ratio: Option<f32>,
    #[kv(skip)]
    cache: Vec<u8>,
}

#[test]
fn every_field_kind_decodes_and_encodes() {
    let text = b"\\name\\Caf\xe9\\verbose\\yes\\address\\ 10.0.0.1\\limit\\5\\raw\\\xff\\owned\\o\\bytes\\\x01\\ratio\\0.5";
    let config = Config::from_bytes(text).unwrap();
    assert_eq!(
        config,
        Config {
            name: "Café".into(),
            retries: 0,
            verbose: true,
            address: Some(Ipv4Addr::new(10, 0, 0, 1)),
            max: Some(5),
            raw: Some(Text::from_bytes(b"\xff")),
            owned: Some("o".into()),
            bytes: Some(b"\x01"),
            ratio: Some(0.5),
            cache: Vec::new(),
        }
    );
    // Flags are written empty, aliases under the key, defaults always, skipped fields never.
    let bytes = config.to_vec().unwrap();
    assert_eq!(
        bytes,
        b"\\name\\Caf\xe9\\retries\\0\\verbose\\\\address\\10.0.0.1\\max\\5\\raw\\\xff\\owned\\o\\bytes\\\x01\\ratio\\0.5"
    );
    assert_eq!(Config::from_bytes(&bytes).unwrap(), config);
    assert_eq!(config.encoded_len().unwrap(), bytes.len());
}

#[test]
fn a_missing_required_key_names_the_field() {
    let err = Config::from_bytes(b"\\retries\\2\\other\\x").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Invalid("required key is missing"));
    assert_eq!(err.path_string(), "Config.name");
    assert_eq!(err.offset(), 18);
}

#[test]
fn bad_values_point_at_their_bytes() {
    let err = Config::from_bytes(b"\\name\\n\\address\\10.0.0").unwrap_err();
    assert_eq!(err.path_string(), "Config.address");
    assert_eq!(err.offset(), 16);
    let err = Config::from_bytes(b"\\name\\n\\retries\\  300").unwrap_err();
    assert_eq!(err.path_string(), "Config.retries");
    assert_eq!(err.offset(), 18);
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("integer out of range for u8")
    );
    let err = Config::from_bytes(b"\\name\\n\\oops").unwrap_err();
    assert_eq!(err.path_string(), "Config");
    assert_eq!(err.offset(), 8);
    // Latin-1 cannot write what it cannot represent.
    let err = Config {
        name: "Ж".into(),
        ..Config::from_bytes(b"\\name\\n").unwrap()
    }
    .to_vec()
    .unwrap_err();
    assert_eq!(err.path_string(), "Config.name");
    assert!(matches!(err.kind(), ErrorKind::InvalidText { .. }));
}

#[test]
fn the_encoding_is_a_default_not_a_rule() {
    let config = Config::from_bytes_with(b"\\name\\\xd0\x96", TextEncoding::Utf8).unwrap();
    assert_eq!(config.name, "Ж");
    assert_eq!(
        config.to_vec_with(TextEncoding::Windows1251).unwrap(),
        b"\\name\\\xc6\\retries\\0"
    );
}

/// A type without a lifetime, and without a `rest`: unknown keys are ignored.
#[derive(Debug, PartialEq, KeyValues)]
struct Counts {
    players: u32,
    #[kv(indexed)]
    slots: Vec<Slot>,
}

#[derive(Debug, PartialEq, KeyValues)]
struct Slot {
    used: bool,
}

#[test]
fn no_lifetime_no_rest_no_index_field() {
    let counts =
        Counts::from_bytes(b"\\x\\1\\players\\2\\used_4\\1\\used_7\\False\\other_4\\z").unwrap();
    assert_eq!(
        counts,
        Counts {
            players: 2,
            slots: vec![Slot { used: true }, Slot { used: false }],
        }
    );
    // Without an `index` field, elements are numbered by position.
    assert_eq!(
        counts.to_vec().unwrap(),
        b"\\players\\2\\used_0\\1\\used_1\\0"
    );
}

#[derive(Debug, PartialEq, KeyValues)]
enum Command<'a> {
    Start,
    #[kv(key = "mode", value = "fast")]
    Fast,
    #[kv(key = "mode")]
    Mode(Cow<'a, str>),
    Wait(u32),
}

#[test]
fn enums_are_one_pair() {
    assert_eq!(
        Command::from_bytes(b"\\start\\ignored").unwrap(),
        Command::Start
    );
    assert_eq!(Command::from_bytes(b"\\mode\\fast").unwrap(), Command::Fast);
    assert_eq!(
        Command::from_bytes(b"\\mode\\slow").unwrap(),
        Command::Mode("slow".into())
    );
    assert_eq!(
        Command::from_bytes(b"\\wait\\ 5").unwrap(),
        Command::Wait(5)
    );
    let err = Command::from_bytes(b"\\stop\\").unwrap_err();
    assert_eq!(err.kind(), &ErrorKind::Invalid("unknown key"));
    assert_eq!(err.offset(), 1);
    let err = Command::from_bytes(b"\\wait\\x").unwrap_err();
    assert_eq!(err.path_string(), "Command.Wait");
    assert_eq!(Command::Fast.to_vec().unwrap(), b"\\mode\\fast");
    assert_eq!(Command::Mode("x".into()).to_vec().unwrap(), b"\\mode\\x");
    let all = query_wire::kv::decode_each::<Command<'_>>(
        b"\\start\\\\wait\\1\\bad\\",
        TextEncoding::Utf8,
    )
    .unwrap_err();
    assert_eq!(all.path_string(), "Command[2]");
}

#[test]
fn unknown_indexed_keys_are_routed_and_never_dropped() {
    let text = b"\\player_0\\a\\teamname_1\\red\\teamscore_1\\9\\teamping_4\\50\\mesh_0\\m\\mesh_5\\orphan\\x_01\\lead";
    let reply = Reply::from_bytes(text).unwrap();
    // `mesh_0` joins player 0, which exists; `mesh_5` has no player 5 and stays a rule.
    assert_eq!(reply.players.len(), 1);
    assert_eq!(reply.players[0].extra, [("mesh".into(), "m".into())]);
    // `team*` keys belong to teams, declared or not, and make the team exist.
    let teams: Vec<_> = reply
        .teams
        .iter()
        .map(|t| (t.index, t.name.as_deref(), t.extra.len()))
        .collect();
    assert_eq!(teams, [(1, Some("red"), 1), (4, None, 1)]);
    assert_eq!(
        reply.rules,
        [
            (Cow::from("mesh_5"), Cow::from("orphan")),
            ("x_01".into(), "lead".into())
        ]
    );
    let bytes = reply.to_vec().unwrap();
    assert_eq!(Reply::from_bytes(&bytes).unwrap(), reply);
}

#[test]
fn encode_errors_carry_the_element_path() {
    let reply = Reply {
        players: vec![Player {
            index: 3,
            name: Some("back\\slash".into()),
            ..Player::default()
        }],
        ..Reply::default()
    };
    let err = reply.to_vec().unwrap_err();
    assert_eq!(err.path_string(), "Reply.players[3].name");
    assert_eq!(
        err.kind(),
        &ErrorKind::Invalid("a value cannot contain a backslash")
    );
    // `\player_3\back` is 14 bytes: the backslash is the 15th.
    assert_eq!(err.offset(), 14);
    let mut buf = [0u8; 8];
    let err = Reply {
        hostname: Some("long enough".into()),
        ..Reply::default()
    }
    .encode_into(&mut buf)
    .unwrap_err();
    assert!(matches!(err.kind(), ErrorKind::BufferTooSmall { .. }));
}

/// The generated code names everything by absolute path: it compiles without the prelude and
/// next to user items called `Option`, `Some`, `Ok`, `Result` and `Default`.
mod hygiene {
    #![no_implicit_prelude]
    #![allow(dead_code)]

    struct Some;
    struct Ok;
    type Result = ();
    trait Default {}
    enum Option {}

    #[derive(::query_wire::KeyValues)]
    pub struct Outer<'a> {
        #[kv(key = "n")]
        pub name: ::core::option::Option<::std::borrow::Cow<'a, str>>,
        #[kv(default)]
        pub count: u32,
        #[kv(flag)]
        pub on: bool,
        #[kv(indexed)]
        pub items: ::std::vec::Vec<Inner<'a>>,
        #[kv(rest)]
        pub rest: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
    }

    #[derive(::query_wire::KeyValues)]
    #[kv(unknown_prefix = "item")]
    pub struct Inner<'a> {
        #[kv(index)]
        pub index: usize,
        pub item: ::std::borrow::Cow<'a, str>,
        #[kv(rest)]
        pub extra: ::std::vec::Vec<(::std::string::String, ::std::string::String)>,
    }

    #[derive(::query_wire::KeyValues)]
    pub enum Verb<'a> {
        Go,
        #[kv(key = "go", value = "now")]
        GoNow,
        Say(::std::borrow::Cow<'a, str>),
        #[kv(other)]
        Other(::std::string::String, ::std::string::String),
    }
}

#[test]
fn hygienic_expansion_works() {
    use hygiene::{Outer, Verb};
    let outer = Outer::from_bytes(b"\\n\\x\\on\\\\item_2\\i\\itemcolor_2\\red\\z\\1").unwrap();
    assert_eq!(outer.name.as_deref(), Some("x"));
    assert!(outer.on);
    assert_eq!(outer.items[0].index, 2);
    assert_eq!(
        outer.items[0].extra,
        [("itemcolor".to_owned(), "red".to_owned())]
    );
    assert_eq!(outer.rest, [("z".to_owned(), "1".to_owned())]);
    assert_eq!(
        outer.to_vec().unwrap(),
        b"\\n\\x\\count\\0\\on\\\\z\\1\\item_2\\i\\itemcolor_2\\red"
    );
    assert!(matches!(
        Verb::from_bytes(b"\\go\\now").unwrap(),
        Verb::GoNow
    ));
    assert!(matches!(Verb::from_bytes(b"\\go\\").unwrap(), Verb::Go));
    assert!(
        matches!(Verb::from_bytes(b"\\hm\\m").unwrap(), Verb::Other(k, v) if k == "hm" && v == "m")
    );
}
