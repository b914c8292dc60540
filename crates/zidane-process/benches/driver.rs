//! Benchmark driver for `ProcessContext` (bench-protocol.md). Work in progress.
fn main() {}
