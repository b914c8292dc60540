//! The interactive session in a real terminal: a prompt starts a background build, its
//! banner and the woken reply appear by themselves, `ctrl+k` kills a dev server, `ctrl+b`
//! moves a slow foreground command to the background, and quitting leaves no process of
//! the session behind.

use std::path::Path;
use std::time::Duration;

use crate::support::{Tmux, model_args, owned_processes, tmux_present};

/// Bound on each step a person would see happen.
const STEP: Duration = Duration::from_secs(20);

/// A session of the scripted model in `user_dir`, shown and ready for a prompt.
fn ready_session(user_dir: &Path) -> Tmux {
    let (args, env) = model_args();
    let tmux = Tmux::start(user_dir, &args, &env);
    tmux.wait_text("ctrl+k cancel", STEP);
    tmux
}

/// A [`ready_session`] whose model's slow foreground `shell` call is running.
fn slow_call_running(user_dir: &Path) -> Tmux {
    let tmux = ready_session(user_dir);
    prompt(&tmux, "run something slow");
    tmux.wait_text("running · esc abort · ctrl+k cancel (1)", STEP);
    tmux
}

/// Types `text` and sends it.
fn prompt(tmux: &Tmux, text: &str) {
    tmux.keys(&["-l", text]);
    tmux.keys(&["Enter"]);
}

/// Waits until the session has ended (after `how`), then checks that none of its
/// processes is left (`before`: what ran) and that the terminal is restored.
fn ended_clean(tmux: &Tmux, how: &str, before: &[u32]) {
    tmux.wait_ended(how, STEP);
    assert_eq!(
        owned_processes(tmux.pid),
        Vec::<u32>::new(),
        "processes left: was {before:?}"
    );
    tmux.assert_restored();
}

#[test]
fn a_session_in_tmux_from_prompt_to_quit() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = ready_session(dir.path());

    // A prompt: the build starts in the background and the turn ends.
    prompt(&tmux, "build it");
    tmux.wait_text("Started bash_1", STEP);
    // Nobody types: the exit's banner and the woken reply arrive on their own.
    let screen = tmux.wait_text("model › bash_1 ended:", STEP);
    assert!(screen.contains("⌁ bash_1 exited (0)"), "{screen}");
    assert!(!screen.contains("<task-id>"), "{screen}");
    assert_eq!(
        screen.matches("you › ").count(),
        1,
        "the wake-up echoed no prompt:\n{screen}"
    );

    // A dev server: counted in the footer, listed in the picker, killed from it.
    prompt(&tmux, "start the dev server");
    // Its start answered first: until then the one counted may be the call itself.
    tmux.wait_text("Started bash_2", STEP);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-k"]);
    let picker = tmux.wait_text("enter cancels a call / kills a task", STEP);
    assert!(picker.contains("⌁ bash_2"), "{picker}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("⌁ bash_2 killed (SIGTERM)", STEP);
    assert!(screen.contains("killed bash_2"), "{screen}");
    tmux.wait_text("ctrl+k cancel ·", STEP);

    // One more, left running at quit.
    prompt(&tmux, "start the dev server");
    // Its start answered first: until then the one counted may be the call itself.
    tmux.wait_text("Started bash_2", STEP);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    let before = owned_processes(tmux.pid);
    assert!(
        !before.is_empty(),
        "the dev server runs under the session's owner marker"
    );

    tmux.keys(&["C-d"]);
    ended_clean(&tmux, "ctrl+d", &before);
}

#[test]
fn after_esc_an_exit_waits_for_the_next_prompt_and_a_signal_still_cleans_up() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = ready_session(dir.path());
    prompt(&tmux, "start the dev server");
    tmux.wait_text("ctrl+k cancel (1) ·", STEP);
    tmux.wait_text("· idle ·", STEP);

    // esc: no wake-up until the next prompt, even when the task ends.
    tmux.keys(&["Escape"]);
    tmux.wait_text("wake-ups paused until your next prompt", STEP);
    tmux.keys(&["C-k"]);
    tmux.wait_text("⌁ bash_1", STEP);
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for("the kill, with wake-ups still paused", STEP, |screen| {
        screen.contains("killed bash_1") && screen.contains("ctrl+k cancel ·")
    });
    assert!(screen.contains("wake-ups paused"), "{screen}");
    assert!(
        !screen.contains("⌁ bash_1 killed"),
        "no wake-up after esc:\n{screen}"
    );

    // The next prompt's turn opens with the exit that waited (its banner, then the prompt).
    prompt(&tmux, "start the dev server");
    let screen = tmux.wait_text("Started bash_2", STEP);
    let banner = screen.find("⌁ bash_1 killed (SIGTERM)").expect(&screen);
    assert!(
        banner < screen.rfind("you › start the dev server").unwrap(),
        "{screen}"
    );
    tmux.wait_text("ctrl+k cancel (1) ·", STEP);
    let before = owned_processes(tmux.pid);
    assert!(!before.is_empty());

    // SIGTERM: the same teardown as a quit, and the terminal is back.
    nix_kill(tmux.pid);
    ended_clean(&tmux, "SIGTERM", &before);
}

#[test]
fn resume_repaints_the_stored_transcript_first() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child = crate::support::zidane(dir.path(), &["--demo", "-p", "build it", "--wait"])
        .spawn()
        .unwrap();
    assert!(crate::support::wait_bounded(child, STEP).status.success());
    let store = zidane::agent::SessionStore::new(dir.path());
    let id = store.list().unwrap().sessions[0].id.clone();
    let (mut args, env) = model_args();
    args.extend(["--resume".to_owned(), id.clone()]);
    let tmux = Tmux::start(dir.path(), &args, &env);
    let screen = tmux.wait_text(&format!("resumed session {id}"), STEP);
    assert!(screen.contains("⌁ bash_1 exited (0)"), "{screen}");
    assert!(screen.contains("model › bash_1 ended:"), "{screen}");
    assert!(
        screen.contains(&id),
        "the footer names the session: {screen}"
    );
    tmux.keys(&["C-c"]);
    tmux.wait_text("press ctrl+c again to quit", STEP);
    tmux.keys(&["C-c"]);
    tmux.wait_ended("ctrl+c twice", STEP);
}

#[test]
fn ctrl_b_moves_a_foreground_command_to_the_background() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = slow_call_running(dir.path());
    tmux.keys(&["C-b"]);
    // The call answers at once; the command runs on as a task.
    let screen = tmux.wait_text("The tool said: Moved by the user after", STEP);
    assert!(
        screen.contains("moved to the background as bash_1"),
        "{screen}"
    );
    let screen = tmux.wait_text("· idle ·", STEP);
    assert!(!screen.contains("cancelled"), "{screen}");
    tmux.keys(&["C-k"]);
    let picker = tmux.wait_text("enter cancels a call / kills a task", STEP);
    assert!(
        picker.contains("⌁ bash_1"),
        "the moved task runs on: {picker}"
    );
    tmux.keys(&["Escape"]);
    let before = owned_processes(tmux.pid);
    tmux.keys(&["C-d"]);
    ended_clean(&tmux, "ctrl+d", &before);
}

/// SIGTERM to a process.
fn nix_kill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn ctrl_k_cancels_a_tool_call_in_flight() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = slow_call_running(dir.path());
    tmux.keys(&["C-k"]);
    let picker = tmux.wait_text("enter cancels a call / kills a task", STEP);
    assert!(
        picker.contains("› · call_1"),
        "a tool row, selected: {picker}"
    );
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("· idle ·", STEP);
    assert!(
        screen.contains("cancelled tool call call_1 (shell)"),
        "{screen}"
    );
    assert!(
        screen.contains("model › The tool said:"),
        "the run went on: {screen}"
    );
    tmux.keys(&["C-d"]);
    tmux.assert_restored();
}
