//! Task ids are `bash_1`, `bash_2`, … per context and name the log files.

use zidane_context::ExecutionContext;
use zidane_process::{ProcessContext, parse_task_log_filename};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_are_sequential_and_name_the_log_files() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let mut paths = Vec::new();
    for n in 1..=3 {
        let started = f.start(&format!("echo task{n}"), &exits).await;
        assert_eq!(started.task_id.to_string(), format!("bash_{n}"));
        let expected = f
            .tasks_dir()
            .join(format!("bash_{n}.{}.log", f.context.context_timestamp()));
        assert_eq!(started.output_path, expected);
        let name = expected.file_name().unwrap().to_str().unwrap();
        let (id, timestamp) = parse_task_log_filename(name).unwrap();
        assert_eq!(id, started.task_id);
        assert_eq!(timestamp, f.context.context_timestamp());
        assert!(started.pid > 1);
        paths.push(started.output_path);
    }
    exits.wait_for(3).await;
    for (n, path) in paths.iter().enumerate() {
        assert_eq!(read_log(path), format!("task{}\n", n + 1));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_count_per_context_across_its_handles() {
    let f = Fixture::new().await;
    let other = f.context.create_handle().await.unwrap();
    let exits = Exits::default();
    let first = f.start("true", &exits).await;
    let second = f
        .context
        .exec_background(other, "true", exits.attach(f.options()))
        .await
        .unwrap();
    assert_eq!(first.task_id.to_string(), "bash_1");
    assert_eq!(second.task_id.to_string(), "bash_2");
    exits.wait_for(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_contexts_on_one_directory_never_share_a_file() {
    let f = Fixture::new().await;
    let second = ProcessContext::builder().cwd(f.dir.path()).build();
    let second_handle = second.create_handle().await.unwrap();
    assert_ne!(f.context.context_timestamp(), second.context_timestamp());

    let exits = Exits::default();
    let a = f.start("echo from-first", &exits).await;
    let b = second
        .exec_background(second_handle, "echo from-second", exits.attach(f.options()))
        .await
        .unwrap();
    assert_eq!(a.task_id, b.task_id, "both contexts count from bash_1");
    assert_ne!(a.output_path, b.output_path);
    exits.wait_for(2).await;
    assert_eq!(read_log(&a.output_path), "from-first\n");
    assert_eq!(read_log(&b.output_path), "from-second\n");
}
