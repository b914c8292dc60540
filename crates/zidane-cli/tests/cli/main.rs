//! End-to-end tests of the `zidane` binary: `zidane mcp` over stdio and streamable HTTP,
//! by raw JSON-RPC and by a foreign client (the Python `mcp` SDK). One binary.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod support;

mod http;
mod python;
mod stdio;
