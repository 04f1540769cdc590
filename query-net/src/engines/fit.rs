//! Fitting a server's state into wire fields, shared by every responder: text cut to a field's
//! maximum at a character boundary, integers saturated to a narrower field.

use std::borrow::Cow;

use query_wire::TextEncoding;

/// The longest prefix of `text` that takes at most `max` bytes in `encoding`, cut between
/// characters. In the code pages every character is one byte, whatever UTF-8 takes.
pub fn cut(text: &str, encoding: TextEncoding, max: usize) -> &str {
    let end = match encoding {
        TextEncoding::Utf8 => {
            let mut end = text.len().min(max);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            end
        }
        TextEncoding::Latin1 | TextEncoding::Windows1252 | TextEncoding::Windows1251 => text
            .char_indices()
            .nth(max)
            .map_or(text.len(), |(at, _)| at),
    };
    &text[..end]
}

/// `text` with every character the format cannot carry (`banned`: its delimiters) or
/// `encoding` cannot represent replaced by `?`; borrowed when nothing needs replacing.
pub fn replace_unsendable<'t>(
    text: &'t str,
    encoding: TextEncoding,
    banned: &[char],
) -> Cow<'t, str> {
    let fits = |c: char| {
        !banned.contains(&c)
            && (c.is_ascii() || encoding.encode(c.encode_utf8(&mut [0; 4])).is_some())
    };
    if text.chars().all(fits) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(
            text.chars()
                .map(|c| if fits(c) { c } else { '?' })
                .collect(),
        )
    }
}

/// `text` cut to at most `max` UTF-8 bytes, between characters.
#[inline]
pub fn cut_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    cut(text, TextEncoding::Utf8, max)
}

/// `n` as an `i32`, the nearest value when it does not fit.
pub fn saturate_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(if n < 0 { i32::MIN } else { i32::MAX })
}

/// `n` as a `u16`, `u16::MAX` when it does not fit.
pub fn saturate_u16(n: impl TryInto<u16>) -> u16 {
    n.try_into().unwrap_or(u16::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_text_is_cut_between_characters() {
        assert_eq!(cut_utf8("abc", 5), "abc");
        assert_eq!(cut_utf8("aé", 2), "a");
        assert_eq!(cut_utf8("aé", 3), "aé");
        assert_eq!(cut_utf8("日本", 4), "日");
        assert_eq!(cut_utf8("", 0), "");
    }

    #[test]
    fn code_page_text_is_cut_by_characters() {
        assert_eq!(cut("aéb", TextEncoding::Latin1, 2), "aé");
        assert_eq!(cut("aéb", TextEncoding::Windows1251, 9), "aéb");
    }

    #[test]
    fn integers_saturate() {
        assert_eq!(saturate_i32(i64::MIN), i32::MIN);
        assert_eq!(saturate_i32(i64::MAX), i32::MAX);
        assert_eq!(saturate_i32(-5), -5);
        assert_eq!(saturate_u16(70_000u32), u16::MAX);
        assert_eq!(saturate_u16(7usize), 7);
    }
}
