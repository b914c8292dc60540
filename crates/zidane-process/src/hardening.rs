//! Hardening the process that runs a model's commands: what it holds (the host's
//! environment, tokens, keys in memory) must not be read by the commands it starts,
//! even where they run unsandboxed.

/// Closes this process to inspection by other processes of the same user: no core
/// dumps, and on Linux not dumpable (its `/proc/<pid>/environ`, `mem` and `ptrace`
/// need privilege), on macOS no debugger may attach. The commands it starts are not
/// affected: `exec` makes each dumpable again. On Windows it does nothing: there a
/// process of the same user may still open this one.
///
/// Call it first thing in a binary that runs a model's commands; `zidane` and
/// `zidane mcp` do.
///
/// ```no_run
/// zidane_process::harden_process().expect("hardened");
/// ```
pub fn harden_process() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        crate::sys::harden()
    }
    #[cfg(not(unix))]
    {
        Ok(())
    }
}
