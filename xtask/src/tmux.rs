//! tmux, which the `zidane` binary's end-to-end tests drive as a real terminal: installed
//! with apt-get where it is missing, quick when it is there.

use std::process::Command;

/// Makes sure `tmux` runs; installs it with apt-get (as CI runs, root) otherwise.
pub fn ensure() -> Result<(), String> {
    if present() {
        return Ok(());
    }
    println!("==> tmux is missing: apt-get install tmux");
    crate::apt::install("tmux", &["tmux"])?;
    if present() {
        Ok(())
    } else {
        Err("tmux: installed, but `tmux -V` still fails".to_owned())
    }
}

fn present() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success())
}
