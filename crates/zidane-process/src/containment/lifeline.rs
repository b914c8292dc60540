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
//! The marker scan reads `/proc/<pid>/environ`, so the lifeline runs where `/proc` has
//! it (Linux). Elsewhere there is none, and the orphan sweep at the next start of a
//! host ([`sweep_orphans_on_start`](crate::ProcessContextBuilder::sweep_orphans_on_start))
//! remains the backstop.

use std::time::Duration;

use crate::containment::owner_marker::OwnerId;

/// How many times the lifeline rescans after its kills, for processes forked while it
/// was signalling. (Its script exists only where `/proc` does.)
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
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

/// The lifeline's shell script for `owner`, or `None` where there is no `/proc` to scan.
#[cfg(target_os = "linux")]
fn script(owner: OwnerId, grace: Duration) -> Option<String> {
    if !std::path::Path::new("/proc/self/environ").exists() {
        tracing::warn!("no lifeline: /proc is not mounted");
        return None;
    }
    let marker = format!("{}={}", crate::OWNER_MARKER_VAR, owner.context_prefix());
    let grace = format!("{}.{:03}", grace.as_secs(), grace.subsec_millis());
    // `exec 3<&0`: a background list's stdin is /dev/null, so the pipe travels as fd 3.
    // `grep -z` reads each environment NUL-separated, `^` anchoring at each variable.
    Some(format!(
        r#"exec 3<&0
(
  trap '' HUP INT
  cat <&3 >/dev/null
  exec 3<&-
  scan() {{ grep -lsz '^{marker}' /proc/[0-9]*/environ 2>/dev/null | sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p'; }}
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

/// Elsewhere there is no `/proc` to find marked processes in: no lifeline, and the
/// orphan sweep at a host's next start is the backstop.
#[cfg(not(target_os = "linux"))]
fn script(_owner: OwnerId, _grace: Duration) -> Option<String> {
    None
}
