//! Foreground commands: run to completion, keep the tail of the output, and kill the
//! whole process group on timeout, cancellation, or when the caller stops waiting.

use std::path::Path;
use std::time::Duration;

use tokio::time::Instant;
use zidane_context::{
    CancellationToken, ContextError, DEFAULT_EXEC_OUTPUT_BYTES, ExecOutput, Result, Signal,
};

use crate::containment::TaskProcesses;
use crate::containment::owner_marker::OwnerMarker;
use crate::spawn::launch::Launch;
use crate::spawn::{TaskEnv, spawn_shell};
use crate::task::kill::{Escalation, Next};
use crate::task::leader::LeaderExit;
use crate::task::output_pipe::read_pipe;

/// Bytes read from the pipe per system call.
const READ_CHUNK: usize = 64 * 1024;

/// Bytes read per wake-up before the timeout and the cancel token get a look: a
/// command that prints without pause must not starve them.
const READ_BUDGET: usize = 16 << 20;

/// What a foreground run needs besides the command.
pub(crate) struct ForegroundRun<'a> {
    pub(crate) launch: Launch<'a>,
    pub(crate) command: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) env: &'a TaskEnv,
    /// The owner marker in `env`: a kill also ends what left the group.
    pub(crate) marker: OwnerMarker,
    pub(crate) timeout: Option<Duration>,
    pub(crate) cancel: Option<CancellationToken>,
    pub(crate) max_output_bytes: Option<u64>,
    pub(crate) kill_grace: Duration,
}

/// Why the run was ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    TimedOut,
    Cancelled,
}

/// Runs the command to completion (leader exited and output closed).
pub(crate) async fn run(run: ForegroundRun<'_>) -> Result<ExecOutput> {
    let started = Instant::now();
    let spawned = spawn_shell(
        &run.launch,
        run.command,
        run.cwd,
        run.env,
        None,
        crate::spawn::TaskIo::Plain,
    )
    .map_err(|error| ContextError::spawn(run.command, error.into_source()))?;
    let processes = spawned.processes.with_marker(run.marker);
    // If the caller drops this future mid-run, nothing else would end the group.
    let mut guard = KillOnDrop(Some(processes.clone()));
    let mut leader = spawned.leader;
    let output = spawned.output;

    let cap = run.max_output_bytes.unwrap_or(DEFAULT_EXEC_OUTPUT_BYTES);
    // A cap beyond the address space is no cap: the tail cannot outgrow memory anyway.
    let mut tail = TailBuffer::new(usize::try_from(cap).unwrap_or(usize::MAX));
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut eof = false;
    let mut abandoned: Option<LeaderExit> = None;
    let mut ended: Option<Ended> = None;
    let mut escalation = Escalation::default();
    let timeout_at = run.timeout.map(|t| started + t);
    let cancel = run.cancel.unwrap_or_default();

    loop {
        if eof && leader.exit().is_none() && !leader.is_waiting() {
            leader.after_eof().await;
        }
        if leader.exit().is_some() && (eof || escalation.past_grace()) {
            break;
        }
        let deadline = match escalation.deadline() {
            Some(at) => Some(at),
            None if ended.is_none() => timeout_at,
            None => None,
        };
        tokio::select! {
            _ = leader.waited(), if leader.is_waiting() => {}
            ready = output.readable(), if !eof => {
                if ready.is_err() {
                    eof = true;
                }
                let mut budget = READ_BUDGET;
                while !eof && budget > 0 {
                    // try_io clears the reactor's readiness when the pipe is empty.
                    match output.try_read_with(|pipe| read_pipe(pipe, &mut chunk)) {
                        Ok(0) => eof = true,
                        Ok(n) => {
                            tail.push(&chunk[..n]);
                            budget = budget.saturating_sub(n);
                        }
                        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => eof = true,
                    }
                }
            }
            () = cancel.cancelled(), if ended.is_none() => {
                ended = Some(Ended::Cancelled);
                escalation.start(&processes, run.kill_grace);
            }
            () = sleep_until(deadline), if deadline.is_some() => {
                if escalation.started() {
                    let reaped = leader.poll_now().is_some();
                    match escalation.on_deadline(&processes, reaped) {
                        Next::Probed | Next::StopWaitingForEof => {}
                        Next::Wait => leader.wait_in_background(),
                        Next::Abandon => {
                            abandoned = Some(LeaderExit::signalled(Signal::KILL));
                            break;
                        }
                    }
                } else {
                    ended = Some(Ended::TimedOut);
                    escalation.start(&processes, run.kill_grace);
                }
            }
        }
    }
    if leader.exit().is_some() && !escalation.started() {
        // Finished on its own: nothing to kill on drop.
        guard.0 = None;
    }
    if escalation.started() {
        // A killed command takes with it what left its group.
        processes.end_escapees(run.kill_grace).await;
    }
    drop(output);
    let exit = abandoned
        .or_else(|| leader.exit())
        .unwrap_or(LeaderExit::signalled(Signal::KILL));
    let (output, truncated_bytes) = tail.finish();
    Ok(ExecOutput {
        output,
        exit_code: exit.code,
        signal: exit.signal,
        timed_out: ended == Some(Ended::TimedOut),
        cancelled: ended == Some(Ended::Cancelled),
        truncated_bytes,
        duration: started.elapsed(),
    })
}

/// `SIGKILL`s the group if the run did not finish normally; harmless (ESRCH) if it did
/// end after a kill.
struct KillOnDrop(Option<TaskProcesses>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(processes) = self.0.take() {
            processes.kill();
        }
    }
}

/// The last `cap` bytes of a stream, and how many came before them.
///
/// Memory stays under twice the cap: the head is dropped whenever the buffer doubles.
#[derive(Debug)]
pub(crate) struct TailBuffer {
    cap: usize,
    bytes: Vec<u8>,
    dropped: u64,
}

impl TailBuffer {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            bytes: Vec::new(),
            dropped: 0,
        }
    }

    pub(crate) fn push(&mut self, data: &[u8]) {
        self.bytes.extend_from_slice(data);
        if self.bytes.len() > self.cap.saturating_mul(2).max(READ_CHUNK) {
            self.trim();
        }
    }

    fn trim(&mut self) {
        let excess = self.bytes.len().saturating_sub(self.cap);
        if excess > 0 {
            self.bytes.drain(..excess);
            self.dropped += excess as u64;
        }
    }

    /// The kept text (lossy UTF-8) behind a marker line when bytes were dropped, and
    /// the number of bytes dropped.
    pub(crate) fn finish(mut self) -> (String, u64) {
        self.trim();
        if self.dropped == 0 {
            return (String::from_utf8_lossy(&self.bytes).into_owned(), 0);
        }
        // Do not start the tail inside a UTF-8 sequence: skip its continuation bytes
        // (at most three) rather than show a replacement character.
        let skip = self
            .bytes
            .iter()
            .take(3)
            .take_while(|b| (**b & 0b1100_0000) == 0b1000_0000)
            .count();
        self.dropped += skip as u64;
        let text = String::from_utf8_lossy(&self.bytes[skip..]);
        (
            format!("{}\n{text}", exec_truncation_marker(self.dropped)),
            self.dropped,
        )
    }
}

/// The line that opens a foreground output whose head was dropped.
pub(crate) fn exec_truncation_marker(dropped: u64) -> String {
    format!("[output truncated: the first {dropped} bytes were dropped, the tail follows]")
}

fn sleep_until(deadline: Option<Instant>) -> tokio::time::Sleep {
    tokio::time::sleep_until(
        deadline.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_cap() {
        let mut tail = TailBuffer::new(10);
        tail.push(b"hello");
        assert_eq!(tail.finish(), ("hello".to_owned(), 0));
    }

    #[test]
    fn keeps_the_tail_with_a_marker() {
        let mut tail = TailBuffer::new(4);
        for _ in 0..100_000 {
            tail.push(b"ab");
        }
        tail.push(b"cdef");
        let (text, dropped) = tail.finish();
        assert_eq!(dropped, 200_000);
        assert_eq!(text, format!("{}\ncdef", exec_truncation_marker(200_000)));
    }

    #[test]
    fn never_starts_inside_a_utf8_sequence() {
        let mut tail = TailBuffer::new(4);
        // é is 2 bytes, € is 3: the last 4 bytes start with é's continuation byte.
        tail.push("xxxxé€".as_bytes());
        let (text, dropped) = tail.finish();
        assert_eq!(text, format!("{}\n€", exec_truncation_marker(6)));
        assert_eq!(dropped, 6);
    }
}
