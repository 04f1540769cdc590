//! Test utilities (feature `test-util`): a lossy loopback proxy and a tiny echo protocol.

pub mod echo;
pub mod lossy;
