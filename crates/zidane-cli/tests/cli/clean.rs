//! `zidane clean` removes ended sessions and never a live one; `zidane mcp` removes old
//! ended sessions in the background as it starts, and holds its own session live.

use std::path::Path;
use std::time::Duration;

use zidane::agent::{AgentError, SESSIONS_DIR, Session, SessionStore};
use zidane_test_support::age_files;

use crate::mcp_support::{StdioServer, UserDirBy, WAIT};
use crate::support::{wait_bounded, zidane};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A stored session `id` with a task log, every file of it last modified `age` ago.
fn stored(store: &SessionStore, id: &str, age: Duration) {
    store.save(&Session::new(id)).unwrap();
    let tasks = store.tasks_dir(id).unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(tasks.join("bash_1.log"), "built\n").unwrap();
    age_files(&store.session_dir(id).unwrap(), age);
}

fn exists(store: &SessionStore, id: &str) -> bool {
    store.session_dir(id).unwrap().exists()
}

/// `zidane clean ARGS` on `dir`: its stdout, after checking it succeeded.
fn clean(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["clean"];
    all.extend_from_slice(args);
    let out = wait_bounded(zidane(dir, &all).spawn().unwrap(), Duration::from_secs(30));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "zidane {all:?}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !stdout.contains('\x1b'),
        "plain text into a pipe: {stdout:?}"
    );
    stdout
}

/// The ids named by the `removed session` (or `would remove session`) lines.
fn named(stdout: &str, verb: &str) -> Vec<String> {
    let prefix = format!("{verb} session ");
    stdout
        .lines()
        .filter_map(|line| line.strip_prefix(&prefix))
        .map(|rest| rest.split_whitespace().next().unwrap().to_owned())
        .collect()
}

#[test]
fn clean_removes_ended_sessions_and_never_a_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    stored(&store, "s-old", 40 * DAY);
    // Held as a running host holds its session, through the same API.
    let hold = store.hold("s-live").unwrap();
    stored(&store, "s-live", 40 * DAY);
    stored(&store, "s-new", Duration::ZERO);

    let plan = clean(dir.path(), &["--dry-run", "--older-than", "30"]);
    assert_eq!(named(&plan, "would remove"), ["s-old"], "{plan}");
    assert!(plan.contains("·· kept session s-live: in use\n"), "{plan}");
    assert!(
        plan.lines()
            .last()
            .unwrap()
            .starts_with("·· would remove 1 session, "),
        "{plan}"
    );
    let plan = clean(dir.path(), &["--dry-run"]);
    assert_eq!(named(&plan, "would remove"), ["s-old", "s-new"], "{plan}");
    assert!(
        exists(&store, "s-old") && exists(&store, "s-new") && exists(&store, "s-live"),
        "a dry run removes nothing"
    );

    let removed = clean(dir.path(), &["--older-than", "30"]);
    assert_eq!(named(&removed, "removed"), ["s-old"], "{removed}");
    assert!(
        removed.contains("·· kept session s-live: in use\n"),
        "{removed}"
    );
    assert!(
        removed
            .lines()
            .last()
            .unwrap()
            .starts_with("·· removed 1 session, "),
        "{removed}"
    );
    assert!(!exists(&store, "s-old"));
    assert!(exists(&store, "s-new") && exists(&store, "s-live"));

    let removed = clean(dir.path(), &[]);
    assert_eq!(named(&removed, "removed"), ["s-new"], "{removed}");
    assert!(exists(&store, "s-live"));

    // Once its host lets go, it is ended like any other.
    drop(hold);
    let removed = clean(dir.path(), &[]);
    assert_eq!(named(&removed, "removed"), ["s-live"], "{removed}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join(SESSIONS_DIR))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert_eq!(
        clean(dir.path(), &[]),
        format!("·· nothing to remove under {}\n", dir.path().display())
    );
}

#[test]
fn a_bad_retention_variable_stops_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = zidane(dir.path(), &["sessions"])
        .env("ZIDANE_RETENTION_DAYS", "a month")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("zidane: ZIDANE_RETENTION_DAYS=\"a month\" is not a valid value"),
        "{stderr}"
    );
}

#[tokio::test]
async fn zidane_mcp_removes_old_ended_sessions_as_it_starts_and_keeps_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let store = SessionStore::new(&path);
    stored(&store, "s-old", 3 * DAY);
    stored(&store, "s-recent", Duration::from_secs(60 * 60));

    let mut server =
        StdioServer::start_in(dir, UserDirBy::Flag, &[], &[("ZIDANE_RETENTION_DAYS", "1")]).await;

    zidane_test_support::poll_until(
        WAIT,
        Duration::from_millis(20),
        "zidane mcp did not remove the old ended session",
        || !exists(&store, "s-old"),
    )
    .await;
    assert!(exists(&store, "s-recent"), "younger than a day: kept");

    // Its own session is the one other directory, and it is held by the server.
    let own: Vec<String> = std::fs::read_dir(path.join(SESSIONS_DIR))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|id| id != "s-recent")
        .collect();
    assert_eq!(own.len(), 1, "{own:?}");
    let own = own[0].clone();
    match store.hold(&own) {
        Err(AgentError::SessionLocked { holder_pid, .. }) => {
            assert_eq!(holder_pid, Some(server.pid()));
        }
        other => panic!("the server's session is not held: {other:?}"),
    }

    // `zidane clean` keeps it while the server runs...
    let cleaned = {
        let path = path.clone();
        tokio::task::spawn_blocking(move || clean(&path, &[]))
            .await
            .unwrap()
    };
    assert_eq!(named(&cleaned, "removed"), ["s-recent"], "{cleaned}");
    assert!(
        cleaned.contains(&format!("·· kept session {own}: in use\n")),
        "{cleaned}"
    );
    assert!(exists(&store, &own));

    // ...and removes it once the server has ended.
    drop(server.stdin.take());
    let status = tokio::time::timeout(WAIT, server.child.wait())
        .await
        .expect("zidane mcp did not exit when stdin closed")
        .unwrap();
    assert!(status.success(), "{status}");
    let cleaned = tokio::task::spawn_blocking(move || clean(&path, &[]))
        .await
        .unwrap();
    assert_eq!(named(&cleaned, "removed"), [own.as_str()], "{cleaned}");
    assert!(!exists(&store, &own));
}
