//! Decoded values stay small: a reply is returned by value from `from_bytes` and moved into
//! the caller's state, so every byte added to it is copied on every decode. The bounds are
//! today's sizes; growing past them is a decision to make in review, not by accident.

use std::mem::size_of;

use query_specs::{minecraft_java, sqp};
use query_wire::Error;

#[test]
fn sqp_response_stays_within_240_bytes() {
    assert!(
        size_of::<sqp::Response<'static>>() <= 240,
        "sqp::Response grew to {} bytes",
        size_of::<sqp::Response<'static>>()
    );
    // The error is one pointer, so the `Result` a caller unwraps adds at most a word.
    assert_eq!(size_of::<Error>(), size_of::<usize>());
    assert!(size_of::<Result<sqp::Response<'static>, Error>>() <= 240 + size_of::<usize>());
}

#[test]
fn minecraft_status_frames_are_a_few_words() {
    // The JSON is borrowed, not copied into the value.
    assert!(size_of::<minecraft_java::StatusResponseFrame<'static>>() <= 24);
    assert!(size_of::<minecraft_java::HandshakeFrame<'static>>() <= 32);
}
