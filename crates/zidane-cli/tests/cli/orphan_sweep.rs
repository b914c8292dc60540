//! What a host that died without its lifeline left running: the next `zidane mcp`, over
//! stdio or HTTP, and the next `zidane` end it as they start, and touch nothing of a
//! host that lives.
//!
//! The dead host is a `zidane mcp` whose lifeline was killed first (as the OOM killer or
//! a careless `pkill sh` might), then itself with `SIGKILL`: nothing but a sweep ends its
//! tasks, one of which left its session (`setsid`). Each test holds the sweep lock, so
//! no other test's sweep ends those orphans first, and turns the sweep its tests' binaries
//! run without ([`NO_SWEEP`]) back on.

use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use zidane_test_support::{SweepLock, alive, kill_pid, poll_until, sweep_lock};

use crate::http::start_http_with;
use crate::mcp_support::{StdioServer, UserDirBy, WAIT, assert_still_running};
use crate::support::{NO_SWEEP, OWNER_MARKER_ENV, owned_processes, wait_bounded, zidane};

/// The environment that turns the start-up sweep back on over [`NO_SWEEP`].
const SWEEP_ON: (&str, &str) = (NO_SWEEP.0, "on");

/// How often a test looks at `/proc` while it waits.
const POLL: Duration = Duration::from_millis(5);

/// Ends whatever a host left when dropped, so a failed test leaves nothing running.
pub(crate) struct Leftovers {
    host: u32,
}

impl Drop for Leftovers {
    fn drop(&mut self) {
        for pid in owned_processes(self.host)
            .into_iter()
            .chain(lifelines_of(self.host))
        {
            kill_pid(pid);
        }
    }
}

/// The sweep lock, taken off the runtime's threads (it blocks until free).
pub(crate) async fn lock() -> SweepLock {
    tokio::task::spawn_blocking(sweep_lock).await.unwrap()
}

/// The fields of `/proc/<pid>/stat` after `(comm)`: state, ppid, pgrp, session, …
fn stat_fields(pid: u32) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| Some(stat.rsplit_once(')')?.1.to_owned()))
        .map(|rest| rest.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Whether `pid` leads a session of its own: the `setsid` escapee, not a task's leader
/// (which leads only its process group).
fn leads_its_session(pid: u32) -> bool {
    stat_fields(pid).get(3) == Some(&pid.to_string())
}

/// Whether `pid` is the escapee itself, a `sleep` leading its own session: a task's
/// sandbox (bubblewrap) leads a session of its own too, from before the command runs.
fn is_the_escapee(pid: u32) -> bool {
    leads_its_session(pid)
        && std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .is_ok_and(|comm| comm.trim() == "sleep")
}

/// The lifeline of each context of `host`: the shell whose script names the contexts'
/// marker prefix. (Its `cat`, blocked on the pipe, ends by itself once the host is gone.)
fn lifelines_of(host: u32) -> Vec<u32> {
    let names = format!("{OWNER_MARKER_ENV}=z1:{host}:");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                cmdline
                    .windows(names.len())
                    .any(|window| window == names.as_bytes())
            })
        })
        .collect()
}

/// A host that died without its lifeline: a `zidane mcp` that started a `sleep` and a
/// task whose `sleep` left its session, lost its lifeline, then was SIGKILLed. Returns
/// its pid and what it left running, which only a sweep will end (`zidane doctor`'s
/// tests list them).
pub(crate) async fn a_host_dead_without_its_lifeline() -> (u32, Vec<u32>, Leftovers) {
    let mut server = StdioServer::start().await;
    let host = server.pid();
    let leftovers = Leftovers { host };
    for (id, command) in [
        (1, "sleep 600"),
        (2, "setsid sleep 600 >/dev/null 2>&1 </dev/null & sleep 600"),
    ] {
        let started = server.start_background(id, command).await;
        assert!(started["structuredContent"]["pid"].is_u64(), "{started}");
    }
    poll_until(WAIT, POLL, "the escapee leads a session of its own", || {
        owned_processes(host).into_iter().any(is_the_escapee)
    })
    .await;
    let lifelines = lifelines_of(host);
    assert!(!lifelines.is_empty(), "no lifeline of {host} found");
    for pid in lifelines {
        kill_pid(pid);
    }
    poll_until(WAIT, POLL, "the lifeline is gone", || {
        lifelines_of(host).is_empty()
    })
    .await;
    kill(Pid::from_raw(i32::try_from(host).unwrap()), Signal::SIGKILL).unwrap();
    tokio::time::timeout(WAIT, server.child.wait())
        .await
        .unwrap()
        .unwrap();
    // A process caught inside `execve` shows no environment for a moment, so this may
    // miss one: the checks below look for these, and then for anything of the host.
    let orphans = owned_processes(host);
    assert!(
        orphans.iter().copied().any(is_the_escapee),
        "the dead host left {orphans:?}"
    );
    (host, orphans, leftovers)
}

/// A live `zidane mcp` with `bash_1`, a `sleep`, running: what no sweep may touch.
async fn a_live_host() -> (StdioServer, u32) {
    let mut server = StdioServer::start().await;
    let started = server.start_background(1, "sleep 600").await;
    let pid = u32::try_from(started["structuredContent"]["pid"].as_u64().unwrap()).unwrap();
    (server, pid)
}

/// Waits until nothing of the dead `host` runs, within [`WAIT`].
async fn all_gone(host: u32, orphans: &[u32]) {
    poll_until(
        WAIT,
        POLL,
        &format!("the orphans of {host} were not swept: {orphans:?}"),
        || owned_processes(host).is_empty(),
    )
    .await;
    // A task's sandbox (bubblewrap) goes last: once its namespace's first process is
    // gone the kernel ends the rest, and they may still be exiting here.
    poll_until(
        WAIT,
        POLL,
        &format!("{orphans:?} outlived the sweep"),
        || orphans.iter().all(|pid| !alive(*pid)),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_zidane_mcp_ends_what_a_host_without_its_lifeline_left_running() {
    let _lock = lock().await;
    let (mut live, live_task) = a_live_host().await;
    let (dead, orphans, _leftovers) = a_host_dead_without_its_lifeline().await;

    let mut next = StdioServer::start_configured(UserDirBy::Flag, &[], &[SWEEP_ON]).await;
    all_gone(dead, &orphans).await;

    // A live host's task is never swept.
    assert_still_running(&mut live, 2, live_task).await;
    // The new server serves as it would have without the sweep.
    let listed = next.call(1, "list_tasks", json!({})).await;
    assert_eq!(listed["isError"], json!(false), "{listed}");
    drop(live.stdin.take());
    drop(next.stdin.take());
    for server in [&mut live, &mut next] {
        let status = tokio::time::timeout(WAIT, server.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "{status}");
    }
    assert!(!alive(live_task));
}

#[tokio::test(flavor = "multi_thread")]
async fn zidane_mcp_over_http_sweeps_as_it_starts() {
    let _lock = lock().await;
    let (dead, orphans, _leftovers) = a_host_dead_without_its_lifeline().await;

    let dir = tempfile::tempdir().unwrap();
    let served = start_http_with(&["--no-token"], None, dir.path(), &[SWEEP_ON]).await;
    all_gone(dead, &orphans).await;
    assert!(served.stop().await.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn zidane_sweeps_as_it_starts_and_not_when_told_not_to() {
    let _lock = lock().await;
    let (dead, orphans, _leftovers) = a_host_dead_without_its_lifeline().await;
    let dir = tempfile::tempdir().unwrap();

    // Told not to: print mode runs its turn and exits, the orphans untouched.
    let output = wait_bounded(
        zidane(dir.path(), &["--demo", "-p", "hello"])
            .spawn()
            .unwrap(),
        WAIT,
    );
    assert!(output.status.success(), "{output:?}");
    for pid in &orphans {
        assert!(alive(*pid), "{pid} was swept though zidane was told not to");
    }

    let mut command = zidane(dir.path(), &["--demo", "-p", "hello"]);
    command.env(SWEEP_ON.0, SWEEP_ON.1);
    let output = wait_bounded(command.spawn().unwrap(), WAIT);
    assert!(output.status.success(), "{output:?}");
    all_gone(dead, &orphans).await;
}
