//! Whether a process seen once still runs: the answer the process table gives and
//! everything that ends or sweeps processes reads.

/// Whether a process we once saw (pid + start time) still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcLiveness {
    /// It runs (or sleeps, or is stopped): not a zombie.
    Alive,
    /// It exited (even if its zombie still waits for a reap), or its pid now belongs to
    /// another process.
    Gone,
    /// It could not be told (its stat could not be read for a reason other than absence).
    Unknown,
}
