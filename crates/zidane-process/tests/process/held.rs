//! Held tasks: a foreground call's command runs as a task that takes no id of the
//! sequence and is not listed until it is named; named, it takes the next id and its
//! log moves to the matching name, whole and still written; one that ends unnamed
//! leaves no log once forgotten.

use zidane_context::{ExecutionContext, Naming};

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_task_takes_no_id_and_is_not_listed() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let held = f
        .context
        .exec_background(f.handle, "echo held", exits.attach(f.options().held(true)))
        .await
        .unwrap();
    assert!(held.task_id.is_held(), "{}", held.task_id);
    let exit = f.ended(held.task_id).await;
    assert_eq!(exit.task_id, held.task_id);
    assert!(
        f.context
            .list_background(f.handle)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(read_log(&held.output_path), "held\n");

    let next = f.start("true", &exits).await;
    assert_eq!(next.task_id.to_string(), "bash_1");
    // Named after it ended: it stays held, and says how it ended.
    let named = f.context.name_background(f.handle, held.task_id).await;
    assert_eq!(named.unwrap(), Some(Naming::Ended(exit)));
    assert!(
        f.context
            .forget_background(f.handle, held.task_id)
            .await
            .unwrap()
    );
    assert!(!held.output_path.exists(), "the held task's log was kept");
    let ids: Vec<String> = f
        .context
        .list_background(f.handle)
        .await
        .unwrap()
        .iter()
        .map(|entry| entry.task_id.to_string())
        .collect();
    assert_eq!(ids, ["bash_1"]);
    exits.wait_for(2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_task_takes_the_next_id_and_its_log_moves_whole() {
    let f = Fixture::new().await;
    let exits = Exits::snapshotting_logs();
    let command = format!("echo before; {}; echo after", wait_for_file("go"));
    let held = f
        .context
        .exec_background(f.handle, &command, exits.attach(f.options().held(true)))
        .await
        .unwrap();
    let first = f.start("true", &exits).await;
    assert_eq!(first.task_id.to_string(), "bash_1");
    eventually("the held task wrote", || {
        std::fs::read_to_string(&held.output_path).is_ok_and(|log| log == "before\n")
    })
    .await;
    // Something else made a file where the log would go: it is never written over.
    let planted = f
        .tasks_dir()
        .join(format!("bash_2.{}.log", f.context.context_timestamp()));
    std::fs::write(&planted, "planted").unwrap();

    let Some(Naming::Named(named)) = f
        .context
        .name_background(f.handle, held.task_id)
        .await
        .unwrap()
    else {
        panic!("a running held task is named");
    };
    assert_eq!(named.task_id.to_string(), "bash_2");
    assert_eq!(named.pid, held.pid);
    assert_ne!(named.output_path, planted);
    assert!(!held.output_path.exists());
    assert_eq!(std::fs::read_to_string(&planted).unwrap(), "planted");
    let listed = f.context.list_background(f.handle).await.unwrap();
    let ids: Vec<String> = listed.iter().map(|e| e.task_id.to_string()).collect();
    assert_eq!(ids, ["bash_1", "bash_2"]);
    // Naming again finds no held task under the old id.
    let again = f.context.name_background(f.handle, held.task_id).await;
    assert_eq!(again.unwrap(), None);

    f.release("go");
    let exit = f.ended(named.task_id).await;
    assert_eq!(exit.task_id, named.task_id);
    assert_eq!(exit.output_path, named.output_path);
    exits.wait_for(2).await;
    let (told, log) = exits
        .with_logs()
        .into_iter()
        .find(|(exit, _)| exit.task_id == named.task_id)
        .unwrap();
    assert_eq!(told.output_path, named.output_path);
    assert_eq!(log.unwrap(), b"before\nafter\n");
    // A named task is no longer held: forgetting it does nothing.
    assert!(
        !f.context
            .forget_background(f.handle, named.task_id)
            .await
            .unwrap()
    );
    assert!(named.output_path.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_held_task_is_not_forgotten_and_ends_with_its_handle() {
    let f = Fixture::new().await;
    let exits = Exits::default();
    let held = f
        .context
        .exec_background(f.handle, "sleep 30", exits.attach(f.options().held(true)))
        .await
        .unwrap();
    assert!(
        !f.context
            .forget_background(f.handle, held.task_id)
            .await
            .unwrap()
    );
    assert!(held.output_path.exists());
    f.context.destroy(f.handle).await.unwrap();
    let exit = exits.wait_for(1).await.remove(0);
    assert_eq!(exit.task_id, held.task_id);
    assert!(!alive(held.pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_escapee_of_a_forgotten_held_task_still_ends_with_the_session() {
    use zidane_test_support::{TokenCleanup, unique_token};

    use crate::escape::{TOKEN_VAR, processes_with_token};

    // A hostile foreground command: it leaves a process outside its group, ends at
    // once, and its call answers and forgets it.
    let f = Fixture::new().await;
    let cleanup = TokenCleanup::new(TOKEN_VAR, unique_token("held-escape"));
    let options = f.options().held(true).env(TOKEN_VAR, cleanup.token());
    let held = f
        .context
        .exec_background(
            f.handle,
            "setsid sleep 1000 >/dev/null 2>&1 </dev/null & echo left",
            options,
        )
        .await
        .unwrap();
    f.ended(held.task_id).await;
    eventually("the escapee runs", || {
        !processes_with_token(cleanup.token()).is_empty()
    })
    .await;
    assert!(
        f.context
            .forget_background(f.handle, held.task_id)
            .await
            .unwrap()
    );
    f.context.destroy(f.handle).await.unwrap();
    assert_eq!(
        processes_with_token(cleanup.token()),
        Vec::<u32>::new(),
        "a forgotten held task's escapee outlived the session"
    );
}
