//! One responder for all four protocols on one port, dispatching on the first bytes.
