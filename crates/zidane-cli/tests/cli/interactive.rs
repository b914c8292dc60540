//! The interactive session in a real terminal: a prompt starts a background build, its
//! banner and the woken reply appear by themselves, `ctrl+k` kills a dev server, and
//! quitting leaves no process of the session behind.

use std::time::{Duration, Instant};

use crate::support::{Tmux, model_args, owned_processes, tmux_present};

/// Bound on each step a person would see happen.
const STEP: Duration = Duration::from_secs(20);

#[test]
fn a_session_in_tmux_from_prompt_to_quit() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args, env) = model_args();
    let tmux = Tmux::start(dir.path(), &args, &env);
    tmux.wait_text("ctrl+k cancel", STEP);

    // A prompt: the build starts in the background and the turn ends.
    tmux.keys(&["-l", "build it"]);
    tmux.keys(&["Enter"]);
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
    tmux.keys(&["-l", "start the dev server"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-k"]);
    let picker = tmux.wait_text("enter cancels a call / kills a task", STEP);
    assert!(picker.contains("⌁ bash_2"), "{picker}");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_text("⌁ bash_2 killed (SIGTERM)", STEP);
    assert!(screen.contains("killed bash_2"), "{screen}");
    tmux.wait_text("ctrl+k cancel ·", STEP);

    // One more, left running at quit.
    tmux.keys(&["-l", "start the dev server"]);
    tmux.keys(&["Enter"]);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    let before = owned_processes(tmux.pid);
    assert!(
        !before.is_empty(),
        "the dev server runs under the session's owner marker"
    );

    tmux.keys(&["C-d"]);
    let deadline = Instant::now() + STEP;
    while tmux.alive() {
        assert!(
            Instant::now() < deadline,
            "zidane did not quit:\n{}",
            tmux.capture()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        owned_processes(tmux.pid),
        Vec::<u32>::new(),
        "processes left: was {before:?}"
    );
    let screen = tmux.capture();
    assert!(
        screen.contains("resume it with: zidane --resume"),
        "the terminal is back:\n{screen}"
    );
}
