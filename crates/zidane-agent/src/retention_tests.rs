use std::path::Path;
use std::time::{Duration, SystemTime};

use proptest::prelude::*;

use super::*;
use crate::session::{Session, SessionHold, SessionStore};

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Sets the modification time of every file under `dir` to `age` ago.
fn age_files(dir: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    let mut pending = vec![dir.to_owned()];
    while let Some(current) = pending.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let entry = entry.unwrap();
            let file_type = entry.file_type().unwrap();
            if file_type.is_dir() {
                pending.push(entry.path());
            } else if file_type.is_file() {
                std::fs::File::options()
                    .write(true)
                    .open(entry.path())
                    .unwrap()
                    .set_modified(when)
                    .unwrap();
            }
        }
    }
}

/// A stored session `id` with a task log of `log_bytes` bytes, last modified `age` ago.
fn session(store: &SessionStore, id: &str, log_bytes: usize, age: Duration) {
    store.save(&Session::new(id)).unwrap();
    let tasks = store.tasks_dir(id).unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(tasks.join("bash_1.log"), vec![b'x'; log_bytes]).unwrap();
    age_files(&store.session_dir(id).unwrap(), age);
}

/// Holds session `id` live, its files (the lock's included) aged `age`.
fn live(store: &SessionStore, id: &str, log_bytes: usize, age: Duration) -> SessionHold {
    let hold = store.hold(id).unwrap();
    session(store, id, log_bytes, age);
    hold
}

fn exists(store: &SessionStore, id: &str) -> bool {
    store.session_dir(id).unwrap().exists()
}

fn removed_ids(report: &RetentionReport) -> Vec<&str> {
    report.removed.iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn no_sessions_directory_is_an_empty_report() {
    let dir = tempfile::tempdir().unwrap();
    let report = RetentionPolicy::new().apply(dir.path()).unwrap();
    assert!(report.removed.is_empty() && report.failed.is_empty());
    assert_eq!(report.total_bytes, 0);
}

#[test]
fn ended_sessions_past_the_age_are_removed_and_younger_ones_kept() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    session(&store, "old", 10, 40 * DAY);
    session(&store, "older", 10, 50 * DAY);
    session(&store, "young", 10, 2 * DAY);

    let plan = RetentionPolicy::new().plan(dir.path()).unwrap();
    assert_eq!(removed_ids(&plan), ["older", "old"]);
    assert!(
        exists(&store, "old") && exists(&store, "older"),
        "a plan removes nothing"
    );

    let report = RetentionPolicy::new().apply(dir.path()).unwrap();
    assert_eq!(removed_ids(&report), ["older", "old"]);
    assert!(
        report
            .removed
            .iter()
            .all(|r| r.reason == RemovalReason::Age)
    );
    assert!(report.failed.is_empty(), "{:?}", report.failed);
    assert!(!exists(&store, "old") && !exists(&store, "older"));
    assert!(exists(&store, "young"));
    assert_eq!(report.bytes_freed, plan.bytes_freed);
    assert_eq!(report.total_bytes, plan.total_bytes);

    let none_by_age = RetentionPolicy::new().max_age(None).max_bytes(None);
    session(&store, "ancient", 10, 400 * DAY);
    assert!(none_by_age.apply(dir.path()).unwrap().removed.is_empty());
    assert!(exists(&store, "ancient"));
}

#[test]
fn the_newest_file_of_a_session_is_its_last_modification() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    session(&store, "s", 10, 40 * DAY);
    // A task log written yesterday keeps the session.
    let log = store.tasks_dir("s").unwrap().join("bash_2.log");
    std::fs::write(&log, b"recent").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&log)
        .unwrap()
        .set_modified(SystemTime::now() - DAY)
        .unwrap();
    let report = RetentionPolicy::new().apply(dir.path()).unwrap();
    assert!(report.removed.is_empty());
    assert!(exists(&store, "s"));
}

#[test]
fn over_the_cap_the_oldest_ended_sessions_go_first_until_it_fits() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    session(&store, "a", 1000, 5 * DAY);
    session(&store, "b", 1000, 4 * DAY);
    session(&store, "c", 1000, 3 * DAY);
    session(&store, "d", 1000, 2 * DAY);
    let before = RetentionPolicy::new()
        .max_age(None)
        .max_bytes(None)
        .plan(dir.path())
        .unwrap()
        .total_bytes;
    assert!(before >= 4000, "{before}");
    // Room for two and a half sessions: the two oldest go.
    let cap = before - 1500;
    let report = RetentionPolicy::new()
        .max_bytes(Some(cap))
        .apply(dir.path())
        .unwrap();
    assert_eq!(removed_ids(&report), ["a", "b"]);
    assert!(
        report
            .removed
            .iter()
            .all(|r| r.reason == RemovalReason::Size)
    );
    assert!(report.total_bytes <= cap);
    assert_eq!(report.total_bytes + report.bytes_freed, before);
    assert!(exists(&store, "c") && exists(&store, "d"));
}

#[test]
fn a_live_session_is_kept_however_old_and_over_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let hold = live(&store, "held", 5000, 90 * DAY);
    session(&store, "ended", 10, 60 * DAY);
    let policy = RetentionPolicy::new().max_bytes(Some(1));

    let plan = policy.plan(dir.path()).unwrap();
    assert_eq!(removed_ids(&plan), ["ended"]);
    assert_eq!(plan.kept_live, ["held"]);

    let report = policy.apply(dir.path()).unwrap();
    assert_eq!(removed_ids(&report), ["ended"]);
    assert_eq!(report.kept_live, ["held"]);
    assert!(exists(&store, "held"));
    assert!(report.total_bytes >= 5000, "the live session still counts");

    // Once let go, it is an ended session like any other.
    drop(hold);
    let report = policy.apply(dir.path()).unwrap();
    assert_eq!(removed_ids(&report), ["held"]);
    assert!(!exists(&store, "held"));
}

#[test]
fn removing_a_session_takes_its_lock_so_it_can_be_started_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    session(&store, "s", 10, 40 * DAY);
    RetentionPolicy::new().apply(dir.path()).unwrap();
    assert!(!exists(&store, "s"));
    let _hold = store.hold("s").unwrap();
    store.save(&Session::new("s")).unwrap();
}

#[test]
fn entries_that_are_not_session_directories_count_but_stay() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(SESSIONS_DIR);
    std::fs::create_dir_all(root.join("not a session")).unwrap();
    std::fs::write(root.join("not a session/file"), vec![b'x'; 100]).unwrap();
    std::fs::write(root.join("stray.txt"), vec![b'x'; 50]).unwrap();
    age_files(&root, 400 * DAY);
    let report = RetentionPolicy::new()
        .max_bytes(Some(0))
        .apply(dir.path())
        .unwrap();
    assert!(report.removed.is_empty());
    assert_eq!(report.total_bytes, 150);
    assert!(root.join("not a session/file").exists() && root.join("stray.txt").exists());
}

#[cfg(unix)]
#[test]
fn a_symlink_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("precious"), vec![b'x'; 4096]).unwrap();
    let store = SessionStore::new(dir.path());
    session(&store, "s", 10, 40 * DAY);
    let session_dir = store.session_dir("s").unwrap();
    // A link inside a session, to a directory outside: removed as a link.
    std::os::unix::fs::symlink(outside.path(), session_dir.join("tasks/link")).unwrap();
    // A link in place of a session, to the same directory: never removed.
    let root = dir.path().join(SESSIONS_DIR);
    std::os::unix::fs::symlink(outside.path(), root.join("s-link")).unwrap();
    let report = RetentionPolicy::new()
        .max_age(Some(Duration::ZERO))
        .apply(dir.path())
        .unwrap();
    assert_eq!(removed_ids(&report), ["s"]);
    assert!(
        report.bytes_freed < 4096,
        "the target's size is not counted"
    );
    assert!(!session_dir.exists());
    assert!(outside.path().join("precious").exists());
    assert!(root.join("s-link").symlink_metadata().is_ok());

    // A sessions directory that is a link is refused whole.
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&root, linked.path().join(SESSIONS_DIR)).unwrap();
    let error = RetentionPolicy::new().apply(linked.path()).unwrap_err();
    assert!(matches!(error, RetentionError::Unsafe { .. }), "{error}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever the ages, sizes and policy, no live session is removed, and what is
    /// removed follows the policy.
    #[test]
    fn a_live_session_is_never_removed(
        sessions in proptest::collection::vec((0u64..90, 0usize..3000, any::<bool>()), 1..8),
        max_age_days in proptest::option::of(0u64..60),
        max_bytes in proptest::option::of(0u64..20_000),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let mut holds = Vec::new();
        for (i, (age_days, bytes, is_live)) in sessions.iter().enumerate() {
            let id = format!("s{i}");
            let age = DAY * u32::try_from(*age_days).unwrap() + Duration::from_secs(60);
            if *is_live {
                holds.push(live(&store, &id, *bytes, age));
            } else {
                session(&store, &id, *bytes, age);
            }
        }
        let policy = RetentionPolicy::new()
            .max_age(max_age_days.map(|days| DAY * u32::try_from(days).unwrap()))
            .max_bytes(max_bytes);
        let report = policy.apply(dir.path()).unwrap();
        prop_assert!(report.failed.is_empty(), "{:?}", report.failed);
        for (i, (age_days, _, is_live)) in sessions.iter().enumerate() {
            let id = format!("s{i}");
            let removed = report.removed.iter().any(|r| r.id == id);
            prop_assert_eq!(removed, !exists(&store, &id));
            if *is_live {
                prop_assert!(exists(&store, &id), "live session {} was removed", id);
            } else if max_age_days.is_some_and(|max| *age_days >= max) {
                prop_assert!(removed, "ended session {} is past the age", id);
            }
        }
        // Over the cap still: then every ended session is gone.
        if max_bytes.is_some_and(|cap| report.total_bytes > cap) {
            for (i, (_, _, is_live)) in sessions.iter().enumerate() {
                let id = format!("s{i}");
                prop_assert!(*is_live || !exists(&store, &id), "{} is over the cap", id);
            }
        }
        drop(holds);
    }
}
