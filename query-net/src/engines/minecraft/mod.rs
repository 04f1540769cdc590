//! Minecraft Java Edition over TCP: the status ping of 1.7 and later ([`java`], the JSON read
//! by [`status`]), and the legacy ping of older servers ([`legacy`]). The
//! [driver](crate::tcp::query_minecraft) tries the first, then the second where a server
//! does not speak it.

pub mod java;
pub mod legacy;
pub mod status;
pub mod text;

pub use java::JavaSession;
pub use legacy::{LegacyPing, LegacySession};

/// The error a [`JavaSession`] ends with when the server's first byte is `FF`: a pre-1.7
/// server kicked the handshake it does not know.
pub const LEGACY_KICK: &str = "the server answered with a legacy kick (a server before 1.7)";
