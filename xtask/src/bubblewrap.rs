//! bubblewrap, the sandbox `zidane` and `zidane mcp` run their commands in on Linux (on by
//! default), so the tests can rely on it: installed with apt-get where it is missing,
//! quick when it is there.

/// Makes sure `bwrap` runs; installs Debian's `bubblewrap` with apt-get (as CI runs,
/// root) otherwise. Only on Linux: the other platforms have their own sandbox or none.
pub fn ensure() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    crate::apt::ensure("bwrap", "--version", "bubblewrap")
}
