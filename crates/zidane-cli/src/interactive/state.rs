//! The interactive session's state machine: what the screen shows, and what each key
//! and agent event does to it. No terminal and no agent here — the loop in
//! [`super::run`] feeds it and carries out the [`Action`]s it returns, so the view and
//! its transitions are tested under ratatui's `TestBackend`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use zidane::agent::{PickerKind, PickerRow, StopReason, WakeReport, WakeTrigger};
use zidane::context::Screen;
use zidane::tools::ApprovalRequest;
use zidane::wire::{Banner, Painter, StreamEvent, Tone};

use super::input::InputLine;
use super::keys;

/// Lines of a tool result the transcript shows before counting the rest.
pub const RESULT_LINES: usize = 4;

/// Prompts remembered for the input line's history.
const HISTORY_LIMIT: usize = 500;

/// How a transcript entry is painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// The user's prompt.
    User,
    /// The model's text.
    Assistant,
    /// A tool call.
    ToolCall,
    /// A tool's result.
    ToolResult,
    /// A tool's error.
    ToolError,
    /// A `⌁` banner, in its tone.
    Banner(Tone),
    /// The host's own narration.
    Note,
    /// Something went wrong.
    Error,
}

/// One block of the transcript: its lines, painted once by the wire's [`Painter`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// How it looks.
    pub look: Look,
    /// Its lines, as the plain painter gives them (no ANSI).
    pub lines: Vec<String>,
    /// A banner's log path, painted as an OSC 8 link.
    pub link: Option<String>,
}

impl Entry {
    /// The entry of one transcript event.
    pub fn of(event: &StreamEvent) -> Self {
        let look = match event {
            StreamEvent::UserText { .. } => Look::User,
            StreamEvent::AssistantText { .. } => Look::Assistant,
            StreamEvent::ToolCall { .. } => Look::ToolCall,
            StreamEvent::ToolResult {
                is_error: false, ..
            } => Look::ToolResult,
            StreamEvent::ToolResult { is_error: true, .. } => Look::ToolError,
            StreamEvent::TaskNotification(notification) => {
                Look::Banner(Banner::for_notification(notification).tone)
            }
            StreamEvent::TaskStall(_) => Look::Banner(Tone::Warn),
            StreamEvent::TaskEvent(_) => Look::Banner(Tone::Dim),
        };
        let link = match event {
            StreamEvent::TaskNotification(notification) => Some(notification.output_file.clone()),
            StreamEvent::TaskStall(stall) => Some(stall.output_file.clone()),
            _ => None,
        };
        Self {
            look,
            lines: split(&Painter::plain().event(&collapsed(event))),
            link,
        }
    }

    /// A line of the host's narration.
    pub fn note(text: &str) -> Self {
        Self {
            look: Look::Note,
            lines: split(&Painter::plain().note(text)),
            link: None,
        }
    }

    /// An error line.
    pub fn error(text: &str) -> Self {
        Self {
            look: Look::Error,
            lines: split(&Painter::plain().note(text)),
            link: None,
        }
    }
}

/// A tool result cut to its first lines — at most [`RESULT_LINES`], and not past its
/// first paragraph — and a count of the rest. The whole text stays in the session.
fn collapsed(event: &StreamEvent) -> std::borrow::Cow<'_, StreamEvent> {
    let StreamEvent::ToolResult {
        tool_use_id,
        content,
        is_error,
    } = event
    else {
        return std::borrow::Cow::Borrowed(event);
    };
    let total = content.lines().count();
    let mut shown: Vec<&str> = content
        .lines()
        .take(RESULT_LINES)
        .take_while(|line| !line.trim().is_empty())
        .collect();
    if shown.is_empty() || shown.len() == total {
        return std::borrow::Cow::Borrowed(event);
    }
    let more = format!("… ({} more lines)", total - shown.len());
    shown.push(&more);
    std::borrow::Cow::Owned(StreamEvent::ToolResult {
        tool_use_id: tool_use_id.clone(),
        content: shown.join("\n"),
        is_error: *is_error,
    })
}

fn split(painted: &str) -> Vec<String> {
    painted.lines().map(str::to_owned).collect()
}

/// The `ctrl+k` picker: in-flight tool calls and running tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// Its rows, tool calls first.
    pub rows: Vec<PickerRow>,
    /// The selected row.
    pub selected: usize,
}

/// A task's terminal the screen is attached to: its screen is shown, keys go to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The task.
    pub task_id: String,
    /// Its command, as the picker previewed it.
    pub label: String,
    /// What its terminal showed when last read (`None` before the first reading).
    pub screen: Option<Screen>,
    /// Why it can no longer be typed to (the task ended, the terminal could not be
    /// read): the screen stays as it was, and any key detaches.
    pub gone: Option<String>,
}

/// What the loop must do for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Run this prompt (through the wake loop).
    Prompt(String),
    /// Abort the run in flight and keep wake-ups off until the next prompt.
    Abort,
    /// Read the picker's rows and open it.
    OpenPicker,
    /// Move the foreground commands of the calls in flight to the background now.
    MoveToBackground,
    /// Cancel this tool call, or kill this task's group.
    Cancel(PickerRow),
    /// Start showing this task's terminal and sending it keys (the state is attached).
    Attach(PickerRow),
    /// Send these bytes to the attached task's terminal.
    Input(Vec<u8>),
    /// Stop showing the attached task (the state is back on the conversation).
    Detach,
    /// The person's answer to running a command outside the sandbox: yes or no.
    Approve(bool),
    /// Destroy the agent and leave.
    Quit,
}

/// Something that happened on the agent's side.
#[derive(Debug, Clone, PartialEq)]
pub enum AppEvent {
    /// A transcript event (a whole turn's block).
    Stream(StreamEvent),
    /// A piece of the model's text as it streams, before its whole turn arrives.
    Delta(String),
    /// A run of the wake loop ended.
    RunEnded(WakeReport),
    /// Tool calls or tasks started or ended: the frame reads the calls in flight again.
    Changed,
    /// The running tasks, read again from the context after tasks changed.
    Tasks(Vec<PickerRow>),
    /// A line of narration (a kill's outcome, say).
    Note(String),
    /// What an attached task's terminal shows now.
    Screen {
        /// The task.
        task_id: String,
        /// Its screen.
        screen: Screen,
    },
    /// A command waits for the person's approval to run outside the sandbox
    /// (`Some`), or no longer does (`None`: answered, or nobody answered in time).
    Approval(Option<ApprovalRequest>),
    /// An attached task can no longer be typed to, and why (it ended, say).
    Gone {
        /// The task.
        task_id: String,
        /// Why, for the screen's title.
        reason: String,
    },
}

/// Everything the screen shows.
#[derive(Debug, Clone)]
pub struct App {
    /// The model's name (footer).
    pub model_name: String,
    /// The session's id (footer).
    pub session_id: String,
    /// The transcript.
    pub entries: Vec<Entry>,
    /// The model's text streaming in, not yet a whole turn.
    pub streaming: Option<String>,
    /// The input line.
    pub input: InputLine,
    /// Prompts sent, oldest first.
    pub history: Vec<String>,
    /// Where up/down is in the history (None: editing a new line).
    history_pos: Option<usize>,
    /// The open picker.
    pub picker: Option<Picker>,
    /// In-flight tool calls plus running tasks (the `ctrl+k cancel (N)` chip).
    pub in_flight: usize,
    /// The running tasks, as last read.
    pub tasks: Vec<PickerRow>,
    /// Whether a run is in flight.
    pub running: bool,
    /// Whether wake-ups are off after an abort.
    pub suppressed: bool,
    /// `ctrl+c` was pressed once; a second press quits.
    pub quit_armed: bool,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The task's terminal the screen is attached to, if any.
    pub attached: Option<Attached>,
    /// The command waiting for the person's approval to run outside the sandbox: the
    /// input line asks `[y/N]`.
    pub approval: Option<ApprovalRequest>,
}

impl App {
    /// An empty session's screen.
    pub fn new(model_name: impl Into<String>, session_id: impl Into<String>) -> Self {
        Self {
            model_name: model_name.into(),
            session_id: session_id.into(),
            entries: Vec::new(),
            streaming: None,
            input: InputLine::default(),
            history: Vec::new(),
            history_pos: None,
            picker: None,
            in_flight: 0,
            tasks: Vec::new(),
            running: false,
            suppressed: false,
            quit_armed: false,
            scroll: 0,
            attached: None,
            approval: None,
        }
    }

    /// A key while a command waits for approval: `y` runs it, `n`, `esc` or `enter`
    /// refuses it, any other key waits.
    fn answer_approval(&mut self, code: KeyCode) -> Option<Action> {
        let approve = match code {
            KeyCode::Char('y' | 'Y') => true,
            KeyCode::Char('n' | 'N') | KeyCode::Esc | KeyCode::Enter => false,
            _ => return None,
        };
        self.approval = None;
        self.note(if approve {
            "approved: the command runs outside the sandbox, this once"
        } else {
            "refused: the command does not run"
        });
        Some(Action::Approve(approve))
    }

    /// Adds a line of narration.
    pub fn note(&mut self, text: &str) {
        self.entries.push(Entry::note(text));
    }

    /// Applies an agent event.
    pub fn apply(&mut self, event: AppEvent) {
        match event {
            AppEvent::Approval(Some(request)) => {
                self.note(&format!(
                    "the model asks to run a command OUTSIDE the sandbox, with all your \
                     rights:\n  {}\nwhy: {}\npress y to run it this once, n to refuse",
                    request.command, request.justification
                ));
                self.approval = Some(request);
            }
            AppEvent::Approval(None) => {
                if self.approval.take().is_some() {
                    self.note("nobody answered in time: the command did not run");
                }
            }
            AppEvent::Stream(event) => {
                if matches!(event, StreamEvent::AssistantText { .. }) {
                    // The whole turn replaces what streamed of it.
                    self.streaming = None;
                }
                self.entries.push(Entry::of(&event));
            }
            AppEvent::Delta(delta) => {
                self.streaming
                    .get_or_insert_with(String::new)
                    .push_str(&delta);
            }
            AppEvent::RunEnded(report) => {
                self.streaming = None;
                match &report.outcome {
                    Ok(outcome) if outcome.stop == StopReason::Cancelled => {
                        self.note("the run was aborted");
                    }
                    Ok(outcome) if outcome.stop == StopReason::MaxSteps => {
                        self.note(&format!(
                            "the run stopped after {} model calls",
                            outcome.steps
                        ));
                    }
                    Ok(_) => {}
                    Err(error) if report.trigger == WakeTrigger::Prompt => {
                        self.entries
                            .push(Entry::error(&format!("the run failed: {error}")));
                    }
                    Err(error) => {
                        self.entries
                            .push(Entry::error(&format!("a wake-up run failed: {error}")));
                    }
                }
            }
            AppEvent::Changed => {}
            AppEvent::Tasks(rows) => self.tasks = rows,
            AppEvent::Note(text) => self.note(&text),
            AppEvent::Screen { task_id, screen } => {
                if let Some(attached) = self.attached_to(&task_id) {
                    attached.screen = Some(screen);
                }
            }
            AppEvent::Gone { task_id, reason } => {
                if let Some(attached) = self.attached_to(&task_id) {
                    attached.gone.get_or_insert(reason);
                }
            }
        }
    }

    /// The attached task, if it is `task_id` (a reading of one detached from since is
    /// dropped).
    fn attached_to(&mut self, task_id: &str) -> Option<&mut Attached> {
        self.attached
            .as_mut()
            .filter(|attached| attached.task_id == task_id)
    }

    /// Pasted text goes to the attached task, or into the input line (not into the
    /// picker).
    pub fn paste(&mut self, text: &str) -> Option<Action> {
        if let Some(attached) = &self.attached {
            return attached
                .gone
                .is_none()
                .then(|| Action::Input(keys::paste_bytes(text)));
        }
        if self.picker.is_none() {
            self.quit_armed = false;
            self.input.insert(text);
        }
        None
    }

    /// Opens the picker on these rows.
    pub fn open_picker(&mut self, rows: Vec<PickerRow>) {
        self.picker = Some(Picker { rows, selected: 0 });
    }

    /// The rows of the picker: the tool calls in flight, then the running tasks.
    pub fn rows(&self, tools: Vec<PickerRow>) -> Vec<PickerRow> {
        let mut rows = tools;
        rows.extend(self.tasks.iter().cloned());
        rows
    }

    /// Shows the tool calls in flight beside the running tasks as last read: in the
    /// footer's count, and in the open picker's rows.
    pub fn show_in_flight(&mut self, tools: Vec<PickerRow>) {
        let rows = self.rows(tools);
        self.in_flight = rows.len();
        if let Some(picker) = &mut self.picker {
            picker.selected = picker.selected.min(rows.len().saturating_sub(1));
            picker.rows = rows;
        }
    }

    /// Handles a key; the [`Action`] is for the loop to carry out.
    pub fn handle_key(&mut self, key: KeyEvent) -> Option<Action> {
        if let Some(attached) = &self.attached {
            // Every key is the task's (ctrl+c and ctrl+d too) but the detach key; once
            // the task is gone, any key returns.
            if keys::is_detach(&key) || attached.gone.is_some() {
                self.attached = None;
                return Some(Action::Detach);
            }
            return keys::key_bytes(&key).map(Action::Input);
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let is_ctrl_c = ctrl && key.code == KeyCode::Char('c');
        if !is_ctrl_c {
            self.quit_armed = false;
        }
        if is_ctrl_c {
            if self.quit_armed {
                return Some(Action::Quit);
            }
            self.quit_armed = true;
            self.input.clear();
            return None;
        }
        if ctrl && key.code == KeyCode::Char('d') {
            return Some(Action::Quit);
        }
        if self.approval.is_some() {
            return self.answer_approval(key.code);
        }
        if let Some(picker) = &mut self.picker {
            return match key.code {
                KeyCode::Esc => {
                    self.picker = None;
                    None
                }
                KeyCode::Up => {
                    picker.selected = picker.selected.saturating_sub(1);
                    None
                }
                KeyCode::Down => {
                    if picker.selected + 1 < picker.rows.len() {
                        picker.selected += 1;
                    }
                    None
                }
                KeyCode::Enter => {
                    let row = picker.rows.get(picker.selected).cloned();
                    self.picker = None;
                    row.map(Action::Cancel)
                }
                KeyCode::Char('a') if !ctrl => {
                    let row = picker.rows.get(picker.selected)?.clone();
                    if row.kind != PickerKind::Task || row.tty.is_none() {
                        let what = if row.kind == PickerKind::Task {
                            "it runs without a terminal"
                        } else {
                            "it is a tool call, not a task"
                        };
                        self.picker = None;
                        self.note(&format!("cannot attach to {}: {what}", row.id));
                        return None;
                    }
                    self.picker = None;
                    self.attached = Some(Attached {
                        task_id: row.id.clone(),
                        label: row.label.clone(),
                        screen: None,
                        gone: None,
                    });
                    Some(Action::Attach(row))
                }
                _ => None,
            };
        }
        match key.code {
            KeyCode::Char('k') if ctrl => Some(Action::OpenPicker),
            KeyCode::Char('b') if ctrl => Some(Action::MoveToBackground),
            KeyCode::Esc => {
                self.suppressed = true;
                Some(Action::Abort)
            }
            KeyCode::Enter => {
                let prompt = self.input.text().trim().to_owned();
                if prompt.is_empty() {
                    return None;
                }
                self.input.clear();
                self.history_pos = None;
                if self.history.last() != Some(&prompt) {
                    self.history.push(prompt.clone());
                    if self.history.len() > HISTORY_LIMIT {
                        self.history.remove(0);
                    }
                }
                self.suppressed = false;
                self.scroll = 0;
                Some(Action::Prompt(prompt))
            }
            KeyCode::Up => {
                let pos = match self.history_pos {
                    None => self.history.len().checked_sub(1)?,
                    Some(pos) => pos.saturating_sub(1),
                };
                self.history_pos = Some(pos);
                self.input.set(&self.history[pos]);
                None
            }
            KeyCode::Down => {
                let pos = self.history_pos? + 1;
                if pos < self.history.len() {
                    self.history_pos = Some(pos);
                    self.input.set(&self.history[pos]);
                } else {
                    self.history_pos = None;
                    self.input.clear();
                }
                None
            }
            KeyCode::PageUp => {
                self.scroll = self.scroll.saturating_add(10);
                None
            }
            KeyCode::PageDown => {
                self.scroll = self.scroll.saturating_sub(10);
                None
            }
            code => {
                self.input.edit(code, ctrl);
                None
            }
        }
    }
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
