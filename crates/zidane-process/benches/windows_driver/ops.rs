//! The protocol's ops over `ProcessContext` on Windows.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use zidane_context::{ExecutionContext, TaskStatus};
use zidane_test_support::{percentiles, round1};

use crate::common::{
    self, BEFORE_KILL, Failure, Fields, KILL_TREE, SLEEP_ONE_SECOND, TEARDOWN_WAIT, TREE_WAIT,
    TRUE_COMMAND, fail, round3,
};
use crate::host::Host;
use crate::sys;

/// How often the kill op looks at the process table while it waits.
const TABLE_POLL: Duration = Duration::from_millis(1);

/// Runs `op` with its argument; its fields, or the failure.
pub fn run(op: &str, arg: Option<&str>) -> Result<Fields, Failure> {
    let n = common::count_arg(arg)?;
    let (dir, _temp) = common::bench_dir()?;
    eprintln!("[zidane-windows] {op} {n} -> {}", dir.display());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let count = usize::try_from(n)?;
    runtime.block_on(async {
        match op {
            "spawn" => spawn(&dir, count).await,
            "roundtrip" => roundtrip(&dir, count).await,
            "throughput" => throughput(&dir, n).await,
            "interleave" => interleave(&dir, n).await,
            "kill" => kill(&dir, count).await,
            "concurrent" => concurrent(&dir, count).await,
            other => Err(format!("unknown op {other}").into()),
        }
    })
}

async fn spawn(dir: &Path, n: usize) -> Result<Fields, Failure> {
    Host::new(dir, n)
        .await?
        .time_starts(n, TRUE_COMMAND, |options| options)
        .await
}

async fn roundtrip(dir: &Path, n: usize) -> Result<Fields, Failure> {
    Host::new(dir, 1)
        .await?
        .time_roundtrips(n, TRUE_COMMAND)
        .await
}

async fn throughput(dir: &Path, bytes: u64) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, 1).await?;
    let command = common::produce_command(bytes)?;
    let (started, exit, seconds) = host.run_once(&command).await?;
    let size = std::fs::metadata(&started.output_path)?.len();
    let mut fields = Fields::new();
    fields.insert("bytes".into(), json!(bytes));
    fields.insert("seconds".into(), json!(round3(seconds)));
    fields.insert(
        "mib_per_s".into(),
        json!(round1(bytes as f64 / 1_048_576.0 / seconds)),
    );
    common::memory_fields(&mut fields, None);
    if exit.exit_code != 0 {
        return Err(fail(
            fields,
            format!("the producer exited {}", exit.exit_code),
        ));
    }
    if size != bytes {
        return Err(fail(
            fields,
            format!("log holds {size} bytes, expected {bytes}"),
        ));
    }
    Ok(fields)
}

async fn interleave(dir: &Path, lines: u64) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, 1).await?;
    let command = common::interleave_command(lines);
    let (started, exit, seconds) = host.run_once(&command).await?;
    let log = std::fs::read(&started.output_path)?;
    let (fields, error) = common::check_interleave(&log, lines, seconds);
    if exit.exit_code != 0 {
        return Err(fail(fields, format!("the loop exited {}", exit.exit_code)));
    }
    match error {
        Some(error) => Err(fail(fields, error)),
        None => Ok(fields),
    }
}

async fn kill(dir: &Path, n: usize) -> Result<Fields, Failure> {
    let host = Host::new(dir, 1).await?;
    let mut samples = Vec::with_capacity(n);
    let mut survivors = 0;
    for _ in 0..n {
        let baseline = common::NewProcesses::before_start()?;
        let started = host
            .context
            .exec_background(host.handle, KILL_TREE, host.options())
            .await?;
        let deadline = Instant::now() + TREE_WAIT;
        let mut tree = baseline.now()?;
        while !common::tree_is_up(&tree) {
            if Instant::now() > deadline {
                let _ = host
                    .context
                    .kill_background(host.handle, started.task_id)
                    .await;
                return Err(format!("the tree under {} did not come up", started.pid).into());
            }
            tokio::time::sleep(TABLE_POLL).await;
            tree = baseline.now()?;
        }
        tokio::time::sleep(BEFORE_KILL).await;
        let t0 = Instant::now();
        let exit = host
            .context
            .kill_background(host.handle, started.task_id)
            .await?
            .ok_or("kill_background did not know the task")?;
        samples.push(t0.elapsed());
        if exit.status != TaskStatus::Killed {
            return Err(format!(
                "the shell {} ended {:?} with {}, expected a kill",
                started.pid, exit.status, exit.exit_code
            )
            .into());
        }
        let deadline = Instant::now() + TEARDOWN_WAIT;
        let mut alive = common::still_running(&tree)?;
        while !alive.is_empty() && Instant::now() < deadline {
            tokio::time::sleep(TABLE_POLL).await;
            alive = common::still_running(&tree)?;
        }
        survivors += alive.len();
        common::end_survivors(&alive);
    }
    let mut fields = percentiles(&mut samples);
    fields.insert("survivors".into(), json!(survivors));
    fields.insert("console".into(), json!(sys::has_console()));
    if survivors > 0 {
        return Err(fail(
            fields,
            format!("{survivors} process(es) survived the kill"),
        ));
    }
    Ok(fields)
}

async fn concurrent(dir: &Path, n: usize) -> Result<Fields, Failure> {
    let mut host = Host::new(dir, n).await?;
    // Warm up (as the floor does) before handles are counted.
    host.warm_up(TRUE_COMMAND).await?;
    let handles_before = sys::handle_count();
    let (seconds, bad) = host.start_all(n, SLEEP_ONE_SECOND).await?;
    let handles_after = sys::handle_count();
    let mut fields = Fields::new();
    fields.insert("n".into(), json!(n));
    fields.insert("seconds".into(), json!(round3(seconds)));
    common::memory_fields(&mut fields, Some((handles_before, handles_after)));
    if bad > 0 {
        return Err(fail(fields, format!("{bad} of {n} tasks exited non-zero")));
    }
    if let (Some(before), Some(after)) = (handles_before, handles_after)
        && after > before
    {
        return Err(fail(
            fields,
            format!("handle leak: {before} before, {after} after"),
        ));
    }
    Ok(fields)
}
