//! The first line a child prints, waited for with a bound: how a test learns that a
//! server it started (a `zidane-worker`'s `ready …` line) is ready, without hanging on
//! one that never says so.

use std::io::{BufRead as _, BufReader};
use std::process::Child;
use std::time::Duration;

/// The first line `child` writes to its piped stdout (its line break kept), or `None`
/// when none comes within `wait`. The rest of its stdout is left unread; a child
/// without a piped stdout has no line.
pub fn first_line(child: &mut Child, wait: Duration) -> Option<String> {
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(wait).ok()
}

// `sh` and `sleep` are Unix's.
#[cfg(all(test, unix))]
mod tests {
    use std::process::{Command, Stdio};

    use super::*;

    #[test]
    fn the_first_line_comes_and_a_silent_child_gives_none() {
        let mut says = Command::new("sh")
            .args(["-c", "echo ready here; echo more"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        assert_eq!(
            first_line(&mut says, Duration::from_secs(10)).as_deref(),
            Some("ready here\n")
        );
        let _ = says.wait();
        let mut silent = Command::new("sleep")
            .arg("10")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        assert_eq!(first_line(&mut silent, Duration::from_millis(100)), None);
        let _ = silent.kill();
        let _ = silent.wait();
    }
}
