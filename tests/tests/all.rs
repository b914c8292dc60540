//! One test binary for every end-to-end suite (one link, fewer minutes on two cores).

// Helpers shared by the tests panic like the tests do: a panic is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
