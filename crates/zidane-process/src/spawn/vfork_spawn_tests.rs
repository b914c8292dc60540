//! The child [`spawn`] makes: what it inherits (three descriptors, no blocked or
//! ignored signal), where it runs, and how it fails.

use std::fs::File;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::ExitStatus;

use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;
use nix::unistd::Pid;

use super::*;

/// The child of a spawn, on a kernel that allows this way of spawning.
fn started(spawn: Result<Spawn, SpawnError>) -> io::Result<Child> {
    match spawn {
        Ok(Spawn::Started(child)) => Ok(child),
        Ok(Spawn::Refused { .. }) => panic!("this kernel allows CLONE_FILES spawns"),
        Err(error) => Err(error.into_source()),
    }
}

/// Runs `command` through [`spawn`]; returns what it printed and its exit status.
fn run(command: &str, cwd: &Path) -> io::Result<(String, ExitStatus)> {
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let shell = ShellCommand::new(command, cwd, &TaskEnv::new())?;
    let pid = started(spawn(&shell, write.as_fd(), None, Session::Group))?.pid;
    drop(write);
    let mut output = String::new();
    File::from(read).read_to_string(&mut output)?;
    let status = reap(pid, true)?.expect("a blocking wait returns the status");
    Ok((output, status))
}

#[test]
fn runs_the_command_in_its_own_group_with_output_on_the_pipe() {
    let (output, status) = run(
        "echo out; echo err >&2; read -r _ _ _ _ group _ </proc/$$/stat; [ $group = $$ ] && echo leads; exit 3",
        Path::new("/"),
    )
    .unwrap();
    assert_eq!(output, "out\nerr\nleads\n");
    assert_eq!(status.code(), Some(3));
}

#[test]
fn the_child_inherits_exactly_stdin_stdout_and_stderr() {
    // Not close-on-exec: `std::process::Command` would pass this one on.
    let inheritable = open("/dev/null", OFlag::O_RDONLY, Mode::empty()).unwrap();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    // The log the child creates is ours, not the task's.
    let dir = tempfile::tempdir().unwrap();
    let shell = ShellCommand::new("exec sleep 1000", Path::new("/"), &TaskEnv::new())
        .unwrap()
        .with_log(&dir.path().join("task.log"))
        .unwrap();
    let child = started(spawn(&shell, write.as_fd(), None, Session::Group)).unwrap();
    let pid = child.pid;
    assert!(child.log.is_some());
    drop(inheritable);
    // Read from outside: anything the child listed itself would open a descriptor.
    let fds = |pid: Pid| -> Vec<(String, String)> {
        let dir = format!("/proc/{pid}/fd");
        let mut fds: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            // A descriptor closed between the listing and its `readlink` is skipped.
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let target = std::fs::read_link(entry.path()).ok()?;
                let kind = target.to_string_lossy().split(':').next()?.to_owned();
                Some((entry.file_name().to_string_lossy().into_owned(), kind))
            })
            .collect();
        fds.sort();
        fds
    };
    let expected = [("0", "/dev/null"), ("1", "pipe"), ("2", "pipe")];
    let expected: Vec<_> = expected
        .iter()
        .map(|(fd, kind)| (fd.to_string(), kind.to_string()))
        .collect();
    // While `sh` and then `sleep` start, the dynamic loader holds a descriptor or two
    // for a moment; a descriptor inherited from us would stay for good.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut found = fds(pid);
    while found != expected && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
        found = fds(pid);
    }
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).unwrap();
    reap(pid, true).unwrap();
    drop((read, write));
    assert_eq!(found, expected);
}

/// A `SigBlk:` or `SigIgn:` mask out of a `/proc/<pid>/status`.
fn signal_mask(status: &str, field: &str) -> u64 {
    let hex = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .unwrap()
        .trim();
    u64::from_str_radix(hex, 16).unwrap()
}

#[test]
fn the_child_blocks_no_signal_and_ignores_only_what_we_ignore_but_sigpipe() {
    // `exec`: the status read is the command's own, not that of a shell waiting for it.
    let (child, _) = run("exec cat /proc/self/status", Path::new("/")).unwrap();
    let ours = std::fs::read_to_string("/proc/self/status").unwrap();
    assert_eq!(signal_mask(&child, "SigBlk:"), 0);
    // The test harness, like every Rust program, ignores SIGPIPE: the child must
    // not, or `yes | head -1` would never end. Whatever else we ignore, it inherits
    // (as after fork and exec).
    let sigpipe = 1 << (libc::SIGPIPE - 1);
    assert_ne!(signal_mask(&ours, "SigIgn:") & sigpipe, 0);
    assert_eq!(
        signal_mask(&child, "SigIgn:"),
        signal_mask(&ours, "SigIgn:") & !sigpipe
    );
}

#[test]
fn runs_in_cwd_with_exactly_the_given_environment() {
    let dir = tempfile::tempdir().unwrap();
    let env = TaskEnv::from([("PATH".into(), "/usr/bin:/bin".into())]);
    let shell = ShellCommand::new(
        "pwd; echo \"$PATH\"; echo \"[$CARGO_MANIFEST_DIR]\"",
        dir.path(),
        &env,
    )
    .unwrap();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    let pid = started(spawn(&shell, write.as_fd(), None, Session::Group))
        .unwrap()
        .pid;
    drop(write);
    let mut output = String::new();
    File::from(read).read_to_string(&mut output).unwrap();
    assert!(reap(pid, true).unwrap().unwrap().success());
    let cwd = dir.path().canonicalize().unwrap();
    // Ours (cargo sets this one for tests) does not come through: `env` is all.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    assert_eq!(output, format!("{}\n/usr/bin:/bin\n[]\n", cwd.display()));
}

#[test]
fn a_missing_cwd_is_an_error_and_leaves_no_child() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone");
    let error = run("echo ran", &gone).unwrap_err();
    assert_eq!(error.kind(), io::ErrorKind::NotFound);
    // The child that failed was reaped: this thread, which made it, has no child left,
    // not even a zombie. (Asked of this thread only: a `waitpid(-1)` could reap another
    // test's child when tests share a process.)
    let children = std::fs::read_to_string("/proc/thread-self/children").unwrap();
    assert_eq!(children.trim(), "", "children of this thread: {children}");
}

#[test]
fn a_nul_byte_is_refused_before_anything_runs() {
    let error = ShellCommand::new("echo \0", Path::new("/"), &TaskEnv::new())
        .err()
        .unwrap();
    assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
}

#[test]
fn spawns_from_many_threads_at_once_each_get_their_own_output() {
    let threads: Vec<_> = (0..8)
        .map(|i| std::thread::spawn(move || run(&format!("echo {i}"), Path::new("/")).unwrap()))
        .collect();
    for (i, thread) in threads.into_iter().enumerate() {
        let (output, status) = thread.join().unwrap();
        assert_eq!(output, format!("{i}\n"));
        assert!(status.success());
    }
}

#[test]
fn the_child_creates_the_log_new_private_and_ours() {
    use std::io::{Seek, Write};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bash_1.log");
    let shell = ShellCommand::new("echo ran", Path::new("/"), &TaskEnv::new())
        .unwrap()
        .with_log(&path)
        .unwrap();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    let child = started(spawn(&shell, write.as_fd(), None, Session::Group)).unwrap();
    drop(write);
    let mut output = String::new();
    File::from(read).read_to_string(&mut output).unwrap();
    assert!(reap(child.pid, true).unwrap().unwrap().success());
    assert_eq!(output, "ran\n");

    let log = child.log.expect("the child created the log");
    let flags = nix::fcntl::fcntl(&log, nix::fcntl::FcntlArg::F_GETFD).unwrap();
    assert_ne!(flags & libc::FD_CLOEXEC, 0, "the log is close-on-exec");
    let mut log = File::from(log);
    let on_disk = std::fs::metadata(&path).unwrap();
    assert_eq!(log.metadata().unwrap().ino(), on_disk.ino());
    assert_eq!(on_disk.permissions().mode() & 0o777, 0o600);
    // Readable and writable, as `open_new` makes it.
    log.write_all(b"kept").unwrap();
    log.rewind().unwrap();
    let mut kept = String::new();
    log.read_to_string(&mut kept).unwrap();
    assert_eq!(kept, "kept");
}

#[test]
fn a_log_that_exists_is_not_opened_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bash_1.log");
    std::fs::write(&path, "someone else's").unwrap();
    let marker = dir.path().join("ran");
    let shell = ShellCommand::new(
        &format!("touch '{}'", marker.display()),
        Path::new("/"),
        &TaskEnv::new(),
    )
    .unwrap()
    .with_log(&path)
    .unwrap();
    let (_read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    let error = match spawn(&shell, write.as_fd(), None, Session::Group) {
        Err(SpawnError::Log(error)) => error,
        other => panic!("expected a log error, got {other:?}"),
    };
    assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "someone else's");
    assert!(!marker.exists(), "the command must not have run");
    // The child that failed was reaped (asked of this thread only, as above).
    let children = std::fs::read_to_string("/proc/thread-self/children").unwrap();
    assert_eq!(children.trim(), "", "children of this thread: {children}");
}

#[test]
fn a_start_that_fails_after_the_log_says_so_and_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bash_1.log");
    let shell = ShellCommand::new("echo ran", &dir.path().join("gone"), &TaskEnv::new())
        .unwrap()
        .with_log(&path)
        .unwrap();
    let (_read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
    match spawn(&shell, write.as_fd(), None, Session::Group) {
        Err(SpawnError::Start { source, log_made }) => {
            assert_eq!(source.kind(), io::ErrorKind::NotFound);
            assert!(
                log_made,
                "the log was made before the missing cwd was found"
            );
        }
        other => panic!("expected a start error, got {other:?}"),
    }
    assert!(path.exists());
    // The log's descriptor went with the error: nothing of ours points at it.
    let holders: Vec<_> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| target == &path)
        .collect();
    assert!(holders.is_empty(), "still open: {holders:?}");
}
