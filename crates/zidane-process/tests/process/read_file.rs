//! `read_file`: windows of lines with the total and what remains; lossy UTF-8.

use std::io::Write;

use zidane_context::{ContextError, ExecutionContext, ReadRange};

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
