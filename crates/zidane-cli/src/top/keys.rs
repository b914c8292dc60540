//! What a key does in `zidane top`: a state machine over [`Top`]'s [`Mode`], moving the
//! selection and the filter itself and returning what the loop is to do outside —
//! stop a task, attach to one, page its log, quit. Stopping asks first: one stray key
//! must not end a build.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use zidane::wire::Tone;

use super::state::{Mode, Top};

/// Rows a PageUp or PageDown moves the selection.
pub const PAGE: isize = 10;

/// What the loop is to do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Leave `zidane top`.
    Quit,
    /// Stop this task, as `zidane kill` does.
    Stop(String),
    /// Hand the terminal to `zidane attach` on this task, then come back.
    Attach(String),
    /// Hand the terminal to `$PAGER` on this log, then come back.
    Page(PathBuf),
}

/// Applies `key` to `top`; what the loop is to do, if anything.
pub fn on_key(top: &mut Top, key: KeyEvent) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    if ctrl && matches!(key.code, KeyCode::Char('c' | 'd')) {
        return Some(Action::Quit);
    }
    match top.mode.clone() {
        Mode::Browse => browse(top, key, ctrl),
        Mode::Filter => {
            filter(top, key, ctrl);
            None
        }
        Mode::Confirm { id } => {
            top.mode = Mode::Browse;
            if matches!(key.code, KeyCode::Char('y' | 'Y')) {
                top.note = Some((format!("stopping {id}…"), Tone::Dim));
                return Some(Action::Stop(id));
            }
            top.note = Some((format!("{id} left running"), Tone::Dim));
            None
        }
    }
}

/// Text pasted: typed into the filter while it is typed, else ignored.
pub fn on_paste(top: &mut Top, text: &str) {
    if top.mode == Mode::Filter {
        let mut filter = top.filter.clone();
        filter.extend(text.chars().filter(|c| !c.is_control()));
        top.set_filter(filter);
    }
}

fn browse(top: &mut Top, key: KeyEvent, ctrl: bool) -> Option<Action> {
    // A key says something new: the last action's note has been read.
    top.note = None;
    match key.code {
        KeyCode::Char('q') | KeyCode::Esc => return Some(Action::Quit),
        KeyCode::Up | KeyCode::Char('k') => top.select_by(-1),
        KeyCode::Down | KeyCode::Char('j') => top.select_by(1),
        KeyCode::PageUp => top.select_by(-PAGE),
        KeyCode::PageDown => top.select_by(PAGE),
        KeyCode::Home | KeyCode::Char('g') => top.select_first(),
        KeyCode::End | KeyCode::Char('G') => top.select_last(),
        KeyCode::Char('/') => top.mode = Mode::Filter,
        KeyCode::Char('x') | KeyCode::Delete if !ctrl => return ask_to_stop(top),
        KeyCode::Char('a') | KeyCode::Enter => return attach(top),
        KeyCode::Char('l') => return page(top),
        _ => {}
    }
    None
}

fn filter(top: &mut Top, key: KeyEvent, ctrl: bool) {
    let mut filter = top.filter.clone();
    match key.code {
        KeyCode::Enter => {
            top.mode = Mode::Browse;
            return;
        }
        KeyCode::Esc => {
            top.mode = Mode::Browse;
            filter.clear();
        }
        KeyCode::Char('u') if ctrl => filter.clear(),
        KeyCode::Backspace => {
            filter.pop();
        }
        KeyCode::Char(c) if !ctrl => filter.push(c),
        _ => return,
    }
    top.set_filter(filter);
}

fn ask_to_stop(top: &mut Top) -> Option<Action> {
    let task = top.selected_task()?;
    let id = task.row.id.clone();
    if !task.running() {
        top.note = Some((format!("{id} has ended already"), Tone::Dim));
        return None;
    }
    top.mode = Mode::Confirm { id };
    None
}

fn attach(top: &mut Top) -> Option<Action> {
    let task = top.selected_task()?;
    let id = task.row.id.clone();
    if task.attachable() {
        return Some(Action::Attach(id));
    }
    let why = if !task.running() {
        format!("{id} has ended; l pages its log")
    } else if task.row.kind == "detached" {
        format!("{id} has no terminal (attach takes tasks started with tty: true); l pages its log")
    } else {
        format!("{id} is a running host's task: only detached terminal tasks take attach")
    };
    top.note = Some((why, Tone::Warn));
    None
}

fn page(top: &mut Top) -> Option<Action> {
    let task = top.selected_task()?;
    if let Some(path) = &task.row.output_path {
        return Some(Action::Page(path.clone()));
    }
    top.note = Some((format!("{} has no log yet", task.row.id), Tone::Warn));
    None
}

#[cfg(test)]
#[path = "keys_tests.rs"]
mod tests;
