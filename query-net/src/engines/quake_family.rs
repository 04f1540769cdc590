//! What the Quake-family text responders share. Quake 2's `print` and Quake 3's
//! `statusResponse` are both a backslash pair line followed by `score ping "name"` lines; both
//! responders make text sendable the same way, add the state's rules to the pair line while it
//! stays within the engine's info string, and build a player's line from the same declaration.

use std::borrow::Cow;

use indexmap::IndexMap;
use query_specs::quake3::Player;
use query_wire::kv::{FromKeyValues, ToKeyValues};
use query_wire::{Text, TextEncoding};

use crate::engines::fit;
use crate::state::{PlayerState, RuleValue};

/// A pair line's declared type, whose `#[kv(rest)]` field carries the state's rules.
pub(crate) trait PairLine: ToKeyValues + Default {
    /// Whether `key` is one the type declares, which a rule must not repeat.
    fn declares_key(key: &[u8]) -> bool;
    /// The pairs the type does not declare.
    fn rules_mut(&mut self) -> &mut Vec<(Cow<'static, str>, Cow<'static, str>)>;
}

macro_rules! pair_line {
    ($($info:ty),*) => {$(
        impl PairLine for $info {
            fn declares_key(key: &[u8]) -> bool {
                <$info as FromKeyValues<'_>>::declares_key(key)
            }

            fn rules_mut(&mut self) -> &mut Vec<(Cow<'static, str>, Cow<'static, str>)> {
                &mut self.rules
            }
        }
    )*};
}

pair_line!(
    query_specs::quake2::Info<'static>,
    query_specs::quake3::Info<'static>
);

/// `text` as it can go into a pair in `encoding`: the backslash and the newline, and
/// characters the encoding cannot represent, become `?`; cut to `max` bytes.
pub(crate) fn pair_text(text: &str, encoding: TextEncoding, max: usize) -> Cow<'static, str> {
    let sendable = fit::replace_unsendable(fit::cut(text, encoding, max), encoding, &['\\', '\n']);
    Cow::Owned(sendable.into_owned())
}

/// Appends `rules` to `info`'s pairs, in order, as long as the whole line stays within
/// `max_line` bytes in `encoding`: the first rule that would overrun it ends the list. Rules
/// with an empty key or a key `info` declares are passed over; keys and values are cut to
/// `max_text` bytes.
pub(crate) fn add_rules<I: PairLine>(
    info: &mut I,
    rules: &IndexMap<String, RuleValue>,
    encoding: TextEncoding,
    max_text: usize,
    max_line: usize,
) -> Result<(), query_wire::Error> {
    let text = |s: &str| pair_text(s, encoding, max_text);
    let mut len = info.encoded_len_with(encoding)?;
    for (key, value) in rules {
        let key = text(key);
        if key.is_empty() || I::declares_key(key.as_bytes()) {
            continue;
        }
        let value = text(&value.as_text());
        let mut rule = I::default();
        rule.rules_mut().push((key, value));
        len += rule.encoded_len_with(encoding)?;
        if len > max_line {
            break;
        }
        info.rules_mut().append(rule.rules_mut());
    }
    Ok(())
}

/// The player line of `player`: score, ping and the name in `encoding`, cut to `max_name`
/// bytes, its `"` and newlines (which would end the name or the line) replaced by `?`.
pub(crate) fn player_line(
    player: &PlayerState,
    encoding: TextEncoding,
    max_name: usize,
) -> Player<'static> {
    Player {
        score: player.score,
        ping: i64::from(player.ping),
        more: Vec::new(),
        name: Text(Cow::Owned(name_bytes(&player.name, encoding, max_name))),
        extra: Text::from_bytes(b""),
    }
}

/// A player's name in `encoding`, cut to `max` bytes, without `"` or newlines.
fn name_bytes(name: &str, encoding: TextEncoding, max: usize) -> Vec<u8> {
    let name = fit::replace_unsendable(fit::cut(name, encoding, max), encoding, &['"', '\n']);
    encoding.encode_lossy(&name).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::quake3::DEFAULT_ENCODING;

    #[test]
    fn text_loses_what_the_format_cannot_carry() {
        assert_eq!(pair_text("a\\b\nc", DEFAULT_ENCODING, 255), "a?b?c");
        assert_eq!(pair_text("abcdef", DEFAULT_ENCODING, 4), "abcd");
        assert_eq!(name_bytes("\"Ж\"", DEFAULT_ENCODING, 64), b"???");
        assert_eq!(name_bytes("é", DEFAULT_ENCODING, 64), b"\xe9");
        assert_eq!(name_bytes(&"x".repeat(100), DEFAULT_ENCODING, 64).len(), 64);
    }

    #[test]
    fn rules_stop_at_the_first_that_overruns_the_line() {
        let mut info = query_specs::quake3::Info {
            hostname: Some("h".into()),
            ..Default::default()
        };
        let rules: IndexMap<String, RuleValue> = [
            ("sv_hostname", "declared, passed over"),
            ("", "empty key, passed over"),
            ("a", "1"),
            ("b", "22"),
            ("c", "3"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), RuleValue::Text(v.to_owned())))
        .collect();
        // `\sv_hostname\h` is 14 bytes, `\a\1` 4 more, `\b\22` 5 more: 23 stops before `b`.
        add_rules(&mut info, &rules, DEFAULT_ENCODING, 255, 22).unwrap();
        assert_eq!(info.rules, [("a".into(), "1".into())]);
        let mut info = query_specs::quake3::Info::default();
        add_rules(&mut info, &rules, DEFAULT_ENCODING, 255, 64).unwrap();
        let keys: Vec<&str> = info.rules.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["a", "b", "c"]);
    }
}
