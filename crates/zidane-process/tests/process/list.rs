//! `list_background` shows every task of the handle with live byte counts; ended tasks
//! stay listed.

use zidane_context::{Capabilities, DetachedTasks, ExecutionContext, TaskStatus};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_count_bytes_live_and_stay_after_the_end() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let command = format!("echo 12345; {}; echo 6789", wait_for_file("go"));
    let started = f.start(&command, &exits).await;

    let mut running = None;
    for _ in 0..3000 {
        let entry = f.context.list_background(f.handle).await.unwrap().remove(0);
        if entry.bytes_written == 6 {
            running = Some(entry);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let running = running.expect("live bytes_written reached 6");
    assert_eq!(running.status(), TaskStatus::Running);
    assert_eq!(
        (running.exit_code(), running.signal(), running.ended_at()),
        (None, None, None)
    );
    assert_eq!(running.pid, started.pid);
    assert_eq!(running.command, command);
    assert_eq!(running.cwd, f.dir.path());
    assert_eq!(running.output_path, started.output_path);

    f.release("go");
    exits.wait_for(1).await;
    let ended = f.context.list_background(f.handle).await.unwrap().remove(0);
    assert_eq!(ended.status(), TaskStatus::Exited);
    assert_eq!(ended.exit_code(), Some(0));
    assert_eq!(ended.bytes_written, 11);
    assert!(ended.ended_at().unwrap() >= ended.started_at);
    assert_eq!(ended.exit_info(), Some(exits.all()[0].clone()));
}

#[tokio::test]
async fn capabilities_are_process_lifetime_with_input_terminals_and_followed_logs() {
    let f = Fixture::new().await;
    assert_eq!(
        f.context.capabilities(),
        Capabilities::new(DetachedTasks::ProcessLifetime)
            .with_terminals()
            .with_follow_output()
    );
}
