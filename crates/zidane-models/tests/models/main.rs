//! The providers over real HTTP, against the scripted server on 127.0.0.1. One file
//! per behaviour, all compiled as one binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod agent;
mod cancel;
mod errors;
mod real_server;
mod split;
mod stream;
mod support;
