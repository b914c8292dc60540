//! The protocol's ops on a plain `std::process::Command`.

use std::fs::File;
use std::io::{self, PipeReader, Read, Write};
use std::os::windows::io::AsHandle;
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::json;
use windows_sys::Win32::System::Threading::{CREATE_NO_WINDOW, CREATE_SUSPENDED};
use zidane_test_support::{percentiles, round1};

use crate::common::{
    self, BEFORE_KILL, CHUNK, Failure, Fields, KILL_TREE, SLEEP_ONE_SECOND, TEARDOWN_WAIT,
    TREE_WAIT, TRUE_COMMAND, fail, round3,
};
use crate::sys::{self, Job};

/// How often the kill op looks at the process table while it waits.
const TABLE_POLL: Duration = Duration::from_millis(1);

/// The exit code of every process of a killed job.
const KILLED_EXIT_CODE: u32 = 137;

/// Runs `op` with its argument; its fields, or the failure.
pub fn run(op: &str, arg: Option<&str>) -> Result<Fields, Failure> {
    let n = common::count_arg(arg)?;
    let (dir, _temp) = common::bench_dir()?;
    eprintln!("[floor-windows] {op} {n} -> {}", dir.display());
    let mut starter = Starter::new(&dir);
    let count = usize::try_from(n)?;
    match op {
        "spawn" => spawn(&mut starter, count),
        "roundtrip" => roundtrip(&mut starter, count),
        "throughput" => throughput(&mut starter, n),
        "interleave" => interleave(&mut starter, n),
        "kill" => kill(&mut starter, count),
        "concurrent" => concurrent(&mut starter, count),
        other => Err(format!("unknown op {other}").into()),
    }
}

/// Starts tasks: numbers their logs and knows the shell and the creation flags.
struct Starter {
    dir: PathBuf,
    shell: PathBuf,
    /// Without a console of its own, a console child would get a new one: as zidane
    /// does, such a child runs without one.
    flags: u32,
    started: u64,
}

/// A task just started: the shell, the read end of its pipe and its log.
struct Started {
    child: Child,
    output: PipeReader,
    log: File,
    path: PathBuf,
}

/// A task whose output a thread copies into its log.
struct Running {
    child: Child,
    copy: JoinHandle<io::Result<u64>>,
}

impl Running {
    /// Waits for the shell and the copy's end (the pipe's last holder gone); the
    /// shell's exit code.
    fn settle(self) -> Result<i32, Failure> {
        let Running { mut child, copy } = self;
        let status = child.wait()?;
        copy.join().map_err(|_| "the copy thread panicked")??;
        Ok(status.code().unwrap_or(-1))
    }
}

impl Starter {
    fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_owned(),
            shell: common::comspec(),
            flags: if sys::has_console() {
                0
            } else {
                CREATE_NO_WINDOW
            },
            started: 0,
        }
    }

    /// Creates the log, the pipe and the shell running `command`, `extra_flags` added.
    fn start(&mut self, command: &str, extra_flags: u32) -> io::Result<Started> {
        self.started += 1;
        let path = self.dir.join(format!("bash_{}.log", self.started));
        let log = File::create_new(&path)?;
        let (output, write) = io::pipe()?;
        let write_for_stderr = write.try_clone()?;
        let mut process = Command::new(&self.shell);
        // cmd.exe takes the command as it is, inside one pair of quotes (`/s`), which
        // std's quoting would break.
        process
            .raw_arg(format!("/d /s /c \"{command}\""))
            .stdin(Stdio::null())
            .stdout(write)
            .stderr(write_for_stderr)
            .creation_flags(self.flags | extra_flags);
        let child = process.spawn()?;
        // Only the child holds the write ends now.
        drop(process);
        Ok(Started {
            child,
            output,
            log,
            path,
        })
    }

    /// Starts `command` with a thread copying its output into its log.
    fn start_in_background(&mut self, command: &str) -> io::Result<Running> {
        let Started {
            child, output, log, ..
        } = self.start(command, 0)?;
        let copy = std::thread::spawn(move || copy(output, log));
        Ok(Running { child, copy })
    }

    /// Runs `command` to its end, its output copied on this thread; its exit code and
    /// log.
    fn run_to_end(&mut self, command: &str) -> Result<(i32, PathBuf), Failure> {
        let Started {
            mut child,
            output,
            log,
            path,
        } = self.start(command, 0)?;
        copy(output, log)?;
        let status = child.wait()?;
        Ok((status.code().unwrap_or(-1), path))
    }
}

/// Copies the pipe into the log until the pipe's end; the bytes copied.
fn copy(mut output: PipeReader, mut log: File) -> io::Result<u64> {
    let mut buffer = vec![0_u8; CHUNK];
    let mut total = 0_u64;
    loop {
        match output.read(&mut buffer) {
            Ok(0) => return Ok(total),
            Ok(n) => {
                log.write_all(&buffer[..n])?;
                total += n as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            // A pipe whose writers are all gone reads as broken on Windows: its end.
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => return Ok(total),
            Err(error) => return Err(error),
        }
    }
}

fn spawn(starter: &mut Starter, n: usize) -> Result<Fields, Failure> {
    let mut samples = Vec::with_capacity(n);
    let mut running = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        running.push(starter.start_in_background(TRUE_COMMAND)?);
        samples.push(t0.elapsed());
    }
    let mut bad = 0;
    for task in running {
        if task.settle()? != 0 {
            bad += 1;
        }
    }
    let fields = percentiles(&mut samples);
    if bad > 0 {
        return Err(fail(fields, format!("{bad} of {n} tasks exited non-zero")));
    }
    Ok(fields)
}

fn roundtrip(starter: &mut Starter, n: usize) -> Result<Fields, Failure> {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let (code, _) = starter.run_to_end(TRUE_COMMAND)?;
        samples.push(t0.elapsed());
        if code != 0 {
            return Err(format!("task exited {code}").into());
        }
    }
    Ok(percentiles(&mut samples))
}

fn throughput(starter: &mut Starter, bytes: u64) -> Result<Fields, Failure> {
    let command = common::produce_command(bytes)?;
    let t0 = Instant::now();
    let (code, path) = starter.run_to_end(&command)?;
    let seconds = t0.elapsed().as_secs_f64();
    let size = std::fs::metadata(&path)?.len();
    let mut fields = Fields::new();
    fields.insert("bytes".into(), json!(bytes));
    fields.insert("seconds".into(), json!(round3(seconds)));
    fields.insert(
        "mib_per_s".into(),
        json!(round1(bytes as f64 / 1_048_576.0 / seconds)),
    );
    common::memory_fields(&mut fields, None);
    if code != 0 {
        return Err(fail(fields, format!("the producer exited {code}")));
    }
    if size != bytes {
        return Err(fail(
            fields,
            format!("log holds {size} bytes, expected {bytes}"),
        ));
    }
    Ok(fields)
}

fn interleave(starter: &mut Starter, lines: u64) -> Result<Fields, Failure> {
    let command = common::interleave_command(lines);
    let t0 = Instant::now();
    let (code, path) = starter.run_to_end(&command)?;
    let seconds = t0.elapsed().as_secs_f64();
    let log = std::fs::read(&path)?;
    let (fields, error) = common::check_interleave(&log, lines, seconds);
    if code != 0 {
        return Err(fail(fields, format!("the loop exited {code}")));
    }
    match error {
        Some(error) => Err(fail(fields, error)),
        None => Ok(fields),
    }
}

fn kill(starter: &mut Starter, n: usize) -> Result<Fields, Failure> {
    let mut samples = Vec::with_capacity(n);
    let mut survivors = 0;
    for _ in 0..n {
        let baseline = common::NewProcesses::before_start()?;
        let (job, task) = start_in_job(starter)?;
        let pid = task.child.id();
        let deadline = Instant::now() + TREE_WAIT;
        let mut tree = baseline.now()?;
        while !common::tree_is_up(&tree) {
            if Instant::now() > deadline {
                // Dropping the job ends the tree (kill-on-close).
                return Err(format!("the tree under {pid} did not come up").into());
            }
            std::thread::sleep(TABLE_POLL);
            tree = baseline.now()?;
        }
        std::thread::sleep(BEFORE_KILL);
        let t0 = Instant::now();
        job.terminate(KILLED_EXIT_CODE)?;
        let code = task.settle()?;
        samples.push(t0.elapsed());
        if u32::try_from(code).ok() != Some(KILLED_EXIT_CODE) {
            return Err(format!("the shell {pid} ended with {code}, expected a kill").into());
        }
        let deadline = Instant::now() + TEARDOWN_WAIT;
        let mut alive = common::still_running(&tree)?;
        while !alive.is_empty() && Instant::now() < deadline {
            std::thread::sleep(TABLE_POLL);
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

/// Starts the kill's tree suspended, puts it in a job of its own and only then resumes
/// it, with a thread copying its output.
fn start_in_job(starter: &mut Starter) -> Result<(Job, Running), Failure> {
    let job = Job::new()?;
    let Started {
        mut child,
        output,
        log,
        ..
    } = starter.start(KILL_TREE, CREATE_SUSPENDED)?;
    let held = job
        .assign(child.as_handle())
        .and_then(|()| sys::resume_threads(child.id()));
    if let Err(error) = held {
        // Suspended, or out of the job: it must not run loose.
        let _ = child.kill();
        let _ = child.wait();
        return Err(error.into());
    }
    let copy = std::thread::spawn(move || copy(output, log));
    Ok((job, Running { child, copy }))
}

fn concurrent(starter: &mut Starter, n: usize) -> Result<Fields, Failure> {
    // Warm up (as the driver does): the first spawn's lazily made state exists before
    // handles are counted.
    starter.start_in_background(TRUE_COMMAND)?.settle()?;

    let handles_before = sys::handle_count();
    let t0 = Instant::now();
    let mut running = Vec::with_capacity(n);
    for _ in 0..n {
        running.push(starter.start_in_background(SLEEP_ONE_SECOND)?);
    }
    let mut bad = 0;
    for task in running {
        if task.settle()? != 0 {
            bad += 1;
        }
    }
    let seconds = t0.elapsed().as_secs_f64();
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
