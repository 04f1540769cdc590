//! One module per command.

pub mod bulk;
pub mod completions;
pub mod decode;
pub mod demo;
pub mod exporter;
pub mod games;
pub mod query;
pub mod rcon;
pub mod serve;
