//! Integration tests of `zidane-wire`, compiled as one binary.

// Helpers outside `#[test]` functions unwrap too: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod banner;
mod blocks;
mod errors;
mod paint;
mod replay;
mod roundtrip;
mod session;
mod support;
