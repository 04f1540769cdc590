//! Minecraft Java Edition over TCP: the status ping of 1.7 and later, and the legacy ping of
//! older servers ([`legacy`]).

pub mod legacy;
pub mod text;

pub use legacy::{LegacyPing, LegacySession};
