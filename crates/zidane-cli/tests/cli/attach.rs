//! Attaching to a task's terminal in a real terminal: the model starts a task that asks
//! a question in a terminal of its own, the picker attaches to it, its question is on
//! screen, the answer typed reaches it, its end and the model's wake-up show while
//! attached, and `ctrl+]` comes back to the conversation. Keys the host would take for
//! itself (`ctrl+c`) go to the task while attached.

use std::time::Duration;

use crate::support::{Tmux, model_args, owned_processes, tmux_present};

/// Bound on each step a person would see happen.
const STEP: Duration = Duration::from_secs(20);

/// The question the demo's `ask me a question` task prints (the CLI's `demo::INTERACTIVE`).
const QUESTION: &str = "Deploy to which region? [eu/us]";

/// Whether a row of the screen starts with `text` (the task's own rows do; the title,
/// which previews the command, starts with its glyph).
fn row_starts(screen: &str, text: &str) -> bool {
    screen.lines().any(|line| line.starts_with(text))
}

/// Waits until a row starts with `text`.
fn wait_row(tmux: &Tmux, text: &str) -> String {
    tmux.wait_for(&format!("a row starting {text:?}"), STEP, |screen| {
        row_starts(screen, text)
    })
}

/// Types `text` and sends it.
fn prompt(tmux: &Tmux, text: &str) {
    tmux.keys(&["-l", text]);
    tmux.keys(&["Enter"]);
}

/// Starts the question task and attaches to it from the picker; the screen then.
fn attach_to_the_question(tmux: &Tmux) -> String {
    tmux.wait_text("ctrl+k cancel", STEP);
    prompt(tmux, "ask me a question");
    // The turn has ended: the one row is the task, not the shell call that starts it.
    tmux.wait_text("· idle · ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-k"]);
    let picker = tmux.wait_text("a attaches to a [tty] task", STEP);
    assert!(picker.contains("› ⌁ bash_1"), "{picker}");
    assert!(picker.contains("[tty]"), "{picker}");
    tmux.keys(&["a"]);
    // One frame can reach the terminal in more than one write, so wait for the whole
    // attached view (the question and its footer), not the first row of it.
    let screen = tmux.wait_for("the attached view with its question", STEP, |screen| {
        row_starts(screen, QUESTION)
            && screen
                .lines()
                .last()
                .is_some_and(|footer| footer.starts_with("ctrl+] detach"))
    });
    assert!(
        screen.contains("⌁ bash_1 · ") && screen.contains("ctrl+] detaches"),
        "the title names the task and the way back: {screen}"
    );
    assert!(
        screen
            .lines()
            .last()
            .is_some_and(|footer| footer.starts_with("ctrl+] detach · attached to bash_1")),
        "the footer says the detach key: {screen}"
    );
    screen
}

#[test]
fn attach_answer_the_tasks_question_and_detach_back_to_the_conversation() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args, env) = model_args();
    let tmux = Tmux::start(dir.path(), &args, &env);
    let screen = attach_to_the_question(&tmux);
    assert!(
        !screen.contains("you › ask me a question"),
        "the terminal replaces the transcript: {screen}"
    );

    // The answer reaches the task, which echoes it and goes on.
    tmux.keys(&["-l", "eu"]);
    tmux.keys(&["Enter"]);
    let screen = wait_row(&tmux, "deploying to eu");
    assert!(row_starts(&screen, &format!("{QUESTION} eu")), "{screen}");

    // It ends while attached: its banner, then the model's wake-up, show under the
    // terminal; the title says so, the last screen stays.
    let screen = tmux.wait_for("the woken answer while attached", STEP, |screen| {
        screen.contains("model › bash_1 ended:") && screen.contains("any key returns")
    });
    assert!(screen.lines().any(|line| line == "deployed"), "{screen}");

    // Back: the conversation, with the banner and the answer, and nothing typed in it.
    tmux.keys(&["C-]"]);
    let screen = tmux.wait_text("ctrl+k cancel ·", STEP);
    assert!(screen.contains("⌁ bash_1 exited (0)"), "{screen}");
    assert!(screen.contains("model › bash_1 ended:"), "{screen}");
    assert_eq!(
        screen.matches("you › ").count(),
        1,
        "the wake-up echoed no prompt:\n{screen}"
    );
    assert!(
        screen.lines().any(|line| line == "›"),
        "the answer went to the task, not the input line:\n{screen}"
    );

    tmux.keys(&["C-d"]);
    tmux.wait_ended("ctrl+d", STEP);
    assert_eq!(owned_processes(tmux.pid), Vec::<u32>::new());
    tmux.assert_restored();
}

#[test]
fn attached_ctrl_c_is_the_tasks_and_detaching_leaves_it_running() {
    if !tmux_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (args, env) = model_args();
    let tmux = Tmux::start(dir.path(), &args, &env);
    attach_to_the_question(&tmux);

    // Detach and attach again: the task waited, its question is still there.
    tmux.keys(&["C-]"]);
    tmux.wait_text("ctrl+k cancel (1)", STEP);
    tmux.keys(&["C-k"]);
    tmux.wait_text("a attaches to a [tty] task", STEP);
    tmux.keys(&["a"]);
    wait_row(&tmux, QUESTION);

    // ctrl+c interrupts the task (its terminal sends SIGINT), not the host: no "press
    // ctrl+c again to quit".
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_text("any key returns", STEP);
    assert!(!screen.contains("press ctrl+c again"), "{screen}");
    assert!(tmux.alive(), "ctrl+c went to zidane:\n{screen}");
    tmux.keys(&["x"]);
    let screen = tmux.wait_text("⌁ bash_1 killed (SIGINT)", STEP);
    assert!(
        !screen.lines().any(|line| line.starts_with("› x")),
        "the key that returned typed nothing:\n{screen}"
    );

    tmux.keys(&["C-d"]);
    tmux.wait_ended("ctrl+d", STEP);
    assert_eq!(owned_processes(tmux.pid), Vec::<u32>::new());
    tmux.assert_restored();
}
