//! Sessions that hold: one agent per session, saves that are atomic and private, and
//! directories that someone else could tamper with refused.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zidane_agent::{
    Agent, AgentError, RunOptions, SESSION_FILE, SESSION_LOCK_FILE, ScriptedModel, Session,
    SessionStore,
};
use zidane_context::MockContext;

fn agent_on(store: &SessionStore, id: &str, model: ScriptedModel) -> Result<Agent, AgentError> {
    Agent::builder(Arc::new(model), Arc::new(MockContext::new()))
        .store(store.clone())
        .session(Session::new(id))
        .build()
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o777
}

#[tokio::test]
async fn a_second_agent_on_a_held_session_is_refused_until_the_first_is_destroyed() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let first = agent_on(&store, "s1", ScriptedModel::new().text("one")).unwrap();
    first.run(RunOptions::new("hello")).await.unwrap();

    let refused = agent_on(&store, "s1", ScriptedModel::new()).unwrap_err();
    match &refused {
        AgentError::SessionLocked {
            session_id,
            holder_pid,
        } => {
            assert_eq!(session_id, "s1");
            assert_eq!(*holder_pid, Some(std::process::id()));
        }
        other => panic!("expected SessionLocked, got {other:?}"),
    }
    assert!(refused.to_string().contains("in use by another agent"));
    // A reader needs no lock.
    assert_eq!(store.load("s1").unwrap().turns.len(), 2);
    // Another session is free.
    agent_on(&store, "s2", ScriptedModel::new()).unwrap();

    first.destroy().await.unwrap();
    let second = agent_on(&store, "s1", ScriptedModel::new()).unwrap();
    drop(second);
    // Dropping an agent (a host that exits) releases it too.
    agent_on(&store, "s1", ScriptedModel::new()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_never_sees_a_half_written_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let mut model = ScriptedModel::new();
    for i in 0..60 {
        model = model.text(format!("reply {i} {}", "x".repeat(4096)));
    }
    let agent = agent_on(&store, "s1", model).unwrap();
    agent.run(RunOptions::new("first")).await.unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let store = store.clone();
        let done = done.clone();
        std::thread::spawn(move || {
            let mut reads = 0;
            while !done.load(Ordering::Acquire) {
                let session = store.load("s1").expect("every read parses");
                assert!(!session.turns.is_empty());
                reads += 1;
            }
            reads
        })
    };
    for i in 1..60 {
        agent
            .run(RunOptions::new(format!("prompt {i}")))
            .await
            .unwrap();
    }
    done.store(true, Ordering::Release);
    assert!(reader.join().unwrap() > 0);
    assert_eq!(store.load("s1").unwrap(), agent.session());
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(store.session_dir("s1").unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != SESSION_FILE && n != SESSION_LOCK_FILE)
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[tokio::test]
async fn saves_are_private_and_never_written_through_a_planted_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let session_dir = store.session_dir("s1").unwrap();
    std::fs::create_dir_all(&session_dir).unwrap();
    std::fs::set_permissions(&session_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "the user's file").unwrap();
    // The temporary name a save writing in place would open, and follow.
    std::os::unix::fs::symlink(&victim, session_dir.join(format!("{SESSION_FILE}.tmp"))).unwrap();

    // Even under a permissive umask, a session file is the user's alone.
    let old_umask = nix::sys::stat::umask(nix::sys::stat::Mode::empty());
    let agent = agent_on(&store, "s1", ScriptedModel::new().text("done"));
    let run = match &agent {
        Ok(agent) => agent.run(RunOptions::new("hello")).await.map(|_| ()),
        Err(_) => Ok(()),
    };
    nix::sys::stat::umask(old_umask);
    let agent = agent.unwrap();
    run.unwrap();

    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's file");
    assert_eq!(mode(&session_dir.join(SESSION_FILE)), 0o600);
    assert_eq!(mode(&session_dir.join(SESSION_LOCK_FILE)), 0o600);
    assert_eq!(store.load("s1").unwrap(), agent.session());
}

#[tokio::test]
async fn new_session_directories_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let agent = agent_on(&store, "fresh", ScriptedModel::new().text("ok")).unwrap();
    agent.run(RunOptions::new("hi")).await.unwrap();
    assert_eq!(mode(&store.session_dir("fresh").unwrap()), 0o700);
}

/// Builds an agent on `s1` after `prepare` made its directories, and checks that it is
/// refused with `UnsafeSessionDir` naming `bad` and that nothing was written.
fn assert_refused(
    prepare: impl FnOnce(&SessionStore, &Path),
    bad: impl Fn(&SessionStore) -> std::path::PathBuf,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    prepare(&store, dir.path());
    let before = listing(dir.path());
    match agent_on(&store, "s1", ScriptedModel::new()) {
        Err(AgentError::UnsafeSessionDir { path, reason }) => {
            assert_eq!(path, bad(&store), "{reason}");
        }
        other => panic!("expected UnsafeSessionDir, got {other:?}"),
    }
    assert!(matches!(
        store.save(&Session::new("s1")),
        Err(AgentError::UnsafeSessionDir { .. })
    ));
    assert_eq!(listing(dir.path()), before, "nothing written");
}

fn listing(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            out.push(path.display().to_string());
            if entry.file_type().unwrap().is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_session_directory_that_is_a_symlink_is_refused() {
    assert_refused(
        |store, root| {
            let elsewhere = root.join("elsewhere");
            std::fs::create_dir(&elsewhere).unwrap();
            std::fs::create_dir_all(store.session_dir("s1").unwrap().parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(&elsewhere, store.session_dir("s1").unwrap()).unwrap();
        },
        |store| store.session_dir("s1").unwrap(),
    );
}

#[test]
fn a_world_writable_session_directory_is_refused() {
    assert_refused(
        |store, _| {
            let dir = store.session_dir("s1").unwrap();
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        },
        |store| store.session_dir("s1").unwrap(),
    );
}

#[test]
fn a_group_writable_or_symlinked_tasks_directory_is_refused() {
    assert_refused(
        |store, _| {
            let tasks = store.tasks_dir("s1").unwrap();
            std::fs::create_dir_all(&tasks).unwrap();
            std::fs::set_permissions(
                tasks.parent().unwrap(),
                std::fs::Permissions::from_mode(0o700),
            )
            .unwrap();
            std::fs::set_permissions(&tasks, std::fs::Permissions::from_mode(0o770)).unwrap();
        },
        |store| store.tasks_dir("s1").unwrap(),
    );
    assert_refused(
        |store, root| {
            let dir = store.session_dir("s1").unwrap();
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::symlink(root, store.tasks_dir("s1").unwrap()).unwrap();
        },
        |store| store.tasks_dir("s1").unwrap(),
    );
}

#[test]
fn a_session_directory_of_another_user_is_refused() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: giving a directory to another user needs root");
        return;
    }
    assert_refused(
        |store, _| {
            let dir = store.session_dir("s1").unwrap();
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        },
        |store| store.session_dir("s1").unwrap(),
    );
}
