//! bubblewrap, the sandbox `zidane` and `zidane mcp` run their commands in on Linux (on by
//! default), so the tests can rely on it: installed with apt-get where it is missing,
//! quick when it is there.

use std::process::Command;

/// Makes sure `bwrap` runs; installs Debian's `bubblewrap` with apt-get (as CI runs,
/// root) otherwise. Only on Linux: the other platforms have their own sandbox or none.
pub fn ensure() -> Result<(), String> {
    if !cfg!(target_os = "linux") || present() {
        return Ok(());
    }
    println!("==> bubblewrap is missing: apt-get install bubblewrap");
    crate::apt::install("bubblewrap", &["bubblewrap"])?;
    if present() {
        Ok(())
    } else {
        Err("bubblewrap: installed, but `bwrap --version` still fails".to_owned())
    }
}

fn present() -> bool {
    Command::new("bwrap")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}
