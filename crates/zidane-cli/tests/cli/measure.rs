//! The measurements docs/CLI.md describes, taken in a real terminal. Ignored by default
//! (they take a while and only print); `cargo xtask bench terminal` runs them and records
//! their output in the bench results file.
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

/// Not a check: how long a key typed into an attached terminal takes to show on the
/// host's screen (median of ten, through tmux), and CPU over 10 s attached to a task
/// that waits for input. Ignored for the same reasons as the test above.
#[test]
#[ignore = "a measurement: run on purpose, read its output"]
fn measure_attached_echo_and_idle_cpu() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args, env) = model_args();
    let tmux = Tmux::start(dir.path(), &args, &env);
    tmux.wait_text("ctrl+k cancel", STEP);
    // The same keys into the host's own input line, for comparison.
    let mut echoes = Vec::new();
    let mut typed = String::new();
    for c in "abcdefghij".chars() {
        typed.push(c);
        let began = Instant::now();
        tmux.keys(&["-l", &c.to_string()]);
        let line = format!("› {typed}");
        tmux.wait_for("the echo", STEP, |screen| {
            screen.lines().any(|row| row.trim_end() == line)
        });
        echoes.push(began.elapsed());
    }
    echoes.sort();
    println!(
        "input line key to echo on screen (median of 10, tmux included): {:?}",
        echoes[echoes.len() / 2]
    );
    tmux.keys(&["C-u"]);
    tmux.keys(&["-l", "ask me a question"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("· idle · ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-k"]);
    tmux.wait_text("[tty]", STEP);
    tmux.keys(&["a"]);
    let question = "Deploy to which region? [eu/us] ";
    let row = |typed: &str| {
        let wanted = format!("{question}{typed}");
        move |screen: &str| {
            screen
                .lines()
                .any(|line| line.trim_end() == wanted.trim_end())
        }
    };
    tmux.wait_for("the question", STEP, row(""));

    let mut echoes = Vec::new();
    let mut typed = String::new();
    for c in "abcdefghij".chars() {
        typed.push(c);
        let began = Instant::now();
        tmux.keys(&["-l", &c.to_string()]);
        tmux.wait_for("the echo", STEP, row(&typed));
        echoes.push(began.elapsed());
    }
    echoes.sort();
    println!(
        "attached key to echo on screen (median of 10, tmux included): {:?} (min {:?}, max {:?})",
        echoes[echoes.len() / 2],
        echoes[0],
        echoes[echoes.len() - 1]
    );

    std::thread::sleep(Duration::from_secs(1));
    let before = cpu_ticks(tmux.pid);
    std::thread::sleep(Duration::from_secs(10));
    let after = cpu_ticks(tmux.pid);
    println!(
        "attached cpu, 10 s, task waiting for input: {} ticks (utime+stime)",
        after - before
    );
    tmux.keys(&["C-]"]);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-d"]);
}
