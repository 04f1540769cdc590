//! OneQuery V2 challenge tokens, stateless as in the reference server.
//!
//! A token is `window (i32, big-endian) | 4 zero bytes | first 24 bytes of
//! HMAC-SHA256(secret, window_BE || client IP bytes)`, with `window = floor(unix_seconds / 30)`.
//! The server keeps no per-client state: it recomputes the MAC to check a token. A token is bound
//! to the client's IP address (not its port), may be reused while valid, and is valid in its own
//! window and the three after it (90 to 120 seconds). The window is written big-endian although
//! the rest of OneQuery is little-endian: that is what the reference server does.

use std::net::IpAddr;
use std::time::{SystemTime, UNIX_EPOCH};

use subtle::ConstantTimeEq;

use crate::challenge::MacKey;

/// Length of a token on the wire, as the packet declarations have it.
pub const TOKEN_LEN: usize = query_specs::onequery::TOKEN_LEN;
/// Seconds per window.
pub const WINDOW_SECS: u64 = 30;
/// Windows a token stays valid: the one it was issued in and the three before now.
pub const VALID_WINDOWS: i32 = 4;

/// How many MAC bytes a token carries.
const MAC_LEN: usize = 24;

/// A challenge token.
pub type Token = [u8; TOKEN_LEN];

/// The window number of a moment: `floor(unix_seconds / 30)`, saturating at the ends of `i32`.
pub fn window_at(wall: SystemTime) -> i32 {
    let seconds = match wall.duration_since(UNIX_EPOCH) {
        Ok(since) => since.as_secs(),
        Err(_) => 0,
    };
    i32::try_from(seconds / WINDOW_SECS).unwrap_or(i32::MAX)
}

/// Issues and checks tokens with one secret.
///
/// ```
/// use std::time::SystemTime;
/// use query_net::engines::onequery::token::TokenKey;
///
/// let key = TokenKey::random();
/// let client = "203.0.113.9".parse().unwrap();
/// let token = key.issue(client, SystemTime::now());
/// assert!(key.verify(&token, client, SystemTime::now()));
/// assert!(!key.verify(&token, "203.0.113.10".parse().unwrap(), SystemTime::now()));
/// ```
#[derive(Clone)]
pub struct TokenKey {
    key: MacKey,
}

impl TokenKey {
    /// A key with a random secret, as a server makes at start: restarting invalidates tokens.
    pub fn random() -> Self {
        TokenKey {
            key: MacKey::random(),
        }
    }

    /// A key with a given secret (tests, or several servers that must accept each other's tokens).
    pub fn from_secret(secret: &[u8; 32]) -> Self {
        TokenKey {
            key: MacKey::from_secret(secret),
        }
    }

    /// The token for `client` at the moment `wall`.
    pub fn issue(&self, client: IpAddr, wall: SystemTime) -> Token {
        self.token_for_window(window_at(wall), client)
    }

    /// The token for `client` in a given window.
    pub fn token_for_window(&self, window: i32, client: IpAddr) -> Token {
        let window_be = window.to_be_bytes();
        let digest = self.key.digest_address(&window_be, client, &[]);

        let mut token = [0u8; TOKEN_LEN];
        token[..4].copy_from_slice(&window_be);
        token[8..].copy_from_slice(&digest[..MAC_LEN]);
        token
    }

    /// Whether `token` was issued to `client` at most three windows before `wall`. The MAC is
    /// compared in constant time; the window and zero bytes are public and checked first.
    pub fn verify(&self, token: &[u8], client: IpAddr, wall: SystemTime) -> bool {
        let Ok(token) = <&Token>::try_from(token) else {
            return false;
        };
        let window = i32::from_be_bytes([token[0], token[1], token[2], token[3]]);
        let now = window_at(wall);
        if window > now || window < now.saturating_sub(VALID_WINDOWS - 1) {
            return false;
        }
        let expected = self.token_for_window(window, client);
        bool::from(expected.ct_eq(token))
    }
}

impl std::fmt::Debug for TokenKey {
    /// Never shows the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    const EXAMPLE_WINDOW: i32 = 58_000_000;

    fn example_key() -> TokenKey {
        let secret: [u8; 32] = std::array::from_fn(|i| i as u8);
        TokenKey::from_secret(&secret)
    }

    fn localhost() -> IpAddr {
        "127.0.0.1".parse().unwrap()
    }

    /// The worked example from the protocol notes, shipped as a fixture of the specs crate.
    fn example_token() -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../specs/fixtures/onequery/onequery_token_example.hex");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        text.split_whitespace()
            .map(|pair| u8::from_str_radix(pair, 16).expect("hex byte"))
            .collect()
    }

    fn wall_in_window(window: i32, offset_secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(window as u64 * WINDOW_SECS + offset_secs)
    }

    #[test]
    fn reproduces_the_worked_example_byte_for_byte() {
        let expected = example_token();
        assert_eq!(expected.len(), TOKEN_LEN);
        let token = example_key().token_for_window(EXAMPLE_WINDOW, localhost());
        assert_eq!(token.as_slice(), expected.as_slice());
        let issued = example_key().issue(localhost(), wall_in_window(EXAMPLE_WINDOW, 29));
        assert_eq!(issued.as_slice(), expected.as_slice());
    }

    #[test]
    fn accepts_the_example_for_four_windows_then_rejects_it() {
        let key = example_key();
        let token = example_token();
        for later in 0..VALID_WINDOWS {
            let wall = wall_in_window(EXAMPLE_WINDOW + later, 15);
            assert!(key.verify(&token, localhost(), wall), "window +{later}");
        }
        let expired = wall_in_window(EXAMPLE_WINDOW + VALID_WINDOWS, 0);
        assert!(!key.verify(&token, localhost(), expired));
        let before_issue = wall_in_window(EXAMPLE_WINDOW - 1, 29);
        assert!(!key.verify(&token, localhost(), before_issue));
    }

    #[test]
    fn rejects_another_client_address() {
        let wall = wall_in_window(EXAMPLE_WINDOW, 0);
        let key = example_key();
        let token = example_token();
        assert!(!key.verify(&token, "127.0.0.2".parse().unwrap(), wall));
        assert!(!key.verify(&token, "::1".parse().unwrap(), wall));
    }

    #[test]
    fn ipv4_mapped_client_gets_the_ipv4_token() {
        let wall = wall_in_window(EXAMPLE_WINDOW, 0);
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(example_key().verify(&example_token(), mapped, wall));
    }

    #[test]
    fn rejects_any_flipped_bit() {
        let key = example_key();
        let wall = wall_in_window(EXAMPLE_WINDOW, 0);
        let token = example_token();
        for byte in 0..TOKEN_LEN {
            for bit in 0..8 {
                let mut bad = token.clone();
                bad[byte] ^= 1 << bit;
                assert!(
                    !key.verify(&bad, localhost(), wall),
                    "byte {byte} bit {bit}"
                );
            }
        }
    }

    #[test]
    fn rejects_wrong_lengths_and_another_secret() {
        let key = example_key();
        let wall = wall_in_window(EXAMPLE_WINDOW, 0);
        let token = example_token();
        assert!(!key.verify(&token[..31], localhost(), wall));
        assert!(!key.verify(&[], localhost(), wall));
        let mut longer = token.clone();
        longer.push(0);
        assert!(!key.verify(&longer, localhost(), wall));
        assert!(!TokenKey::from_secret(&[7; 32]).verify(&token, localhost(), wall));
    }

    #[test]
    fn random_keys_differ_and_accept_their_own_ipv6_tokens() {
        let a = TokenKey::random();
        let b = TokenKey::random();
        let client: IpAddr = "2001:db8::5".parse().unwrap();
        let now = SystemTime::now();
        let token = a.issue(client, now);
        assert!(a.verify(&token, client, now));
        assert!(!b.verify(&token, client, now));
    }

    #[test]
    fn windows_are_thirty_seconds() {
        assert_eq!(
            window_at(UNIX_EPOCH + Duration::from_secs(1_740_000_000)),
            58_000_000
        );
        assert_eq!(
            window_at(UNIX_EPOCH + Duration::from_secs(1_740_000_029)),
            58_000_000
        );
        assert_eq!(
            window_at(UNIX_EPOCH + Duration::from_secs(1_740_000_030)),
            58_000_001
        );
        assert_eq!(window_at(UNIX_EPOCH - Duration::from_secs(5)), 0);
    }
}
