//! A real session on this machine, played by a scripted model, in a few seconds.
//!
//! ```text
//! cargo run --example quickstart [USER_DIR]
//! ```
//!
//! 1. The model starts a build-like command in the background and ends its turn.
//! 2. The agent is idle — nothing polls. The build ends.
//! 3. The wake loop runs a drain-only turn: the model's next user turn opens with a
//!    `<task-notification>` (painted as a `⌁` banner; the block itself is shown once,
//!    dimmed, as the model read it) and the model reads the whole log with `read_file`.
//! 4. The model starts a dev-server-like command, checks that it stays up, reads its
//!    log, and stops it with `shell_kill` (no notification follows: the model knows).
//! 5. The agent is destroyed, and the example checks that no process of either task is
//!    left.
//!
//! The session (`session.json`) and the task logs stay under the user dir: the first
//! argument, else `$ZIDANE_USER_DIR`, else `<temp dir>/zidane-quickstart`. Repaint the
//! session with `cargo run --example replay`. `RUST_LOG=zidane=debug` tells the same
//! story on stderr as `tracing` spans and events (quiet by default).

// An example prints its transcript: that is its whole purpose.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use zidane::prelude::*;

/// The env var that chooses the user dir when no argument does.
const USER_DIR_VAR: &str = "ZIDANE_USER_DIR";

/// Longest the example waits for the build to end and wake the agent.
const WAKE_WAIT: Duration = Duration::from_secs(30);

/// About 1.5 s of "compiling", on stdout and stderr (they share one log, in write order).
const BUILD: &str = "for n in 1 2 3 4 5 6; do echo \"   Compiling crate-$n v0.1.0\"; sleep 0.2; done; \
     echo 'warning: unused variable: `x`' >&2; sleep 0.2; \
     echo '    Finished `dev` profile in 1.4s'";

/// Runs until killed, like `npm run dev`.
const DEV_SERVER: &str = "echo 'dev server listening on http://127.0.0.1:8080'; \
     while :; do sleep 5; echo 'GET / 200'; done";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off")),
        )
        .with_writer(std::io::stderr)
        .init();
    let began = Instant::now();
    let painter = Painter::for_stdout();
    let user_dir = std::env::args_os()
        .nth(1)
        .or_else(|| std::env::var_os(USER_DIR_VAR))
        .map_or_else(
            || std::env::temp_dir().join("zidane-quickstart"),
            PathBuf::from,
        );

    // The agent: this machine's ProcessContext, a session saved under the user dir after
    // every turn, the default tools, background mode on — what `local_agent` assembles.
    let model = script();
    let agent = zidane::local_agent(Arc::new(model), &user_dir).build()?;
    let store = SessionStore::new(&user_dir);
    let tasks_dir = agent.tasks_dir().ok_or("background mode is on")?.to_owned();

    println!("zidane quickstart: a real session on this machine, played by a scripted model.\n");
    println!("  user dir   {}", user_dir.display());
    println!(
        "  session    {}",
        store.session_file(&agent.id())?.display()
    );
    println!("  task logs  {}/", tasks_dir.display());

    // A host paints the live stream (the same events a replay gives), and listens to the
    // hooks for what is not in the transcript.
    agent
        .hooks()
        .subscribe_stream(move |event| print!("{}", painter.event(event)));
    let pids = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&pids);
    agent.hooks().subscribe(move |event| match event {
        HookEvent::BackgroundStart(start) => {
            zidane::context::lock(&seen).push((start.task_id, start.pid));
            print!(
                "{}",
                painter.note(&format!(
                    "hook background:start {} (pid {})",
                    start.task_id, start.pid
                ))
            );
        }
        HookEvent::BackgroundExit(exit) => print!(
            "{}",
            painter.note(&format!(
                "hook background:exit {} {} ({}) after {}",
                exit.task_id,
                exit.status,
                exit.exit_code,
                zidane::wire::format_duration(exit.duration)
            ))
        ),
        _ => {}
    });

    // The wake loop: a drain-only run whenever a task ends while the agent is idle.
    let wake = WakeLoop::spawn(agent.clone());

    print!(
        "{}",
        painter.heading("1. the model starts a build in the background and ends its turn")
    );
    wake.prompt("Build the workspace in the background.")
        .await?;
    let running = agent.running_tasks().await?;
    print!(
        "{}",
        painter.note(&format!(
            "the run returned; the agent is idle (running: {}) with {} task(s) still running: {}",
            agent.is_running(),
            running.len(),
            running
                .iter()
                .map(|row| row.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    );

    print!(
        "{}",
        painter
            .heading("2. nothing polls; the build ends and the wake loop runs a drain-only turn")
    );
    // The build may also end during the first run: the loop's follow-up run delivers it.
    let woken = tokio::time::timeout(WAKE_WAIT, wake.next_wake())
        .await
        .map_err(|_| format!("no wake-up within {WAKE_WAIT:?}"))??;
    let [block] = woken.notification_blocks()[..] else {
        return Err(format!("expected one notification, got {:?}", woken.notified).into());
    };
    print!(
        "{}",
        painter.note(&format!(
            "woken by {} notification(s); {} model call(s). What the model read at the head \
             of its turn (the ⌁ banner is how a host paints it):",
            woken.notified.len(),
            woken.steps
        ))
    );
    print!("{}", painter.wire_block(block));

    print!(
        "{}",
        painter.heading("3. a dev server: started, checked, stopped with shell_kill")
    );
    let served = wake
        .prompt("Start the dev server, check that it stays up, then stop it.")
        .await?;
    if !served.notified.is_empty() || agent.has_pending_task_notifications() {
        return Err("shell_kill told the model; no notification may follow".into());
    }
    print!(
        "{}",
        painter.note("shell_kill told the model the outcome: no notification is pending")
    );

    print!(
        "{}",
        painter.heading("4. destroy: every task of the session is killed, logs flushed")
    );
    drop(wake);
    let report = agent.destroy().await?;
    for (step, outcome) in &report.steps {
        print!(
            "{}",
            painter.note(&format!("destroy {step:?}: {outcome:?}"))
        );
    }
    let pids = zidane::context::lock(&pids).clone();
    for (task_id, pid) in &pids {
        let left = live_processes_in_group(*pid)?;
        if !left.is_empty() {
            return Err(
                format!("{task_id}: processes {left:?} of group {pid} are still running").into(),
            );
        }
        print!(
            "{}",
            painter.note(&format!(
                "{task_id}: no process left in the group of pid {pid}"
            ))
        );
    }
    println!(
        "\nno process left ({} tasks checked); finished after {}.",
        pids.len(),
        zidane::wire::format_duration(began.elapsed())
    );
    println!(
        "The session and its logs stay in {}; repaint them with:\n  cargo run --example replay -- {}",
        store.session_dir(&agent.id())?.display(),
        store.session_dir(&agent.id())?.display()
    );
    Ok(())
}

/// What the model does, step by step. A real model decides the same from the tools'
/// descriptions and results; this one reads them too, to find task ids and log paths.
fn script() -> ScriptedModel {
    ScriptedModel::new()
        // Run 1 (the user's prompt).
        .tool_call("shell", json!({ "command": BUILD, "run_in_background": true }))
        .text("The build is running in the background; I'll end my turn and be woken when it ends.")
        // Run 2 (drain-only): the notification opens the turn.
        .react(|request| match request.notifications().first() {
            Some(ended) => ModelResponse::text(format!("{} ended: {}", ended.task_id, ended.summary))
                .with_tool_use("", "read_file", json!({ "path": ended.output_file })),
            None => ModelResponse::text("I was woken without a notification."),
        })
        .react(|request| {
            let log = request
                .tool_results()
                .first()
                .map(|(_, content, _)| (*content).to_owned())
                .unwrap_or_default();
            let crates = log.matches("Compiling").count();
            let finished = log.contains("Finished");
            ModelResponse::text(format!(
                "The whole log is there: {crates} crates compiled, one warning, finished: {finished}."
            ))
        })
        // Run 3 (the user's prompt).
        .tool_call("shell", json!({ "command": DEV_SERVER, "run_in_background": true }))
        .react(|request| match last_started(request) {
            Some((task_id, _)) => ModelResponse::text("Let me make sure it does not crash on start.")
                .with_tool_use("", "wait_task", json!({ "task_id": task_id, "timeout_ms": 500 })),
            None => ModelResponse::text("The server did not start."),
        })
        .react(|request| match last_started(request) {
            Some((_, path)) => ModelResponse::tool_use("", "read_file", json!({ "path": path })),
            None => ModelResponse::text("The server did not start."),
        })
        .react(|request| match last_started(request) {
            Some((task_id, _)) => ModelResponse::text("It is up and serving. Stopping it.")
                .with_tool_use("", "shell_kill", json!({ "task_id": task_id })),
            None => ModelResponse::text("The server did not start."),
        })
        .text("The dev server came up and is stopped now.")
}

/// The task id and log path of the last `Started bash_N (pid P). Output: PATH` result.
fn last_started(request: &ModelRequest) -> Option<(String, String)> {
    request
        .turns
        .iter()
        .rev()
        .flat_map(|turn| turn.content.iter().rev())
        .filter_map(|block| match block {
            ContentBlock::ToolResult { content, .. } => content.lines().next(),
            _ => None,
        })
        .find_map(|line| {
            let rest = line.strip_prefix("Started ")?;
            let task_id = rest.split_whitespace().next()?;
            let (_, path) = rest.split_once("Output: ")?;
            Some((task_id.to_owned(), path.to_owned()))
        })
}

/// The live processes of a process group (a task leads its own group, so this is every
/// process the task started that did not leave it).
///
/// On Linux it reads `/proc`, skipping zombies: a child killed with its group, whose
/// parent died first, stays a zombie until init reaps it — dead, but still a member of
/// the group for `kill(-pgid, 0)`. Elsewhere on Unix that probe is all there is. On
/// Windows the task's job object ends every member with it; `tasklist` tells whether
/// its leader still runs.
fn live_processes_in_group(pgid: u32) -> Result<Vec<u32>, Box<dyn Error>> {
    #[cfg(target_os = "linux")]
    {
        let mut live = Vec::new();
        for entry in std::fs::read_dir("/proc")?.filter_map(Result::ok) {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses.
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue; // it ended while we looked
            };
            let mut fields = stat
                .rsplit_once(')')
                .map(|(_, rest)| rest.split_whitespace());
            let state = fields.as_mut().and_then(Iterator::next);
            let pgrp = fields
                .as_mut()
                .and_then(|f| f.nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if pgrp == Some(pgid) && state != Some("Z") {
                live.push(pid);
            }
        }
        Ok(live)
    }
    #[cfg(windows)]
    {
        let filter = format!("PID eq {pgid}");
        let listed = std::process::Command::new("tasklist")
            .args(["/FI", &filter, "/NH", "/FO", "CSV"])
            .output()?;
        let listed = String::from_utf8_lossy(&listed.stdout);
        Ok(if listed.contains(&format!("\"{pgid}\"")) {
            vec![pgid]
        } else {
            Vec::new()
        })
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        use nix::sys::signal::killpg;
        use nix::unistd::Pid;
        match killpg(Pid::from_raw(i32::try_from(pgid)?), None) {
            Err(nix::errno::Errno::ESRCH) => Ok(Vec::new()),
            _ => Ok(vec![pgid]),
        }
    }
}
