//! One module per command.

pub mod bulk;
pub mod decode;
pub mod demo;
pub mod exporter;
pub mod games;
pub mod query;
pub mod serve;
