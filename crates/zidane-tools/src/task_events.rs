//! Pushed task events: a background task started with `notify_on` patterns is followed
//! line by line, and every new line of its log that matches one becomes a
//! [`TaskEvent`] for the session's [`TaskEventSink`], without the model asking.
//!
//! One follower per task with patterns. It reads the log through
//! [`ExecutionContext::follow_output`](zidane_context::ExecutionContext::follow_output)
//! (the context wakes it when the task writes or ends: nothing polls), splits and counts
//! lines with the same code as `wait_task`'s `until.pattern`, and ends when the task's
//! output ends — then it tells the sink it [`drained`](TaskEventSink::drained) the log,
//! so the task's exit can be told after its last event. New patterns (`shell_notify`)
//! take effect for lines not matched yet; no patterns stop the follower.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::watch;
use zidane_context::{CancellationToken, ExecutionContext, ExecutionHandle, TaskId};

use crate::log_lines::{LogFollower, match_line};

/// The most patterns one task may carry.
pub const MAX_NOTIFY_PATTERNS: usize = 16;
/// The longest pattern, in bytes.
pub const MAX_NOTIFY_PATTERN_BYTES: usize = 1024;
/// The most characters of a matching line an event carries; a longer line is cut and
/// ends with `…`.
pub const MAX_EVENT_LINE_CHARS: usize = 400;

/// A new line of a background task's log that matched one of its `notify_on` patterns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskEvent {
    /// The task.
    pub task_id: TaskId,
    /// The line's number in the log, from 1.
    pub line_number: u64,
    /// The line, without its terminal escape sequences when that is how it matched, at
    /// most [`MAX_EVENT_LINE_CHARS`] characters.
    pub line: String,
    /// The pattern that matched (the first of the task's patterns that does).
    pub pattern: String,
}

/// Where a session's task events go (the agent's delivery queue).
pub trait TaskEventSink: Send + Sync {
    /// A task is followed with these patterns, from now on (a start with `notify_on`, or
    /// `shell_notify`; empty: no longer followed). Called before any event of the
    /// follower it announces. After an empty call nothing is left to wait for: the
    /// follower stops once it notices, and the lines it matched before it did are
    /// lines the session no longer asked for.
    fn follow(&self, task_id: TaskId, patterns: &[String]);
    /// A new matching line.
    fn event(&self, event: TaskEvent);
    /// The task's follower read its log to the end (the task ended) or stopped (its
    /// patterns were cleared, or the log could not be read): no event of it follows.
    fn drained(&self, task_id: TaskId);
}

/// A task's `notify_on`, checked: at most [`MAX_NOTIFY_PATTERNS`] regular expressions
/// (Rust regex syntax), each at most [`MAX_NOTIFY_PATTERN_BYTES`] long.
#[derive(Debug, Clone, Default)]
pub struct NotifyPatterns {
    regexes: Vec<Regex>,
    /// All of them in one multi-line expression, run over many lines at once to skip
    /// those none can match; `None` when that could miss a line (`\A`, `\z`) or does
    /// not compile.
    prefilter: Option<Regex>,
}

impl NotifyPatterns {
    /// Parses `notify_on`: a string or a list of strings, each a regular expression.
    /// The error names the field and, for a pattern that does not compile, the pattern.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let sources: Vec<&str> = match value {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many
                .iter()
                .map(|v| {
                    v.as_str().ok_or_else(|| {
                        "`notify_on` must be a regular expression or a list of them (strings)"
                            .to_owned()
                    })
                })
                .collect::<Result<_, _>>()?,
            _ => {
                return Err(
                    "`notify_on` must be a regular expression or a list of them (strings)".into(),
                );
            }
        };
        if sources.len() > MAX_NOTIFY_PATTERNS {
            return Err(format!(
                "`notify_on` takes at most {MAX_NOTIFY_PATTERNS} patterns, got {}; join \
                 alternatives with `|`",
                sources.len()
            ));
        }
        let mut regexes = Vec::with_capacity(sources.len());
        for source in sources {
            if source.is_empty() {
                return Err("`notify_on`: an empty pattern would match every line".into());
            }
            if source.len() > MAX_NOTIFY_PATTERN_BYTES {
                return Err(format!(
                    "`notify_on`: a pattern is at most {MAX_NOTIFY_PATTERN_BYTES} bytes, got one \
                     of {}",
                    source.len()
                ));
            }
            let regex = Regex::new(source).map_err(|e| {
                format!("`notify_on`: {source:?} is not a valid regular expression: {e}")
            })?;
            regexes.push(regex);
        }
        let prefilter = prefilter_of(&regexes);
        Ok(Self { regexes, prefilter })
    }

    /// Whether a line of `text` (whole lines, no terminal controls) may match: false
    /// only when none can.
    fn may_match(&self, text: &str) -> bool {
        self.prefilter
            .as_ref()
            .is_none_or(|prefilter| prefilter.is_match(text))
    }

    /// Whether there is no pattern.
    pub fn is_empty(&self) -> bool {
        self.regexes.is_empty()
    }

    /// The patterns as given.
    pub fn sources(&self) -> Vec<String> {
        self.regexes.iter().map(|r| r.as_str().to_owned()).collect()
    }

    /// The first pattern that matches `line`, and the line as matched.
    fn first_match(&self, line: &[u8]) -> Option<(&Regex, String)> {
        self.regexes
            .iter()
            .find_map(|regex| match_line(regex, line).map(|m| (regex, m.text)))
    }
}

/// Where a follower starts telling: lines up to `after_line`, or ending at or before
/// `after_offset`, were told already or predate the patterns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FollowFrom {
    /// The last line number not to tell.
    pub after_line: u64,
    /// Lines that end at or before this offset of the log are not told.
    pub after_offset: u64,
}

/// A session's followers and their sink. Cheap to clone (shared); the agent keeps one
/// and hands it to every tool call in [`BackgroundSinks`](crate::BackgroundSinks).
#[derive(Clone)]
pub struct TaskEvents {
    sink: Arc<dyn TaskEventSink>,
    /// Stops every follower (the session ends).
    stop: CancellationToken,
    followers: Arc<Mutex<HashMap<TaskId, watch::Sender<Arc<NotifyPatterns>>>>>,
}

impl fmt::Debug for TaskEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskEvents")
            .field("followed", &self.lock().keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// What [`TaskEvents::set_patterns`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatternsChanged {
    /// The follower of the task now uses the new patterns.
    Replaced,
    /// A follower was started for the task's lines from now on.
    Started,
    /// The patterns were cleared and the follower stopped.
    Cleared,
    /// The task had no patterns, and still has none.
    Unchanged,
}

impl TaskEvents {
    /// Followers telling `sink`.
    pub fn new(sink: Arc<dyn TaskEventSink>) -> Self {
        Self {
            sink,
            stop: CancellationToken::new(),
            followers: Arc::default(),
        }
    }

    /// Stops every follower, now and to come (the session is torn down).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<TaskId, watch::Sender<Arc<NotifyPatterns>>>> {
        // Only inserts and removes happen under the lock: a poisoned map is still whole.
        zidane_context::lock(&self.followers)
    }

    /// Whether `task_id` has a follower.
    pub fn is_following(&self, task_id: TaskId) -> bool {
        self.lock().contains_key(&task_id)
    }

    /// Starts following `task_id` (of `handle` in `context`) with `patterns` (nothing
    /// happens for none, or when the task is followed already) on the current tokio
    /// runtime. The follower ends when the task's output ends, when its patterns are
    /// cleared, or at [`stop`](Self::stop) — not when the call that started it ends.
    pub fn follow(
        &self,
        context: Arc<dyn ExecutionContext>,
        handle: ExecutionHandle,
        task_id: TaskId,
        patterns: NotifyPatterns,
        from: FollowFrom,
    ) {
        if patterns.is_empty() || self.stop.is_cancelled() {
            return;
        }
        let sources = patterns.sources();
        let (sender, receiver) = watch::channel(Arc::new(patterns));
        {
            let mut followers = self.lock();
            if followers.contains_key(&task_id) {
                return;
            }
            followers.insert(task_id, sender);
        }
        self.sink.follow(task_id, &sources);
        let events = self.clone();
        tokio::spawn(async move {
            events
                .run_follower(context.as_ref(), handle, task_id, receiver, from)
                .await;
            events.lock().remove(&task_id);
            events.sink.drained(task_id);
        });
    }

    /// Replaces the patterns of a running task: a follower already there takes them for
    /// the lines it has not matched yet; otherwise one starts for lines written from
    /// now on. Empty patterns stop the follower. The caller checked the task runs.
    pub async fn set_patterns(
        &self,
        context: Arc<dyn ExecutionContext>,
        handle: ExecutionHandle,
        task_id: TaskId,
        patterns: NotifyPatterns,
    ) -> PatternsChanged {
        let sources = patterns.sources();
        {
            let followers = self.lock();
            if let Some(sender) = followers.get(&task_id) {
                sender.send_replace(Arc::new(patterns));
                drop(followers);
                self.sink.follow(task_id, &sources);
                return if sources.is_empty() {
                    PatternsChanged::Cleared
                } else {
                    PatternsChanged::Replaced
                };
            }
        }
        if patterns.is_empty() {
            return PatternsChanged::Unchanged;
        }
        let after_offset = match context.follow_output(handle, task_id, u64::MAX, 0).await {
            Ok(Some(end)) => end.offset,
            _ => 0,
        };
        self.follow(
            context,
            handle,
            task_id,
            patterns,
            FollowFrom {
                after_line: 0,
                after_offset,
            },
        );
        PatternsChanged::Started
    }

    async fn run_follower(
        &self,
        context: &dyn ExecutionContext,
        handle: ExecutionHandle,
        task_id: TaskId,
        mut patterns: watch::Receiver<Arc<NotifyPatterns>>,
        from: FollowFrom,
    ) {
        let mut follower = LogFollower::from_start(task_id);
        loop {
            // The lines of one step are matched against the patterns of its start.
            let current = Arc::clone(&patterns.borrow_and_update());
            if current.is_empty() {
                return;
            }
            let may_match = |text: &str| current.may_match(text);
            let step = tokio::select! {
                step = follower.step_filtered(context, handle, &may_match) => step,
                changed = patterns.changed() => {
                    if changed.is_err() || patterns.borrow().is_empty() {
                        return;
                    }
                    continue;
                }
                () = self.stop.cancelled() => return,
            };
            // An unknown task or a log that cannot be read: nothing more can be told, and
            // the sink hears the follower drained, so the exit is not held.
            let Ok(Some(step)) = step else {
                return;
            };
            for ((line_number, line), end) in step.lines.iter().zip(&step.ends) {
                let line_number = line_number.unwrap_or_default();
                if line_number <= from.after_line || *end <= from.after_offset {
                    continue;
                }
                if let Some((regex, text)) = current.first_match(line) {
                    self.sink.event(TaskEvent {
                        task_id,
                        line_number,
                        line: bounded_line(&text),
                        pattern: regex.as_str().to_owned(),
                    });
                }
            }
            if step.finished {
                return;
            }
        }
    }
}

/// The patterns as one expression over many lines: multi-line (`^` and `$` at each
/// line's edges) and CRLF-aware (a line's `\r` is not part of it). A pattern anchored
/// to the text's own ends (`\A`, `\z`) has no such form.
fn prefilter_of(regexes: &[Regex]) -> Option<Regex> {
    if regexes.is_empty()
        || regexes
            .iter()
            .any(|r| r.as_str().contains("\\A") || r.as_str().contains("\\z"))
    {
        return None;
    }
    let joined = regexes
        .iter()
        .map(|r| format!("(?:{})", r.as_str()))
        .collect::<Vec<_>>()
        .join("|");
    Regex::new(&format!("(?mR:{joined})")).ok()
}

/// `text` cut to [`MAX_EVENT_LINE_CHARS`] characters (ending with `…` when cut).
fn bounded_line(text: &str) -> String {
    match text.char_indices().nth(MAX_EVENT_LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patterns_parse_from_a_string_or_a_list() {
        let one = NotifyPatterns::parse(&json!("error")).unwrap();
        assert_eq!(one.sources(), ["error"]);
        let two = NotifyPatterns::parse(&json!(["error", "warn(ing)?"])).unwrap();
        assert_eq!(two.sources(), ["error", "warn(ing)?"]);
        assert!(NotifyPatterns::parse(&json!([])).unwrap().is_empty());
    }

    #[test]
    fn bad_patterns_are_named() {
        let cases = [
            (
                json!("(unclosed"),
                "\"(unclosed\" is not a valid regular expression",
            ),
            (json!(5), "must be a regular expression or a list"),
            (json!(["ok", 5]), "must be a regular expression or a list"),
            (json!(""), "empty pattern"),
            (
                json!("x".repeat(MAX_NOTIFY_PATTERN_BYTES + 1)),
                "at most 1024 bytes",
            ),
            (
                json!(vec!["a"; MAX_NOTIFY_PATTERNS + 1]),
                "at most 16 patterns, got 17",
            ),
        ];
        for (value, expected) in cases {
            let error = NotifyPatterns::parse(&value).unwrap_err();
            assert!(error.contains(expected), "{value}: {error}");
            assert!(error.starts_with("`notify_on`"), "{error}");
        }
    }

    #[test]
    fn the_first_matching_pattern_is_named_and_escapes_are_stripped() {
        let patterns = NotifyPatterns::parse(&json!(["^warn", "error"])).unwrap();
        let (regex, text) = patterns.first_match(b"\x1b[31merror\x1b[0m: boom").unwrap();
        assert_eq!((regex.as_str(), text.as_str()), ("error", "error: boom"));
        assert!(patterns.first_match(b"all fine").is_none());
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        let line = "é".repeat(MAX_EVENT_LINE_CHARS + 10);
        let cut = bounded_line(&line);
        assert_eq!(cut.chars().count(), MAX_EVENT_LINE_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded_line("short"), "short");
    }
}
