use std::time::{Duration, SystemTime};

use zidane_wire::{ContentBlock, Turn};

use super::*;

fn saved(store: &SessionStore, id: &str, turns: Vec<Turn>, age_secs: u64) {
    let mut session = Session::new(id);
    session.turns = turns;
    store.save(&session).unwrap();
    let file = std::fs::File::options()
        .write(true)
        .open(store.session_file(id).unwrap())
        .unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(age_secs))
        .unwrap();
}

#[test]
fn lists_newest_first_with_first_prompt_and_turns() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    let notification = "<task-notification>\n<task-id>bash_1</task-id>\n<status>exited</status>\n\
        <exit-code>0</exit-code>\n<command>make</command>\n<output-file>/t/bash_1.log</output-file>\n\
        <duration-ms>5</duration-ms>\n<summary>make (5ms) — exited 0</summary>\n</task-notification>";
    saved(
        &store,
        "old",
        vec![
            Turn::user(vec![ContentBlock::text("build it")]),
            Turn::assistant(vec![ContentBlock::text("started")]),
        ],
        3600,
    );
    saved(
        &store,
        "new",
        vec![Turn::user(vec![
            ContentBlock::text(notification),
            ContentBlock::text("and now?"),
        ])],
        10,
    );
    saved(&store, "empty", Vec::new(), 60);

    let listing = store.list().unwrap();
    assert!(listing.unreadable.is_empty(), "{:?}", listing.unreadable);
    let rows: Vec<_> = listing
        .sessions
        .iter()
        .map(|s| {
            (
                s.id.as_str(),
                s.first_prompt.as_deref(),
                s.turns,
                s.running_tasks,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("new", Some("and now?"), 1, None),
            ("empty", None, 0, None),
            ("old", Some("build it"), 2, None),
        ]
    );
    assert!(listing.sessions[0].updated_at > listing.sessions[2].updated_at);
}

#[test]
fn a_broken_session_dir_is_reported_and_the_rest_still_listed() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::new(dir.path());
    saved(&store, "good", Vec::new(), 0);
    let sessions = dir.path().join(SESSIONS_DIR);
    // Truncated mid-write by some other program, no session.json yet, an id that cannot
    // be a session, and a stray file.
    std::fs::create_dir(sessions.join("truncated")).unwrap();
    std::fs::write(
        sessions.join("truncated").join(SESSION_FILE),
        "{\"id\": \"trun",
    )
    .unwrap();
    std::fs::create_dir_all(sessions.join("no-file").join("tasks")).unwrap();
    std::fs::create_dir(sessions.join("bad id")).unwrap();
    std::fs::write(sessions.join("notes.txt"), "not a session").unwrap();

    let listing = store.list().unwrap();
    assert_eq!(listing.sessions.len(), 1);
    assert_eq!(listing.sessions[0].id, "good");
    let unreadable: Vec<_> = listing
        .unreadable
        .iter()
        .map(|u| {
            let name = u.dir.file_name().unwrap().to_string_lossy().into_owned();
            let kind = match &u.error {
                AgentError::InvalidSessionId { .. } => "id",
                AgentError::SessionIo { .. } => "io",
                AgentError::SessionFormat { .. } => "format",
                other => panic!("unexpected {other:?}"),
            };
            (name, kind)
        })
        .collect();
    assert_eq!(
        unreadable,
        [
            ("bad id".to_owned(), "id"),
            ("no-file".to_owned(), "io"),
            ("truncated".to_owned(), "format"),
        ]
    );
}

#[test]
fn no_sessions_dir_is_an_empty_listing() {
    let dir = tempfile::tempdir().unwrap();
    let listing = SessionStore::new(dir.path().join("never-made"))
        .list()
        .unwrap();
    assert!(listing.sessions.is_empty() && listing.unreadable.is_empty());
}
