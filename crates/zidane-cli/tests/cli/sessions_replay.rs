//! `zidane sessions` lists what print mode stored; `zidane replay <id>` paints it again
//! (banners, never raw XML), plain into a pipe.

use std::time::Duration;

use crate::support::{wait_bounded, zidane};

#[test]
fn sessions_lists_and_replay_repaints_a_stored_session() {
    let dir = tempfile::tempdir().unwrap();
    let empty = zidane(dir.path(), &["sessions"]).output().unwrap();
    assert!(empty.status.success());
    assert!(
        String::from_utf8(empty.stdout)
            .unwrap()
            .starts_with("·· no sessions under ")
    );

    let child = zidane(dir.path(), &["--demo", "-p", "build it", "--wait"])
        .spawn()
        .unwrap();
    let live = wait_bounded(child, Duration::from_secs(60));
    assert!(live.status.success());

    let listing = zidane(dir.path(), &["sessions"]).output().unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    let line = listing.lines().next().unwrap();
    assert!(line.ends_with("6 turns  build it"), "{listing}");
    assert!(!listing.contains('\x1b'));
    let id = line.split_whitespace().next().unwrap();

    let replay = zidane(dir.path(), &["replay", id]).output().unwrap();
    assert!(replay.status.success());
    let replay = String::from_utf8(replay.stdout).unwrap();
    assert_eq!(
        replay,
        String::from_utf8(live.stdout).unwrap(),
        "replay paints what the live run painted"
    );

    let missing = zidane(dir.path(), &["replay", "nope"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8(missing.stderr)
            .unwrap()
            .contains("no session nope under")
    );
}

#[test]
fn without_zidane_user_dir_sessions_live_in_the_platform_data_dir() {
    let home = tempfile::tempdir().unwrap();
    let out = zidane(home.path(), &["sessions"])
        .env_remove("ZIDANE_USER_DIR")
        .env("HOME", home.path())
        .env("XDG_DATA_HOME", home.path().join("data"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let expected = format!(
        "·· no sessions under {}\n",
        home.path().join("data/zidane").display()
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}
