//! What the Windows driver and the Windows floor share: the protocol's commands in
//! `cmd.exe`'s words, the hidden `produce` sub-op that stands in for
//! `head -c BYTES /dev/zero`, the checks of a log and of a killed tree, and the output
//! directory. Both run the very same command lines, so their ratio is the cost of the
//! runtime around them.

use std::collections::HashSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

pub use crate::protocol::{Failure, Fields, check_interleave, fail, round3};

/// `$BENCH_DIR`, or a temporary directory of the Windows programs.
pub fn bench_dir() -> Result<(std::path::PathBuf, Option<tempfile::TempDir>), Failure> {
    crate::protocol::bench_dir("bench-win-")
}
use crate::sys;

/// `true`: a command that does nothing and exits 0.
pub const TRUE_COMMAND: &str = "exit /b 0";

/// `sleep 1`: `ping` waits a second between two probes, and `timeout` needs a console.
pub const SLEEP_ONE_SECOND: &str = "ping -n 2 127.0.0.1 >nul";

/// `sh -c 'sleep 1000 & sleep 1000'`: a shell with a `start /b` child in the background
/// and one in the foreground, both for good.
pub const KILL_TREE: &str = "start /b ping -n 1000 127.0.0.1 >nul & ping -n 1000 127.0.0.1 >nul";

/// The executable both processes of [`KILL_TREE`] run.
pub const KILL_TREE_EXE: &str = "ping.exe";

/// How many processes of [`KILL_TREE_EXE`] a started [`KILL_TREE`] runs.
pub const KILL_TREE_CHILDREN: usize = 2;

/// The hidden sub-op that writes `BYTES` zero bytes to stdout.
pub const PRODUCE_OP: &str = "produce";

/// The size of each write of the producer, and of the floor's copy buffer.
pub const CHUNK: usize = 64 * 1024;

/// How long the tree of a kill may take to come up before the run is declared failed.
pub const TREE_WAIT: Duration = Duration::from_secs(60);

/// How long a killed tree may take to be gone before what is left counts as survivors
/// (as the Linux drivers give the kernel).
pub const TEARDOWN_WAIT: Duration = Duration::from_millis(100);

/// How long the kill op waits once the tree is up before it kills, as the protocol has it.
pub const BEFORE_KILL: Duration = Duration::from_millis(20);

/// The exit code a survivor is ended with.
const SURVIVOR_EXIT_CODE: u32 = 1;

/// The op's positive count argument.
pub fn count_arg(arg: Option<&str>) -> Result<u64, Failure> {
    arg.and_then(|a| a.parse().ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("usage: <op> <positive integer>, got {arg:?}").into())
}

/// `cmd.exe` from `%ComSpec%`, whatever other shell is installed: the commands are its.
pub fn comspec() -> PathBuf {
    std::env::var_os("ComSpec").map_or_else(
        || PathBuf::from(r"C:\Windows\System32\cmd.exe"),
        PathBuf::from,
    )
}

/// `head -c BYTES /dev/zero`: this program again, as the producer.
pub fn produce_command(bytes: u64) -> Result<String, Failure> {
    let exe = std::env::current_exe()?;
    Ok(format!("\"{}\" {PRODUCE_OP} {bytes}", exe.display()))
}

/// The hidden sub-op: `produce BYTES` writes BYTES zero bytes to stdout.
pub fn produce(arg: Option<&str>) -> ExitCode {
    let Some(mut left) = arg.and_then(|a| a.parse::<u64>().ok()) else {
        eprintln!("usage: {PRODUCE_OP} BYTES");
        return ExitCode::FAILURE;
    };
    let chunk = [0_u8; CHUNK];
    let mut out = std::io::stdout().lock();
    while left > 0 {
        let n = usize::try_from(left).map_or(CHUNK, |left| left.min(CHUNK));
        if let Err(error) = out.write_all(&chunk[..n]) {
            eprintln!("{PRODUCE_OP}: {error}");
            return ExitCode::FAILURE;
        }
        left -= n as u64;
    }
    match out.flush() {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// The interleave loop: `outI` on stdout, then `errI` on stderr, for I from 0 to
/// LINES - 1. `echo off` keeps the shell from echoing each pass's commands; Wine's
/// `cmd.exe` takes neither `@(` after `do` nor a redirection before the command, so
/// stderr's lines end in a space, which the check ignores.
pub fn interleave_command(lines: u64) -> String {
    format!(
        "@echo off& for /l %i in (0,1,{}) do (echo out%i& echo err%i 1>&2)",
        lines.saturating_sub(1)
    )
}

/// The executables of a [`KILL_TREE`]: the shell, the console host Windows gives a
/// console program without a console, `start.exe` (Wine's `start`) and the `ping`s.
const KILL_TREE_EXES: [&str; 4] = ["cmd.exe", "conhost.exe", "start.exe", KILL_TREE_EXE];

/// The processes of one [`KILL_TREE`], told apart in the process table as those of its
/// executables that were not there before it started. Its parent links do not serve:
/// `start /b` goes through a `start.exe` that exits at once, and the `ping` it started
/// keeps a parent no longer in the table. A job this program put itself in would list
/// them exactly, but Wine 8's wineserver crashed on that nesting.
pub struct NewProcesses {
    before: HashSet<u32>,
}

impl NewProcesses {
    /// Takes the table just before a tree starts.
    pub fn before_start() -> std::io::Result<Self> {
        let before = sys::processes()?.into_iter().map(|p| p.pid).collect();
        Ok(Self { before })
    }

    /// The tree's processes now: those of its executables not in the table before.
    pub fn now(&self) -> std::io::Result<Vec<sys::ProcessEntry>> {
        Ok(sys::processes()?
            .into_iter()
            .filter(|p| !self.before.contains(&p.pid) && is_tree_exe(&p.exe))
            .collect())
    }
}

fn is_tree_exe(exe: &str) -> bool {
    KILL_TREE_EXES
        .iter()
        .any(|tree_exe| exe.eq_ignore_ascii_case(tree_exe))
}

/// Whether a started [`KILL_TREE`] is up: both its `ping`s run.
pub fn tree_is_up(tree: &[sys::ProcessEntry]) -> bool {
    tree.iter()
        .filter(|p| p.exe.eq_ignore_ascii_case(KILL_TREE_EXE))
        .count()
        >= KILL_TREE_CHILDREN
}

/// The processes of `tree` still in the table (the same pid with the same executable).
pub fn still_running(tree: &[sys::ProcessEntry]) -> std::io::Result<Vec<sys::ProcessEntry>> {
    Ok(sys::processes()?
        .into_iter()
        .filter(|p| tree.iter().any(|t| t.pid == p.pid && t.exe == p.exe))
        .collect())
}

/// Ends the survivors a check found, so that nothing is left behind.
pub fn end_survivors(survivors: &[sys::ProcessEntry]) {
    for process in survivors {
        if let Err(error) = sys::terminate(process.pid, SURVIVOR_EXIT_CODE) {
            eprintln!(
                "could not end survivor {} (pid {}): {error}",
                process.exe, process.pid
            );
        }
    }
}

/// The memory and handle fields: `peak_rss_kib` (the peak working set) and, given the
/// counts, `fds_before` and `fds_after` (handles); a field Windows does not give is left
/// out.
pub fn memory_fields(fields: &mut Fields, handles: Option<(Option<u32>, Option<u32>)>) {
    if let Some(peak) = sys::peak_working_set_kib() {
        fields.insert("peak_rss_kib".into(), json!(peak));
    }
    if let Some((Some(before), Some(after))) = handles {
        fields.insert("fds_before".into(), json!(before));
        fields.insert("fds_after".into(), json!(after));
    }
}

/// A Windows bench program's whole life: `PROGRAM <op> [arg]` (cargo's `--bench`
/// ignored) runs `run` and prints its one JSON line, or serves the hidden producer op.
pub fn serve(run: fn(&str, Option<&str>) -> Result<Fields, Failure>) -> ExitCode {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| arg != "--bench")
        .collect();
    let op = args.first().cloned().unwrap_or_default();
    let arg = args.get(1).map(String::as_str);
    if op == PRODUCE_OP {
        return produce(arg);
    }
    match run(&op, arg) {
        Ok(fields) => zidane_test_support::print_driver_line(&op, fields, None),
        Err(failure) => {
            zidane_test_support::print_driver_line(&op, failure.fields, Some(failure.error))
        }
    }
}
