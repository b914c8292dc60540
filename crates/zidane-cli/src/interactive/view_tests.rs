use std::path::PathBuf;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use zidane::agent::{PickerKind, PickerRow};
use zidane::wire::{StreamEvent, TaskExitInfo, TaskId, TaskNotification, TaskStatus};

use super::super::state::{App, AppEvent};
use super::*;

/// A tool call in flight and two running tasks.
pub(crate) fn rows() -> Vec<PickerRow> {
    vec![
        PickerRow {
            kind: PickerKind::Tool,
            id: "call_4".into(),
            label: "wait_task".into(),
            status: TaskStatus::Running,
            runtime: Duration::from_millis(1200),
            log_path: None,
            tty: None,
        },
        PickerRow {
            kind: PickerKind::Task,
            id: "bash_1".into(),
            label: "npm run dev".into(),
            status: TaskStatus::Running,
            runtime: Duration::from_secs(75),
            log_path: Some(PathBuf::from("/u/sessions/s1/tasks/bash_1.log")),
            tty: None,
        },
        PickerRow {
            kind: PickerKind::Task,
            id: "bash_2".into(),
            label: "cargo build --release".into(),
            status: TaskStatus::Running,
            runtime: Duration::from_secs(3),
            log_path: Some(PathBuf::from("/u/sessions/s1/tasks/bash_2.log")),
            tty: None,
        },
    ]
}

fn notification(id: u64, code: i32, signal: Option<zidane::wire::Signal>) -> StreamEvent {
    StreamEvent::TaskNotification(TaskNotification::from_exit(
        &TaskExitInfo::new(
            TaskId::from_number(id),
            "npm run build",
            format!("/u/sessions/s1/tasks/bash_{id}.log"),
            if signal.is_some() {
                TaskStatus::Killed
            } else {
                TaskStatus::Exited
            },
            code,
            Duration::from_millis(4200),
        )
        .signal(signal),
    ))
}

/// A session where a build was started, ended, and the model was woken.
fn session() -> App {
    let mut app = App::new("demo (scripted)", "20261201-194000-ab12");
    for event in [
        StreamEvent::UserText {
            text: "build it in the background".into(),
        },
        StreamEvent::AssistantText {
            text: "Building in the background.".into(),
        },
        StreamEvent::ToolCall {
            id: "call_1".into(),
            name: "shell".into(),
            input: serde_json::json!({ "command": "npm run build", "run_in_background": true }),
        },
        StreamEvent::ToolResult {
            tool_use_id: "call_1".into(),
            content: "Started bash_1 (pid 4242). Output: /u/sessions/s1/tasks/bash_1.log\n\nThe command is running in the background.".into(),
            is_error: false,
        },
        notification(1, 0, None),
        notification(2, 1, None),
        notification(3, 143, Some(zidane::wire::Signal::TERM)),
        StreamEvent::AssistantText {
            text: "bash_1 ended: npm run build (4.2s) — exited 0".into(),
        },
    ] {
        app.apply(AppEvent::Stream(event));
    }
    app
}

/// The screen as text, one line per row, trailing blanks cut.
fn screen(app: &App, width: u16, height: u16) -> (String, Vec<LinkSpot>) {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let mut links = Vec::new();
    terminal.draw(|frame| links = draw(frame, app)).unwrap();
    (text(terminal.backend().buffer()), links)
}

/// A buffer as text, one line per row, trailing blanks cut; a wide character's second
/// cell is not a character of its own.
pub(crate) fn text(buffer: &ratatui::buffer::Buffer) -> String {
    let mut text = String::new();
    for y in 0..buffer.area.height {
        let mut line = String::new();
        let mut x = 0;
        while x < buffer.area.width {
            let symbol = buffer[(x, y)].symbol();
            line.push_str(symbol);
            x += u16::try_from(wrap::columns(symbol)).unwrap_or(1).max(1);
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

#[test]
fn banners_in_their_tones_with_links_and_no_xml() {
    let app = session();
    let (text, links) = screen(&app, 80, 16);
    insta::assert_snapshot!("banners", text);
    assert!(!text.contains("<task-notification>"));
    assert_eq!(links.len(), 3);
    assert_eq!(links[2].url, "file:///u/sessions/s1/tasks/bash_3.log");
    assert_eq!(
        [links[0].tone, links[1].tone, links[2].tone],
        [Tone::Dim, Tone::Warn, Tone::Error]
    );
    // The link sits exactly over the painted path.
    let row: Vec<&str> = text.lines().collect();
    let line = row[usize::from(links[0].y)];
    assert_eq!(&line[line.len() - links[0].text.len()..], links[0].text);
}

#[test]
fn footer_counts_calls_and_tasks() {
    let mut app = session();
    app.in_flight = 3;
    app.running = true;
    let (text, _) = screen(&app, 120, 6);
    insta::assert_snapshot!("footer_running", text);
    app.in_flight = 0;
    app.running = false;
    app.suppressed = true;
    let (text, _) = screen(&app, 100, 6);
    insta::assert_snapshot!("footer_paused", text);
}

#[test]
fn picker_open_over_the_transcript() {
    let mut app = session();
    app.open_picker(rows());
    app.handle_key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Down,
        crossterm::event::KeyModifiers::NONE,
    ));
    app.in_flight = 3;
    let (text, links) = screen(&app, 90, 22);
    insta::assert_snapshot!("picker_open", text);
    assert_eq!(
        links.len(),
        3,
        "the banners below the picker keep their links"
    );
    for link in &links {
        let line = text.lines().nth(usize::from(link.y)).unwrap();
        assert!(!line.contains('│'), "a link under the picker: {line}");
    }
}

#[test]
fn picker_with_nothing_running_says_so() {
    let mut app = session();
    app.open_picker(vec![]);
    let (text, _) = screen(&app, 80, 12);
    insta::assert_snapshot!("picker_empty", text);
}

#[test]
fn long_results_collapse_to_their_first_lines_with_a_count() {
    let mut app = App::new("demo (scripted)", "s1");
    app.apply(AppEvent::Stream(StreamEvent::ToolCall {
        id: "call_2".into(),
        name: "shell".into(),
        input: serde_json::json!({ "command": "cargo build --workspace --all-targets --release --locked --message-format short" }),
    }));
    let log: Vec<String> = (1..=40)
        .map(|n| format!("   Compiling crate-{n} v0.1.0"))
        .collect();
    app.apply(AppEvent::Stream(StreamEvent::ToolResult {
        tool_use_id: "call_2".into(),
        content: log.join("\n"),
        is_error: false,
    }));
    let (text, _) = screen(&app, 80, 16);
    insta::assert_snapshot!("collapsed_result", text);
    assert!(text.contains("… (36 more lines)"));
    assert!(
        text.contains("--release --lo…\n"),
        "a long call is one row: {text}"
    );
}

#[test]
fn a_long_session_draws_only_its_last_screen() {
    let mut app = App::new("m", "s");
    for n in 0..10_000 {
        app.apply(AppEvent::Stream(StreamEvent::AssistantText {
            text: format!("turn {n}"),
        }));
    }
    let (text, _) = screen(&app, 40, 6);
    assert!(text.contains("turn 9999"));
    assert!(!text.contains("turn 9996"));
    app.scroll = 2;
    let (text, _) = screen(&app, 40, 6);
    assert!(text.contains("turn 9997") && !text.contains("turn 9999"));
}

#[test]
fn lines_wrap_at_words_by_display_width() {
    let mut app = App::new("m", "s");
    for event in [
        StreamEvent::UserText {
            text: "日本語で説明してください、ビルドはどうなりましたか".into(),
        },
        StreamEvent::AssistantText {
            text: "ビルドは成功しました 🎉🎉 すべてのテストが通りました ✅ and the log is at /u/sessions/s1/tasks/bash_1.log".into(),
        },
        notification(1, 0, None),
    ] {
        app.apply(AppEvent::Stream(event));
    }
    let (text, links) = screen(&app, 36, 14);
    insta::assert_snapshot!("wrapped_cjk_emoji_path", text);
    for line in text.lines() {
        assert!(
            wrap::columns(line) <= 36,
            "{line:?} is wider than the screen"
        );
    }
    assert!(
        text.lines()
            .any(|line| line == "/u/sessions/s1/tasks/bash_1.log"),
        "a path that fits a row is not cut: {text}"
    );
    // The banner's path moved whole to its own row and is still a link there.
    assert_eq!(links.len(), 1);
    let row = text.lines().nth(usize::from(links[0].y)).unwrap();
    assert_eq!(links[0].x, 0);
    assert_eq!(row, links[0].text);
}

/// The session attached to `bash_4`, a question in its terminal (24×80, cursor after it).
fn attached_session() -> App {
    let mut app = session();
    app.attached = Some(super::super::state::Attached {
        task_id: "bash_4".into(),
        label: "python3 ask.py".into(),
        screen: Some(zidane::context::Screen::new(
            zidane::context::TtySize::new(9, 60),
            vec![
                "$ python3 ask.py".into(),
                "Deploying to staging.".into(),
                "Which region? [eu/us] eu".into(),
                "Deploy 3 services to eu? [y/N] ".into(),
            ],
            (3, 31),
        )),
        gone: None,
    });
    app
}

#[test]
fn attached_the_tasks_terminal_fills_the_screen_with_the_detach_key() {
    let app = attached_session();
    let mut terminal = Terminal::new(TestBackend::new(70, 14)).unwrap();
    let mut links = vec![];
    terminal.draw(|frame| links = draw(frame, &app)).unwrap();
    let text = text(terminal.backend().buffer());
    insta::assert_snapshot!("attached", text);
    assert!(links.is_empty(), "the transcript's links are hidden");
    // The cursor sits where the task's is: after its question, under the title.
    terminal.backend_mut().assert_cursor_position((31, 4));
    assert_eq!(
        attached_terminal_size(70, 14),
        zidane::context::TtySize::new(11, 70)
    );
}

#[test]
fn attached_the_newest_banner_and_the_streaming_answer_show_below_the_terminal() {
    let mut app = attached_session();
    app.apply(AppEvent::Stream(notification(2, 0, None)));
    let (text, _) = screen(&app, 70, 14);
    assert!(
        text.lines()
            .nth(12)
            .unwrap()
            .starts_with("⌁ bash_2 exited (0) 4.2s"),
        "{text}"
    );
    app.running = true;
    app.apply(AppEvent::Delta("bash_2 ended: npm run build".into()));
    let (text, _) = screen(&app, 70, 14);
    insta::assert_snapshot!("attached_woken", text);
}

#[test]
fn attached_to_a_task_that_ended_its_last_screen_stays_and_any_key_returns() {
    let mut app = attached_session();
    if let Some(attached) = &mut app.attached {
        // A long command is cut; the way back is not.
        attached.label = "python3 ask.py --services api,web,worker --confirm-each".into();
    }
    app.apply(AppEvent::Gone {
        task_id: "bash_4".into(),
        reason: "ended".into(),
    });
    let mut terminal = Terminal::new(TestBackend::new(70, 6)).unwrap();
    terminal
        .draw(|frame| {
            draw(frame, &app);
        })
        .unwrap();
    let text = text(terminal.backend().buffer());
    insta::assert_snapshot!("attached_ended", text);
    // A terminal taller than the area shows the rows down to its cursor.
    assert!(
        text.contains("Deploy 3 services") && !text.contains("$ python3"),
        "{text}"
    );
}

#[test]
fn attached_before_the_first_reading_says_so() {
    let mut app = attached_session();
    if let Some(attached) = &mut app.attached {
        attached.screen = None;
    }
    let (text, _) = screen(&app, 70, 6);
    assert!(text.contains("reading bash_4's terminal…"), "{text}");
}

#[test]
fn the_picker_marks_tty_tasks_and_says_how_to_attach() {
    let mut app = session();
    let mut rows = rows();
    rows.push(PickerRow {
        kind: PickerKind::Task,
        id: "bash_4".into(),
        label: "python3 ask.py".into(),
        status: TaskStatus::Running,
        runtime: Duration::from_secs(12),
        log_path: Some(PathBuf::from("/u/sessions/s1/tasks/bash_4.log")),
        tty: Some(zidane::context::TtySize::new(24, 80)),
    });
    app.open_picker(rows);
    let (text, _) = screen(&app, 90, 22);
    insta::assert_snapshot!("picker_tty", text);
}

#[test]
fn a_command_outside_the_sandbox_is_asked_in_the_input_line() {
    let mut app = session();
    app.apply(AppEvent::Approval(Some(
        zidane::tools::ApprovalRequest::new(
            "touch ~/.cache/tool/stamp",
            "the tool keeps its cache in the home dir",
        ),
    )));
    let (text, _) = screen(&app, 80, 20);
    insta::assert_snapshot!("approval_asked", text);
}
