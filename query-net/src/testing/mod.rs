//! Test utilities (feature `test-util`): a lossy loopback proxy, a tiny echo protocol, and SQP
//! responders that behave like real servers.

pub mod echo;
pub mod lossy;
pub mod sqp_servers;
