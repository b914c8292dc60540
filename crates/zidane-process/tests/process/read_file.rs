//! `read_file`: windows of lines with the total and what remains; lossy UTF-8; only
//! regular files, and never more than the read budget.

use std::io::Write;

use zidane_context::{ContextError, ExecutionContext, ReadRange};
use zidane_process::{MAX_LINE_BYTES, ProcessContext, READ_BUDGET_BYTES};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_report_the_total_and_what_remains() {
    let f = Fixture::new().await;
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    std::fs::write(f.path("ten"), text).unwrap();
    let ten = f.path("ten");
    let read = |offset, limit| {
        f.context
            .read_file(f.handle, &ten, ReadRange::new(offset, limit))
    };

    let window = read(2, Some(3)).await.unwrap();
    assert_eq!(window.lines, ["line 3", "line 4", "line 5"]);
    assert_eq!(
        (window.offset, window.total_lines, window.remaining),
        (2, 10, 5)
    );

    let all = read(0, None).await.unwrap();
    assert_eq!(all.lines.len(), 10);
    assert_eq!(all.remaining, 0);

    let past = read(50, Some(5)).await.unwrap();
    assert!(past.lines.is_empty());
    assert_eq!((past.total_lines, past.remaining), (10, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_that_are_not_utf8_are_shown_lossily() {
    let f = Fixture::new().await;
    std::fs::write(f.path("bin"), b"ok\n\xff\xfeend\r\nlast").unwrap();
    let window = f
        .context
        .read_file(f.handle, std::path::Path::new("bin"), ReadRange::default())
        .await
        .unwrap();
    assert_eq!(window.lines, ["ok", "\u{fffd}\u{fffd}end", "last"]);
    assert_eq!(
        window.path,
        f.path("bin"),
        "relative paths start at the context's cwd"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_is_streamed_window_by_window() {
    let f = Fixture::new().await;
    let path = f.path("big");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..300_000 {
        writeln!(file, "{i:08}").unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let window = f
        .context
        .read_file(f.handle, &path, ReadRange::new(299_998, Some(10)))
        .await
        .unwrap();
    assert_eq!(window.lines, ["00299998", "00299999"]);
    assert_eq!((window.total_lines, window.remaining), (300_000, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_task_log_can_be_read_and_a_missing_file_is_an_error() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let started = f
        .start(&format!("echo first; {}", wait_for_file("go")), &exits)
        .await;
    log_lines(&started.output_path, 1).await;
    let window = f
        .context
        .read_file(f.handle, &started.output_path, ReadRange::default())
        .await
        .unwrap();
    assert_eq!(window.lines, ["first"]);
    f.release("go");
    exits.wait_for(1).await;

    let missing = f
        .context
        .read_file(f.handle, &f.path("nope"), ReadRange::default())
        .await;
    assert!(
        matches!(missing, Err(ContextError::Io { .. })),
        "{missing:?}"
    );
}

/// The error of reading `path`, which must come back within [`WAIT`] (a hang fails the
/// test instead of hanging it).
async fn read_error(f: &Fixture, path: &std::path::Path) -> String {
    let read = f.context.read_file(f.handle, path, ReadRange::default());
    match tokio::time::timeout(WAIT, read).await {
        Ok(Err(ContextError::Io { cause: source, .. })) => source.to_string(),
        Ok(other) => panic!("expected an I/O error, got {other:?}"),
        Err(_) => panic!("reading {} hung", path.display()),
    }
}

/// What is not a regular file is refused, naming what it is, without blocking on it
/// (a FIFO nobody writes to) or reading it forever (`/dev/zero`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_regular_files_are_read() {
    let f = Fixture::new().await;
    let fifo = f.path("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    assert_eq!(
        read_error(&f, &fifo).await,
        "is a FIFO (named pipe); only regular files can be read"
    );
    assert_eq!(
        read_error(&f, std::path::Path::new("/dev/zero")).await,
        "is a character device; only regular files can be read"
    );
    assert_eq!(
        read_error(&f, f.dir.path()).await,
        "is a directory, not a regular file"
    );
    let socket = std::os::unix::net::UnixListener::bind(f.path("socket")).unwrap();
    assert_eq!(
        read_error(&f, &f.path("socket")).await,
        "is a socket; only regular files can be read"
    );
    drop(socket);
}

/// A window far into a huge file costs a scan of the lines before it: the read stops
/// at its byte budget and says so, rather than reading gigabytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_file_is_read_up_to_the_budget_and_says_where_it_stopped() {
    let f = Fixture::new().await;
    assert_eq!(f.context.read_budget(), READ_BUDGET_BYTES);
    // A smaller budget than the default, so that the test is quick in a debug build.
    let budget = 16 << 20;
    let f = Fixture::with(ProcessContext::builder().read_budget(budget)).await;
    let path = f.path("sparse");
    let file = std::fs::File::create(&path).unwrap();
    let size = 5 << 30;
    file.set_len(size).unwrap();
    drop(file);
    assert!(size > READ_BUDGET_BYTES);

    let window = f
        .context
        .read_file(f.handle, &path, ReadRange::new(1_000_000_000, Some(10)))
        .await
        .unwrap();
    assert!(window.lines.is_empty());
    assert_eq!(window.stopped_after_bytes, Some(budget));
    // One line of NUL bytes so far: no newline in the budget.
    assert_eq!((window.total_lines, window.remaining), (1, 0));

    let first = f
        .context
        .read_file(f.handle, &path, ReadRange::new(0, Some(1)))
        .await
        .unwrap();
    assert_eq!(first.stopped_after_bytes, Some(budget));
    assert!(first.lines[0].ends_with(&format!(
        " [line truncated: {} more bytes]",
        budget - MAX_LINE_BYTES as u64
    )));
}

/// Whether this process has `path` open.
fn has_open(path: &std::path::Path) -> bool {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .any(|target| target == path)
}

/// A read whose caller gives up stops on its blocking thread too: with no budget, a
/// 1 TiB sparse file would keep that thread reading for hours, holding the file open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_read_stops_reading() {
    let f = Fixture::with(ProcessContext::builder().read_budget(u64::MAX)).await;
    let path = f.path("endless");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();

    let mut read = Box::pin(f.context.read_file(f.handle, &path, ReadRange::default()));
    tokio::select! {
        done = &mut read => panic!("a read of 1 TiB ended: {done:?}"),
        () = eventually("the read has the file open", || has_open(&path)) => {}
    }
    drop(read);
    eventually("the cancelled read closed the file", || !has_open(&path)).await;
}
