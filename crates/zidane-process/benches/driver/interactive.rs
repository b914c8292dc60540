//! The driver's own ops for input and terminals (not in the shared protocol: the peers
//! have no such thing): how long a line written to a task takes to come back in its
//! log, on a pipe and in a terminal. (What a terminal costs a start is `spawn-tty`,
//! the protocol's `spawn` with a terminal.)

use std::path::Path;
use std::time::{Duration, Instant};

use zidane_context::{ExecutionContext, StdinMode, TaskInput, TtySize};

use super::{Failure, Fields, Host, fail};
use zidane_test_support::percentiles;

/// How long one echo may take before the run is declared failed.
const ECHO_WAIT: Duration = Duration::from_secs(10);

/// `input N` (`cat` on a pipe) and `input-tty N` (`cat` in a terminal): N times, one
/// after another, write a short line and time from the `write_input` call until the
/// whole answer is in the log — `cat`'s copy on a pipe; in a terminal the terminal's
/// own echo of the line and `cat`'s copy.
pub(super) async fn input(dir: &Path, n: usize, tty: bool) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, 1).await?;
    let mut options = host.options().stdin(StdinMode::Pipe);
    if tty {
        options = options.tty(TtySize::DEFAULT);
    }
    let started = host
        .context
        .exec_background(host.handle, "exec cat", options)
        .await?;
    let id = started.task_id;
    let mut samples = Vec::with_capacity(n);
    let mut offset = 0_u64;
    for i in 0..n {
        let line = format!("line {i}");
        // A terminal reads `\r` as Enter and writes `\r\n` back, twice (echo, cat).
        let (input, answer) = if tty {
            (format!("{line}\r"), 2 * (line.len() as u64 + 2))
        } else {
            (format!("{line}\n"), line.len() as u64 + 1)
        };
        let want = offset + answer;
        let t0 = Instant::now();
        host.context
            .write_input(host.handle, id, TaskInput::text(input))
            .await?
            .ok_or("the task is unknown")?;
        let waited = tokio::time::timeout(ECHO_WAIT, async {
            while offset < want {
                let chunk = host
                    .context
                    .follow_output(host.handle, id, offset, 1 << 16)
                    .await?
                    .ok_or("the task is unknown")?;
                if chunk.ended {
                    return Err(Failure::from("the task ended"));
                }
                offset = chunk.offset + chunk.bytes.len() as u64;
            }
            Ok::<(), Failure>(())
        })
        .await;
        match waited {
            Ok(Ok(())) => samples.push(t0.elapsed()),
            Ok(Err(failure)) => return Err(failure),
            Err(_) => {
                return Err(fail(
                    percentiles(&mut samples),
                    format!("line {i} did not come back within {ECHO_WAIT:?}"),
                ));
            }
        }
    }
    host.context
        .write_input(host.handle, id, TaskInput::Eof)
        .await?;
    let exit = host.next_exit().await?;
    let mut fields = percentiles(&mut samples);
    if offset != want_total(n, tty) {
        return Err(fail(
            fields,
            format!("the log holds {offset} bytes, not {}", want_total(n, tty)),
        ));
    }
    if exit.exit_code != 0 {
        return Err(fail(fields, format!("cat exited {}", exit.exit_code)));
    }
    fields.insert("tty".into(), tty.into());
    Ok(fields)
}

/// The bytes the log of `input` holds after `n` lines (before the terminal's own
/// answer to the end of input, which comes after the last measured line).
fn want_total(n: usize, tty: bool) -> u64 {
    let per_line: u64 = (0..n).map(|i| format!("line {i}").len() as u64 + 1).sum();
    if tty {
        2 * (per_line + n as u64)
    } else {
        per_line
    }
}
