//! The lifeline: what ends a context's processes when its host dies without a word.
//!
//! A host killed with `SIGKILL` (the OOM killer, `kill -9`, a crashed parent taking its
//! children down) runs no destructor, so nothing in the host can end its tasks; they
//! and their escapees run on, re-parented to init, until a later sweep finds them. So
//! each context starts a lifeline: a small shell, in a process group of its own and
//! detached from the host (a double fork re-parents it to init), that holds the read end
//! of a pipe whose only write end the context holds. A pipe's reader sees end of file
//! the moment the last writer is gone, however it went: the host's exit, its crash, its
//! `SIGKILL`, or the context being dropped. Then the lifeline ends every process that
//! carries the context's owner marker (TERM, then KILL after the grace, rescanning until
//! none is left or its passes run out) and exits.
//!
//! The write end is opened close-on-exec, so no task inherits it (a task holding it
//! would keep its own host's lifeline from ever firing). The lifeline's own environment
//! is `PATH` alone: it carries no marker and no secret.
//!
//! The marker scan reads `/proc/<pid>/environ` on Linux; on other Unix systems it reads
//! every process's environment as `ps -E` shows it (macOS's `ps`). The orphan sweep at
//! the next start of a host
//! ([`sweep_orphans_on_start`](crate::ProcessContextBuilder::sweep_orphans_on_start))
//! remains the backstop for a lifeline that could not start or was itself killed.

use std::time::Duration;

use crate::containment::owner_marker::OwnerId;

/// How many times the lifeline rescans after its kills, for processes forked while it
/// was signalling.
const PASSES: u32 = 3;

/// A running lifeline: dropping it (with its context) closes the pipe, and the lifeline
/// ends what is left of the context's processes.
#[derive(Debug)]
pub(crate) struct Lifeline {
    /// The write end. Never written: its closing is the message.
    _write: std::io::PipeWriter,
}

impl Lifeline {
    /// Starts the lifeline of `owner`'s processes, or `None` (logged) where it cannot:
    /// no `/proc`, no `sh`, no pipe.
    pub(crate) fn start(owner: OwnerId, grace: Duration) -> Option<Self> {
        let script = script(owner, grace)?;
        let (read, write) = match std::io::pipe() {
            Ok(pipe) => pipe,
            Err(error) => {
                tracing::warn!("no lifeline: cannot make its pipe: {error}");
                return None;
            }
        };
        let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
        let mut command = std::process::Command::new("/bin/sh");
        command
            .args(["-c", &script])
            .env_clear()
            .env("PATH", path)
            .stdin(read)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        // The outer shell starts the lifeline in the background and exits at once: the
        // lifeline is init's child, never a zombie of this host.
        match command.status() {
            Ok(status) if status.success() => Some(Self { _write: write }),
            Ok(status) => {
                tracing::warn!("no lifeline: its shell exited {status}");
                None
            }
            Err(error) => {
                tracing::warn!("no lifeline: cannot start /bin/sh: {error}");
                None
            }
        }
    }
}

/// The lifeline's shell script for `owner`, or `None` where it cannot find marked
/// processes: it waits for end of file on the pipe, then ends what [`scan`] finds.
fn script(owner: OwnerId, grace: Duration) -> Option<String> {
    let marker = format!("{}={}", crate::OWNER_MARKER_ENV, owner.context_prefix());
    let scan = scan(&marker)?;
    let grace = format!("{}.{:03}", grace.as_secs(), grace.subsec_millis());
    // `exec 3<&0`: a background list's stdin is /dev/null, so the pipe travels as fd 3.
    Some(format!(
        r#"exec 3<&0
(
  trap '' HUP INT
  cat <&3 >/dev/null
  exec 3<&-
  {scan}
  pids=$(scan)
  [ -n "$pids" ] || exit 0
  kill -TERM $pids 2>/dev/null
  sleep {grace}
  n=0
  while [ $n -lt {PASSES} ]; do
    pids=$(scan)
    [ -n "$pids" ] || exit 0
    kill -KILL $pids 2>/dev/null
    n=$((n + 1))
  done
) </dev/null &
"#
    ))
}

/// The shell function `scan`, printing the pid of every process whose environment
/// holds `marker` (`VAR=prefix`) as a variable: on Linux, `grep -z` over
/// `/proc/*/environ` (each environment NUL-separated, `^` anchoring at each variable);
/// `None` when `/proc` is not mounted.
#[cfg(target_os = "linux")]
fn scan(marker: &str) -> Option<String> {
    if !std::path::Path::new("/proc/self/environ").exists() {
        tracing::warn!("no lifeline: /proc is not mounted");
        return None;
    }
    Some(format!(
        r#"scan() {{ grep -lsz '^{marker}' /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'; }}"#
    ))
}

/// The shell function `scan` without `/proc`: every process with its environment after
/// its command (`ps -A -E`, macOS's `ps`), filtered by [`PS_FILTER`].
#[cfg(not(target_os = "linux"))]
fn scan(marker: &str) -> Option<String> {
    Some(format!(
        r#"scan() {{ ps -A -E -ww -o pid= -o command= 2>/dev/null | M='{marker}' awk '{PS_FILTER}'; }}"#
    ))
}

/// The `awk` program that picks, from `ps` lines of a pid, a command and its environment,
/// the pids whose environment holds the variable in `$M` (`VAR=prefix`): it must follow
/// a space, as a variable after a command does. So neither `awk` itself, whose own
/// environment shows `M=VAR=…`, nor the lifeline's shell, whose script holds
/// `M='VAR=…'`, is ever picked. (A process whose command line holds this context's
/// marker after a space would be: only one searching for it, with its random nonce.)
#[cfg_attr(target_os = "linux", allow(dead_code))]
const PS_FILTER: &str = r#"index($0, " " ENVIRON["M"]) { print $1 }"#;

#[cfg(test)]
mod tests {
    use super::PS_FILTER;

    /// The filter over lines as `ps -A -E` prints them (pid, command, environment),
    /// run by this machine's `awk` as the lifeline's shell runs it.
    #[test]
    fn the_ps_filter_picks_marked_processes_and_never_itself() {
        let marker = "ZIDANE_TASK_OWNER=z1:42:7:00000000000000ff:";
        let lines = [
            format!("  101 sleep 600 PATH=/usr/bin {marker}bash_1"),
            format!("  102 sh -c setsid sleep 600 HOME=/root {marker}bash_2 TERM=dumb"),
            "  103 sleep 600 PATH=/usr/bin ZIDANE_TASK_OWNER=z1:42:7:00000000000000fe:bash_1"
                .to_owned(),
            format!("  104 awk {PS_FILTER} M={marker} PATH=/usr/bin"),
            format!("  105 /bin/sh -c exec 3<&0 ... M='{marker}' awk ... PATH=/usr/bin"),
        ];
        let mut awk = std::process::Command::new("awk")
            .arg(PS_FILTER)
            .env("M", marker)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(
            awk.stdin.as_mut().unwrap(),
            (lines.join("\n") + "\n").as_bytes(),
        )
        .unwrap();
        let out = awk.wait_with_output().unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), "101\n102\n");
    }
}
