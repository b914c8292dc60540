//! The integration tests of zidane-tools, compiled as one binary.

// `cfg(test)` so the helpers, like the tests, may unwrap (see clippy.toml).
#[cfg(test)]
#[path = "suite/mod.rs"]
mod suite;
