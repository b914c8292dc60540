//! tmux, which the `zidane` binary's end-to-end tests drive as a real terminal: installed
//! with apt-get where it is missing, quick when it is there.

/// Makes sure `tmux` runs; installs it with apt-get (as CI runs, root) otherwise.
pub fn ensure() -> Result<(), String> {
    crate::apt::ensure("tmux", "-V", "tmux")
}
