//! What `zidane top` shows, without any I/O: the tasks of the last reading, each with
//! its CPU use over the last readings; the selection, kept on a task (not a row) as the
//! list changes; the filter; the selected task's last log lines; a note of what the
//! last action did. The loop ([`super`]) feeds it readings and log lines, the keys
//! ([`super::keys`]) move it, the view ([`super::view`]) draws it.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use zidane::wire::Tone;

use crate::listing::Row;

/// How many readings of a task's CPU use are kept (a minute at one a second); the view
/// shows the newest that fit its column.
pub const HISTORY: usize = 60;

/// One task as shown: its row of the last reading and its CPU history.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// What `zidane ps` says of it.
    pub row: Row,
    /// Its tree's CPU use between two readings, in percent of one core, oldest first;
    /// `None` for a reading where it was not running (or not yet read twice).
    pub history: VecDeque<Option<u32>>,
    /// Its tree's CPU time at the last reading, and when that was.
    last_cpu: Option<(Duration, Instant)>,
}

impl Task {
    /// A task first seen now, with no history yet.
    pub fn new(row: Row) -> Self {
        Self {
            row,
            history: VecDeque::with_capacity(HISTORY),
            last_cpu: None,
        }
    }

    /// A task with a CPU history already (the view's tests).
    #[cfg(test)]
    pub fn with_history(row: Row, history: impl IntoIterator<Item = Option<u32>>) -> Self {
        let mut task = Self::new(row);
        task.history = history.into_iter().collect();
        task
    }

    /// CPU use between the last two readings, in percent of one core.
    pub fn cpu_percent(&self) -> Option<u32> {
        self.history.back().copied().flatten()
    }

    /// Whether it still runs.
    pub fn running(&self) -> bool {
        self.row.state == "running"
    }

    /// Whether `zidane attach` takes it: a running detached task in a terminal.
    pub fn attachable(&self) -> bool {
        self.row.kind == "detached" && self.row.tty && self.running()
    }

    /// Takes the new reading of the same task: its row, and its CPU use since the last.
    fn read_again(&mut self, row: Row, at: Instant) {
        let cpu = row.usage.map(|usage| usage.cpu);
        let percent = match (cpu, self.last_cpu) {
            (Some(now), Some((before, then))) if at > then => {
                let spent = now.saturating_sub(before).as_secs_f64();
                let percent = (spent / (at - then).as_secs_f64() * 100.0).round();
                // A share of a few cores at most: the cast cannot overflow.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(percent.max(0.0) as u32)
            }
            _ => None,
        };
        self.push(percent);
        self.last_cpu = cpu.map(|cpu| (cpu, at));
        self.row = row;
    }

    fn push(&mut self, percent: Option<u32>) {
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(percent);
    }
}

/// What the keys do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Moving the selection and acting on it.
    Browse,
    /// Typing the filter (`/`), applied as it is typed.
    Filter,
    /// Asked whether to stop this task (`x`).
    Confirm {
        /// The task's id.
        id: String,
    },
}

/// The selected task's log as last read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogLines {
    /// The task whose log it is.
    pub id: String,
    /// Its last lines, printable, oldest first.
    pub lines: Vec<String>,
    /// Why there is nothing to show (no log, unreadable), when there is not.
    pub missing: Option<String>,
}

/// Everything `zidane top` shows.
#[derive(Debug, Clone)]
pub struct Top {
    /// The tasks listed, in the supervisor's order: detached first, then the hosts'.
    pub tasks: Vec<Task>,
    /// The selected task's id.
    pub selected: Option<String>,
    /// Where the selection was in the shown list, to stay near when its task goes.
    selected_at: usize,
    /// The filter: a path prefix of the tasks' working directory (it starts with `/`,
    /// `~` or `.`), else text any of their fields holds; empty, every task.
    pub filter: String,
    /// What the keys do now.
    pub mode: Mode,
    /// The selected task's log.
    pub log: LogLines,
    /// What the last action did, in its tone.
    pub note: Option<(String, Tone)>,
    /// When the last reading was taken: the tasks' ages are counted to it.
    pub now: DateTime<Utc>,
    /// The directory `zidane top` runs in: a `.` filter starts there.
    pub here: PathBuf,
    /// Every task kept (`--all`), ended and told ones too.
    pub all: bool,
    /// Tasks seen running in this view: listed on after they end, so a stop shows.
    watched: HashSet<String>,
}

impl Top {
    /// An empty view, before the first reading.
    pub fn new(here: PathBuf, all: bool, now: DateTime<Utc>) -> Self {
        Self {
            tasks: Vec::new(),
            selected: None,
            selected_at: 0,
            filter: String::new(),
            mode: Mode::Browse,
            log: LogLines::default(),
            note: None,
            now,
            here,
            all,
            watched: HashSet::new(),
        }
    }

    /// Takes a reading: `rows` as [`crate::listing::local_rows`] read them at `at`
    /// (`now` on the wall clock). Without `--all`, an ended detached task whose end was
    /// told is left out, as `zidane ps` does, unless it was seen running here.
    pub fn update(&mut self, rows: Vec<Row>, at: Instant, now: DateTime<Utc>) {
        let mut before: Vec<Task> = std::mem::take(&mut self.tasks);
        for row in rows {
            let running = row.state == "running";
            let shown =
                self.all || running || row.told != Some(true) || self.watched.contains(&row.id);
            if !shown {
                continue;
            }
            if running {
                self.watched.insert(row.id.clone());
            }
            let mut task = match before.iter().position(|task| task.row.id == row.id) {
                Some(at) => before.swap_remove(at),
                None => Task::new(row.clone()),
            };
            task.read_again(row, at);
            self.tasks.push(task);
        }
        self.now = now;
        self.settle_selection();
    }

    /// The tasks the filter lets through, in order.
    pub fn shown(&self) -> Vec<&Task> {
        self.tasks.iter().filter(|task| self.passes(task)).collect()
    }

    /// The selected task, when one is shown.
    pub fn selected_task(&self) -> Option<&Task> {
        let id = self.selected.as_deref()?;
        self.shown().into_iter().find(|task| task.row.id == id)
    }

    /// Where the selected task is among those shown.
    pub fn selected_index(&self) -> Option<usize> {
        let id = self.selected.as_deref()?;
        self.shown().iter().position(|task| task.row.id == id)
    }

    /// Moves the selection by `by` rows, stopping at either end.
    pub fn select_by(&mut self, by: isize) {
        let shown = self.shown().len();
        if shown == 0 {
            return self.settle_selection();
        }
        let at = self
            .selected_index()
            .unwrap_or(self.selected_at.min(shown - 1));
        let to = at.saturating_add_signed(by).min(shown - 1);
        self.select_at(to);
    }

    /// Selects the first task shown.
    pub fn select_first(&mut self) {
        self.select_at(0);
    }

    /// Selects the last task shown.
    pub fn select_last(&mut self) {
        self.select_at(self.shown().len().saturating_sub(1));
    }

    /// Sets the filter, keeping the selection on its task while it is shown.
    pub fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.settle_selection();
    }

    /// Keeps the selection on a shown task: its own while it is shown, else the one now
    /// where it was (or the last), none when none is shown.
    pub fn settle_selection(&mut self) {
        let shown = self.shown().len();
        if shown == 0 {
            self.selected = None;
            return;
        }
        match self.selected_index() {
            Some(at) => self.selected_at = at,
            None => self.select_at(self.selected_at.min(shown - 1)),
        }
    }

    fn select_at(&mut self, at: usize) {
        let id = self.shown().get(at).map(|task| task.row.id.clone());
        self.selected_at = at;
        self.selected = id;
    }

    /// Whether the filter lets `task` through.
    fn passes(&self, task: &Task) -> bool {
        let filter = self.filter.trim();
        if filter.is_empty() {
            return true;
        }
        if let Some(prefix) = self.path_filter(filter) {
            let row = &task.row;
            return row.cwd.starts_with(&prefix)
                || row
                    .workspace
                    .as_ref()
                    .is_some_and(|workspace| workspace.starts_with(&prefix));
        }
        let needle = filter.to_lowercase();
        let row = &task.row;
        [
            row.id.as_str(),
            row.state.as_str(),
            row.host.as_str(),
            row.session.as_str(),
            row.command.as_str(),
            &row.cwd.to_string_lossy(),
        ]
        .iter()
        .any(|field| field.to_lowercase().contains(&needle))
    }

    /// The directory a filter names, when it is a path: `/…`, `~…` (the home dir), `.…`
    /// (from where `zidane top` runs).
    fn path_filter(&self, filter: &str) -> Option<PathBuf> {
        if filter.starts_with('/') {
            return Some(PathBuf::from(filter));
        }
        if let Some(rest) = filter.strip_prefix('~') {
            let home = dirs::home_dir()?;
            return Some(home.join(rest.trim_start_matches('/')));
        }
        if filter.starts_with('.') {
            return Some(normalize(&self.here.join(filter)));
        }
        None
    }
}

/// `path` with its `.` and `..` components resolved by name, as a person reads it.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}
