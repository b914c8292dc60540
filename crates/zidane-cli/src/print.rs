//! `zidane -p "prompt"`: print mode for scripts. The transcript is painted on stdout as
//! it happens (the same painter as `replay`); with `--wait` the process stays until
//! every background task has ended and the model has been told, and the exit status
//! says whether the model's last run succeeded.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::sync::Notify;
use zidane::agent::{HookEvent, StopReason, WakeReport};
use zidane::wire::Painter;

use crate::error::CliError;
use crate::host::{Host, Stop};

/// Exit status when a signal ended print mode (128 + SIGINT, as shells report it).
const EXIT_SIGNALLED: u8 = 130;

/// Runs `prompt`, and with `wait` every wake-up after it; then destroys the agent.
pub async fn run(host: Host, prompt: &str, wait: bool) -> Result<ExitCode, CliError> {
    let painter = Painter::for_stdout();
    let agent = host.agent.clone();
    agent.hooks().subscribe_stream(move |event| {
        let mut out = std::io::stdout().lock();
        // A closed stdout must not stop the session: the tasks still need destroying.
        let _ = out.write_all(painter.event(event).as_bytes());
        let _ = out.flush();
    });
    // Woken on every exit and every run's end: the two things that can make the session
    // settle. A Notify keeps one permit, so a signal between a check and the wait is not
    // lost.
    let changed = Arc::new(Notify::new());
    let signal = Arc::clone(&changed);
    agent.hooks().subscribe(move |event| {
        if matches!(event, HookEvent::BackgroundExit(_)) {
            signal.notify_one();
        }
    });
    let mut stop = Stop::new()?;
    let outcome = tokio::select! {
        last_ok = converse(&host, prompt, wait, &changed) => Some(last_ok),
        () = stop.recv() => {
            host.wake.abort();
            None
        }
    };
    let report = host.shut_down().await?;
    if !report.survivors.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "zidane: not confirmed dead: {:?}",
            report.survivors
        );
    }
    Ok(match outcome {
        Some(true) => ExitCode::SUCCESS,
        Some(false) => ExitCode::FAILURE,
        None => ExitCode::from(EXIT_SIGNALLED),
    })
}

/// The prompt's run, and with `wait` every run until the session settles; whether the
/// last run succeeded.
async fn converse(host: &Host, prompt: &str, wait: bool, changed: &Notify) -> bool {
    let mut reports = host.wake.reports();
    let first = host.wake.prompt(prompt).await;
    let mut last_ok = succeeded(
        &first
            .as_ref()
            .map(Clone::clone)
            .map_err(ToString::to_string),
    );
    if let Err(error) = &first {
        crate::error::print(error);
    }
    if wait && first.is_ok() {
        loop {
            while let Ok(report) = reports.try_recv() {
                last_ok = report_ok(&report);
            }
            if settled(host).await {
                break;
            }
            tokio::select! {
                () = changed.notified() => {}
                report = reports.recv() => {
                    if let Ok(report) = report {
                        last_ok = report_ok(&report);
                    }
                }
            }
        }
    }
    last_ok
}

/// Nothing left to wait for: no run in flight, no task running, no exit untold.
async fn settled(host: &Host) -> bool {
    let agent = &host.agent;
    !agent.is_running()
        && !agent.has_pending_task_notifications()
        && agent
            .running_tasks()
            .await
            .map(|rows| rows.is_empty())
            .unwrap_or(true)
}

fn report_ok(report: &WakeReport) -> bool {
    succeeded(&report.outcome)
}

/// A run succeeded when the model finished its turn.
fn succeeded(outcome: &Result<zidane::agent::RunOutcome, String>) -> bool {
    matches!(outcome, Ok(outcome) if outcome.stop == StopReason::EndTurn)
}
