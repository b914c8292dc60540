//! Debian's Chromium, in which the host tests drive the MCP Inspector's web UI
//! (headless, through `playwright-core`): installed with apt-get where it is missing,
//! quick when it is there.

use std::path::Path;
use std::process::Command;

/// Where Debian's package puts the browser; the tests look for it there.
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// Makes sure Chromium runs; installs Debian's `chromium` with apt-get (as CI runs,
/// root) otherwise.
pub fn ensure() -> Result<(), String> {
    if present() {
        return Ok(());
    }
    println!("==> chromium is missing: apt-get install chromium");
    crate::apt::install("chromium", &["chromium"])?;
    if present() {
        Ok(())
    } else {
        Err(format!(
            "chromium: installed, but `{CHROMIUM} --version` still fails"
        ))
    }
}

fn present() -> bool {
    Path::new(CHROMIUM).exists()
        && Command::new(CHROMIUM)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
}
