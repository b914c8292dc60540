//! The numbers docs/CLI.md reports, measured in a real terminal. Ignored by default (they
//! take a while and only print): `cargo nextest run -p zidane-cli --run-ignored only measure`.
#![allow(clippy::print_stdout)]

use std::time::{Duration, Instant};

use zidane::agent::{Session, SessionStore};
use zidane::wire::{ContentBlock, Role, Turn};

use crate::support::{Tmux, cpu_ticks, model_args, tmux_present};

const STEP: Duration = Duration::from_secs(60);

/// Not a check: measures the first frame, a resume's repaint and idle CPU, and prints
/// them. Ignored because it only reports numbers (a loaded machine must not fail CI)
/// and takes a while; run it on purpose with `--run-ignored only`.
#[test]
#[ignore = "a measurement: run on purpose, read its output"]
fn measure_first_frame_resume_and_idle_cpu() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args, env) = model_args();

    let began = Instant::now();
    let tmux = Tmux::start(dir.path(), &args, &env);
    tmux.wait_text("ctrl+k cancel", STEP);
    println!("first frame: {:?}", began.elapsed());

    // Eight quiet tasks, then ten seconds of nothing.
    tmux.keys(&["-l", "start eight tasks"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("ctrl+k cancel (8)", STEP);
    tmux.wait_text("idle", STEP);
    std::thread::sleep(Duration::from_secs(1));
    let before = cpu_ticks(tmux.pid);
    std::thread::sleep(Duration::from_secs(10));
    let after = cpu_ticks(tmux.pid);
    println!(
        "idle cpu, 10 s, 8 running tasks: {} ticks (utime+stime)",
        after - before
    );
    tmux.keys(&["C-d"]);
    drop(tmux);

    let store = SessionStore::new(dir.path());
    let mut session = Session::new("long");
    for n in 0..10_000 {
        let (role, text) = if n % 2 == 0 {
            (Role::User, format!("prompt {n}"))
        } else {
            (Role::Assistant, format!("answer {n}"))
        };
        session.turns.push(Turn {
            role,
            content: vec![ContentBlock::Text { text }],
        });
    }
    store.save(&session).unwrap();
    let mut resume = args;
    resume.extend(["--resume".to_owned(), "long".to_owned()]);
    let began = Instant::now();
    let tmux = Tmux::start(dir.path(), &resume, &env);
    tmux.wait_text("answer 9999", STEP);
    println!(
        "resume of 10,000 turns, to the first frame: {:?}",
        began.elapsed()
    );
    tmux.keys(&["C-d"]);
}
