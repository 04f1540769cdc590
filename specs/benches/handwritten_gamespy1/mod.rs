//! The baseline: GameSpy v1 reassembly and reply decoding written by hand for speed.
//!
//! [`Parts`] holds the datagrams of one reply, copied into a single buffer (the caller's
//! receive buffer is reused, so the bytes must be kept, as `Reassembly` keeps them), with their
//! part numbers in a small sorted list. [`Parts::reply`] walks the held bytes twice, without
//! materialising the pairs: once to find which numbers have a player key (a player's unknown
//! keys, `mesh_N`, belong to it only if it exists) and which have a `teamname_N`, creating
//! those rows in index order; once to fill the fields. Values are parsed
//! in place (numbers from their digits), text decoded by `TextEncoding::decode` (borrowed when
//! ASCII). Failure is `None`, without the offset and field path the derived decoder's errors
//! carry.
//!
//! It makes the checks and follows the rules the derived code does, and no others: the pairs'
//! syntax, the trailer (`\queryid\X.Y` with `Y` in `1..=MAX_PARTS`, the first `\final\`), a
//! first part with no pair besides the markers refused, other query ids and duplicates
//! dropped, parts after the final one left out; in the reply the first of each named key wins
//! and later ones land in the rules, indexed keys go to players (`player`, `playername`,
//! `frags`, `score`, `ping`, `team`, `kills`, `deaths`, or any key of an existing player),
//! teams (`teamname` or a `team` prefix) or the rules. It builds the same
//! `query_specs::gamespy1::Assembled` value.

use std::borrow::Cow;

use query_specs::gamespy1::{
    Assembled, Player, Pushed, Reply, Team, ENCODING, FINAL_KEY, MAX_PARTS, QUERYID_KEY,
};

/// The parts of one reply as they arrive.
#[derive(Debug, Default)]
pub struct Parts {
    /// Every held datagram, one after the other.
    bytes: Vec<u8>,
    /// (part number, start, end) in `bytes`, sorted by part number.
    held: Vec<(u32, usize, usize)>,
    query_id: Option<u32>,
    total: Option<u32>,
}

/// `\key\value` pairs of a datagram, assumed well formed (checked by [`Parts::push`]).
struct PairsIter<'a> {
    rest: &'a [u8],
}

impl<'a> Iterator for PairsIter<'a> {
    type Item = (&'a [u8], &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        // `rest` starts at a delimiter, or is empty.
        let body = self.rest.get(1..)?;
        if body.is_empty() {
            return None;
        }
        let k = delimiter(body)?;
        let (key, after) = (&body[..k], &body[k + 1..]);
        let v = delimiter(after).unwrap_or(after.len());
        self.rest = &after[v..];
        Some((key, &after[..v]))
    }
}

/// The first delimiter in `bytes`. Keys and values are a few bytes long, so a plain loop beats
/// `memchr`'s set-up.
#[inline]
fn delimiter(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\\')
}

#[inline]
fn pairs(datagram: &[u8]) -> PairsIter<'_> {
    PairsIter { rest: datagram }
}

/// ASCII whitespace trimmed from both ends, as the derived numbers are.
#[inline]
fn trim(raw: &[u8]) -> &[u8] {
    raw.trim_ascii()
}

/// Digits with an optional sign, as `str::parse` takes them: `(negative, magnitude)`.
#[inline]
fn digits(raw: &[u8], signed: bool) -> Option<(bool, u64)> {
    let (negative, digits) = match raw {
        [b'+', rest @ ..] => (false, rest),
        [b'-', rest @ ..] if signed => (true, rest),
        _ => (false, raw),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n = 0u64;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + u64::from(d);
    }
    Some((negative, n))
}

#[inline]
fn unsigned<T: TryFrom<u64>>(raw: &[u8]) -> Option<T> {
    let (_, n) = digits(trim(raw), false)?;
    T::try_from(n).ok()
}

#[inline]
fn int32(raw: &[u8]) -> Option<i32> {
    let (negative, n) = digits(trim(raw), true)?;
    let n = i64::try_from(n).ok()?;
    i32::try_from(if negative { -n } else { n }).ok()
}

#[inline]
fn boolean(raw: &[u8]) -> Option<bool> {
    let word = trim(raw);
    if word == b"1" || word.eq_ignore_ascii_case(b"true") {
        Some(true)
    } else if word == b"0" || word.eq_ignore_ascii_case(b"false") {
        Some(false)
    } else {
        None
    }
}

#[inline]
fn text(raw: &[u8]) -> Option<Cow<'_, str>> {
    ENCODING.decode(raw)
}

/// `X.Y`, or a bare `X` (part 1).
fn query_id(raw: &[u8]) -> Option<(u32, u32)> {
    let raw = trim(raw);
    match raw.iter().position(|&b| b == b'.') {
        Some(dot) => Some((unsigned(&raw[..dot])?, unsigned(&raw[dot + 1..])?)),
        None => Some((unsigned(raw)?, 1)),
    }
}

/// `key_N` split into `key` and `N`, as the derived grouping splits it.
#[inline]
fn split_index(key: &[u8]) -> Option<(&[u8], usize)> {
    let at = key.iter().rposition(|&b| b == b'_')?;
    let (base, digits) = (&key[..at], &key[at + 1..]);
    if base.is_empty()
        || !(1..=9).contains(&digits.len())
        || (digits.len() > 1 && digits[0] == b'0')
    {
        return None;
    }
    let mut n = 0usize;
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        n = n * 10 + usize::from(d);
    }
    Some((base, n))
}

#[inline]
fn is_player_key(base: &[u8]) -> bool {
    matches!(
        base,
        b"player" | b"playername" | b"frags" | b"score" | b"ping" | b"team" | b"kills" | b"deaths"
    )
}

/// The row with `index` in rows sorted by index, created in place when absent; rows usually
/// come in order, so the last one is tried first.
#[inline]
fn row<T>(
    rows: &mut Vec<T>,
    index: usize,
    of: impl Fn(&T) -> usize,
    new: impl FnOnce() -> T,
) -> &mut T {
    let at = match rows.last().map(&of) {
        Some(last) if last == index => rows.len() - 1,
        Some(last) if last < index => {
            rows.push(new());
            rows.len() - 1
        }
        None => {
            rows.push(new());
            0
        }
        Some(_) => match rows.binary_search_by_key(&index, &of) {
            Ok(at) => at,
            Err(at) => {
                rows.insert(at, new());
                at
            }
        },
    };
    &mut rows[at]
}

#[inline]
fn find<T>(rows: &mut [T], index: usize, of: impl Fn(&T) -> usize) -> Option<&mut T> {
    match rows.last().map(&of) {
        Some(last) if last == index => rows.last_mut(),
        _ => match rows.binary_search_by_key(&index, of) {
            Ok(at) => Some(&mut rows[at]),
            Err(_) => None,
        },
    }
}

/// Keeps `value` in `slot` if it is the first, otherwise pushes the pair into `rest`.
macro_rules! first_or_rest {
    ($slot:expr, $parse:expr, $key:expr, $raw:expr, $rest:expr) => {
        if $slot.is_none() {
            $slot = Some($parse($raw)?);
        } else {
            $rest.push((text($key)?, text($raw)?));
        }
    };
}

impl Parts {
    pub fn new() -> Self {
        Parts::default()
    }

    /// Adds one datagram; `None` when it is malformed.
    pub fn push(&mut self, datagram: &[u8]) -> Option<Pushed> {
        // One walk checks the syntax (a delimiter first, no key without its value) and reads
        // the trailer.
        if datagram.first().is_some_and(|&b| b != b'\\') {
            return None;
        }
        let (mut id, mut is_final, mut only_markers) = (None, false, true);
        let mut rest = datagram;
        while let Some(body) = rest.get(1..).filter(|b| !b.is_empty()) {
            let k = delimiter(body)?;
            let (key, after) = (&body[..k], &body[k + 1..]);
            let v = delimiter(after).unwrap_or(after.len());
            rest = &after[v..];
            if key == QUERYID_KEY {
                if id.is_none() {
                    id = Some(query_id(&after[..v])?);
                }
            } else if key == FINAL_KEY {
                is_final = true;
            } else {
                only_markers = false;
            }
        }
        let (id, part) = match id {
            Some((id, part)) => (Some(id), part),
            None => (None, 1),
        };
        if part == 0 || part > MAX_PARTS || (part == 1 && only_markers) {
            return None;
        }
        if let (Some(held), Some(id)) = (self.query_id, id) {
            if held != id {
                return Some(Pushed::OtherQuery);
            }
        }
        let at = match self.held.binary_search_by_key(&part, |h| h.0) {
            Ok(_) => return Some(Pushed::Duplicate),
            Err(at) => at,
        };
        let start = self.bytes.len();
        self.bytes.extend_from_slice(datagram);
        self.held.insert(at, (part, start, self.bytes.len()));
        if self.query_id.is_none() {
            self.query_id = id;
        }
        if is_final && self.total.is_none() {
            self.total = Some(part);
        }
        Some(Pushed::New)
    }

    /// The held parts up to the final one, in part order, without the markers.
    fn pairs(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let total = self.total;
        self.held
            .iter()
            .take_while(move |h| total.is_none_or(|n| h.0 <= n))
            .flat_map(|&(_, start, end)| pairs(&self.bytes[start..end]))
            .filter(|(key, _)| *key != QUERYID_KEY && *key != FINAL_KEY)
    }

    /// Decodes what arrived; `None` when a value does not parse.
    pub fn reply(&self) -> Option<Assembled<'_>> {
        Some(Assembled {
            reply: self.decode()?,
            complete: self.total.is_some_and(|n| {
                self.held.len() >= n as usize
                    && self.held[..n as usize]
                        .iter()
                        .zip(1..)
                        .all(|(h, p)| h.0 == p)
            }),
            missing_parts: self.missing_parts(),
            query_id: self.query_id,
        })
    }

    fn missing_parts(&self) -> Vec<u32> {
        let last = self
            .total
            .or_else(|| self.held.last().map(|h| h.0))
            .unwrap_or(0);
        if self.held.len() >= last as usize
            && self.held[..last as usize]
                .iter()
                .zip(1..)
                .all(|(h, p)| h.0 == p)
        {
            return Vec::new();
        }
        (1..=last)
            .filter(|p| self.held.binary_search_by_key(p, |h| h.0).is_err())
            .collect()
    }

    fn decode(&self) -> Option<Reply<'_>> {
        let mut reply = Reply::default();
        // Pass 1: the rows, from the keys that make one.
        for (key, _) in self.pairs() {
            if let Some((base, n)) = split_index(key) {
                if is_player_key(base) {
                    row(
                        &mut reply.players,
                        n,
                        |p| p.index,
                        || Player {
                            index: n,
                            ..Player::default()
                        },
                    );
                } else if base == b"teamname" {
                    row(
                        &mut reply.teams,
                        n,
                        |t| t.index,
                        || Team {
                            index: n,
                            ..Team::default()
                        },
                    );
                }
            }
        }
        // Pass 2: the values.
        let r = &mut reply;
        for (key, raw) in self.pairs() {
            match key {
                b"gamename" => first_or_rest!(r.game_name, text, key, raw, r.rules),
                b"gamever" => first_or_rest!(r.game_version, text, key, raw, r.rules),
                b"hostname" => first_or_rest!(r.hostname, text, key, raw, r.rules),
                b"hostport" => first_or_rest!(r.host_port, unsigned, key, raw, r.rules),
                b"mapname" => first_or_rest!(r.map_name, text, key, raw, r.rules),
                b"gametype" => first_or_rest!(r.game_type, text, key, raw, r.rules),
                b"gamemode" => first_or_rest!(r.game_mode, text, key, raw, r.rules),
                b"numplayers" => first_or_rest!(r.num_players, unsigned, key, raw, r.rules),
                b"maxplayers" => first_or_rest!(r.max_players, unsigned, key, raw, r.rules),
                b"password" => first_or_rest!(r.password, boolean, key, raw, r.rules),
                b"echo" => first_or_rest!(r.echo, text, key, raw, r.rules),
                _ => match split_index(key) {
                    Some((base, n)) if is_player_key(base) => {
                        let p = find(&mut r.players, n, |p| p.index)?;
                        match base {
                            b"player" | b"playername" => {
                                first_or_rest!(p.name, text, base, raw, p.extra)
                            }
                            b"frags" | b"score" => {
                                first_or_rest!(p.score, int32, base, raw, p.extra)
                            }
                            b"ping" => first_or_rest!(p.ping, unsigned, base, raw, p.extra),
                            b"team" => first_or_rest!(p.team, text, base, raw, p.extra),
                            b"kills" => first_or_rest!(p.kills, int32, base, raw, p.extra),
                            _ => first_or_rest!(p.deaths, int32, base, raw, p.extra),
                        }
                    }
                    Some((base, n)) if base.starts_with(b"team") => {
                        let t = row(
                            &mut r.teams,
                            n,
                            |t| t.index,
                            || Team {
                                index: n,
                                ..Team::default()
                            },
                        );
                        if base == b"teamname" {
                            first_or_rest!(t.name, text, base, raw, t.extra);
                        } else {
                            t.extra.push((text(base)?, text(raw)?));
                        }
                    }
                    Some((base, n)) => match find(&mut r.players, n, |p| p.index) {
                        Some(p) => p.extra.push((text(base)?, text(raw)?)),
                        None => r.rules.push((text(key)?, text(raw)?)),
                    },
                    None => r.rules.push((text(key)?, text(raw)?)),
                },
            }
        }
        Some(reply)
    }
}
