//! Minecraft's formatted text as plain text: `§` codes removed, chat components flattened.

/// `text` without its `§` formatting codes (`§` and the one character after it: colours
/// `0`-`f`, styles `k`-`o`, reset `r`, and whatever later versions add).
///
/// ```
/// use query_net::engines::minecraft::text::strip_codes;
///
/// assert_eq!(strip_codes("\u{a7}aA \u{a7}lMinecraft\u{a7}r Server"), "A Minecraft Server");
/// assert_eq!(strip_codes("ends with \u{a7}"), "ends with ");
/// ```
pub fn strip_codes(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{a7}' {
            chars.next();
        } else {
            plain.push(c);
        }
    }
    plain
}
