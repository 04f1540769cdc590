//! Challenges a responder derives from the source address and the time, keeping nothing per
//! client: the one keyed challenge window A2S, GameSpy 3/4 and Teeworlds 0.7 share, and the
//! keyed MAC under it, which OneQuery's tokens and the RCON password check use too.
//!
//! A challenge is a keyed MAC (HMAC-SHA256) of the client's IP and port and the number of the
//! time window; it is accepted in its own window and the one after, so it lives between one and
//! two windows. Only the address it was sent to can echo it, which proves that address, and a
//! flood of new sources costs no memory. Protocols differ only in the numbers they may carry,
//! which [`KeyedChallenge::shaped`] states: A2S any non-negative 31-bit number (its `-1` means
//! none), GameSpy 3/4 any 32-bit one, as real servers send.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Issues and checks address-bound challenges; see the [module](self) docs.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use query_net::challenge::KeyedChallenge;
///
/// // Any 32-bit number whose decimal text has 6 characters or more.
/// let challenges = KeyedChallenge::new(Duration::from_secs(30))
///     .shaped(|mac| if mac.unsigned_abs() < 100_000 { mac ^ 0x4000_0000 } else { mac });
/// let client = "192.0.2.1:5000".parse().unwrap();
/// let now = SystemTime::now();
/// let issued = challenges.issue(client, now);
/// assert!(issued.to_string().len() >= 6);
/// assert!(challenges.accepts(client, issued, now + Duration::from_secs(30)));
/// assert!(!challenges.accepts(client, issued, now + Duration::from_secs(60)));
/// assert!(!challenges.accepts("192.0.2.1:5001".parse().unwrap(), issued, now));
/// ```
#[derive(Clone)]
pub struct KeyedChallenge {
    key: MacKey,
    window: Duration,
    /// Turns the MAC's 32 bits into what the protocol carries.
    shape: fn(i32) -> i32,
}

impl KeyedChallenge {
    /// Challenges valid for `window` to twice `window`, from a random secret, carried as the
    /// MAC's low 31 bits (never negative, so never the `-1` of an A2S request that has none).
    pub fn new(window: Duration) -> Self {
        Self::keyed(MacKey::random(), window)
    }

    /// Challenges from `secret` instead of a random one, so that several responders (one per
    /// core behind one address) accept each other's.
    pub fn with_secret(window: Duration, secret: &[u8; 32]) -> Self {
        Self::keyed(MacKey::from_secret(secret), window)
    }

    fn keyed(key: MacKey, window: Duration) -> Self {
        KeyedChallenge {
            key,
            window,
            shape: |mac| mac & i32::MAX,
        }
    }

    /// The same challenges, carried as `shape` makes them of the MAC's 32 bits (read as a
    /// signed number) instead of its low 31.
    #[must_use]
    pub fn shaped(mut self, shape: fn(i32) -> i32) -> Self {
        self.shape = shape;
        self
    }

    /// The same challenges from `secret`.
    #[must_use]
    pub fn rekeyed(self, secret: &[u8; 32]) -> Self {
        Self::with_secret(self.window, secret).shaped(self.shape)
    }

    /// The challenge `client` is given at `wall`.
    pub fn issue(&self, client: SocketAddr, wall: SystemTime) -> i32 {
        self.for_window(client, self.window_at(wall))
    }

    /// Whether `challenge` is the one `client` was given at `wall`'s window or the one before.
    pub fn accepts(&self, client: SocketAddr, challenge: i32, wall: SystemTime) -> bool {
        let window = self.window_at(wall);
        challenge == self.for_window(client, window)
            || window
                .checked_sub(1)
                .is_some_and(|before| challenge == self.for_window(client, before))
    }

    fn window_at(&self, wall: SystemTime) -> u64 {
        let millis = self.window.as_millis().max(1);
        let since = wall.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        u64::try_from(since.as_millis() / millis).unwrap_or(u64::MAX)
    }

    /// The challenge of `client` (IP and port: another port of the same IP cannot use it; an
    /// IPv4-mapped address is its IPv4 address) in `window`.
    fn for_window(&self, client: SocketAddr, window: u64) -> i32 {
        let digest = self.key.digest_address(
            &window.to_le_bytes(),
            client.ip(),
            &client.port().to_le_bytes(),
        );
        let first = [digest[0], digest[1], digest[2], digest[3]];
        (self.shape)(i32::from_le_bytes(first))
    }
}

impl std::fmt::Debug for KeyedChallenge {
    /// Never shows the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyedChallenge")
            .field("window", &self.window)
            .finish_non_exhaustive()
    }
}

/// An HMAC-SHA256 key for what a server derives and later checks instead of keeping it
/// (challenges, tokens, a password's digest): keyed once, cloned per use instead of re-keyed.
/// `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct MacKey {
    keyed: Hmac<Sha256>,
}

impl MacKey {
    /// A key from a random secret: what a server issued before it restarted is refused.
    pub(crate) fn random() -> Self {
        let mut secret = [0u8; 32];
        rand::fill(&mut secret);
        Self::from_secret(&secret)
    }

    /// A key from `secret`, so that several servers accept what each other issued.
    pub(crate) fn from_secret(secret: &[u8; 32]) -> Self {
        // HMAC is defined for keys of any length, so keying cannot fail.
        let keyed = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
            .expect("HMAC accepts keys of any length");
        MacKey { keyed }
    }

    /// The MAC of `parts`, fed in order.
    pub(crate) fn digest(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut mac = self.keyed.clone();
        for part in parts {
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    /// The MAC of `before`, `ip`'s octets (an IPv4-mapped address as its IPv4 address, so
    /// that a dual-stack socket binds the same client the same way), then `after`.
    pub(crate) fn digest_address(&self, before: &[u8], ip: IpAddr, after: &[u8]) -> [u8; 32] {
        match ip.to_canonical() {
            IpAddr::V4(v4) => self.digest(&[before, &v4.octets(), after]),
            IpAddr::V6(v6) => self.digest(&[before, &v6.octets(), after]),
        }
    }
}

impl std::fmt::Debug for MacKey {
    /// Never shows the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MacKey(<secret>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs)
    }

    #[test]
    fn a_challenge_is_the_documented_mac() {
        // HMAC-SHA256 under [7; 32] of the window number (170,000,000, u64 little-endian), the
        // IPv4 octets and the port (u16 little-endian): its first four bytes as a signed
        // little-endian number, computed apart from this code.
        let challenges = KeyedChallenge::with_secret(Duration::from_secs(10), &[7; 32]);
        let client: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        assert_eq!(challenges.issue(client, at(0)), 1_043_963_129);
        let whole = challenges.shaped(|mac| mac);
        assert_eq!(whole.issue(client, at(0)), -1_103_520_519);
    }

    #[test]
    fn a_challenge_lives_one_to_two_windows_and_is_bound_to_ip_and_port() {
        // 1_700_000_000 is a multiple of 10: windows start at at(0), at(10)...
        let challenges = KeyedChallenge::with_secret(Duration::from_secs(10), &[7; 32]);
        let client: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        let issued = challenges.issue(client, at(0));
        assert!(issued >= 0);
        assert!(challenges.accepts(client, issued, at(19)));
        assert!(!challenges.accepts(client, issued, at(20)));
        assert!(!challenges.accepts("192.0.2.1:5001".parse().unwrap(), issued, at(0)));
        assert!(!challenges.accepts("192.0.2.2:5000".parse().unwrap(), issued, at(0)));
        let mapped: SocketAddr = "[::ffff:192.0.2.1]:5000".parse().unwrap();
        assert!(challenges.accepts(mapped, issued, at(0)));
    }

    #[test]
    fn a_shared_secret_gives_the_same_challenges_and_a_shape_keeps_them_in_range() {
        let client: SocketAddr = "192.0.2.1:5000".parse().unwrap();
        let one = KeyedChallenge::new(Duration::from_secs(30)).rekeyed(&[1; 32]);
        let other = KeyedChallenge::with_secret(Duration::from_secs(30), &[1; 32]);
        assert_eq!(one.issue(client, at(0)), other.issue(client, at(0)));
        let small = other.clone().shaped(|mac| mac % 99_999 + 1);
        let whole = other.clone().shaped(|mac| mac);
        let mut negative = 0;
        for port in 1..200 {
            let client = SocketAddr::from(([192, 0, 2, 1], port));
            let issued = small.issue(client, at(0));
            assert!((-99_997..=99_999).contains(&issued), "{issued}");
            assert!(small.accepts(client, issued, at(0)));
            let all_bits = whole.issue(client, at(0));
            assert_eq!(issued, all_bits % 99_999 + 1);
            // The unshaped challenge is the same MAC's low 31 bits.
            assert_eq!(other.issue(client, at(0)), all_bits & i32::MAX);
            negative += usize::from(all_bits < 0);
        }
        // The 32nd bit is the MAC's too: about half the challenges are negative.
        assert!((50..150).contains(&negative), "{negative}");
        assert!(!format!("{small:?}").contains("keyed"));
    }
}
