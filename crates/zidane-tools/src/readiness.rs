//! `wait_task`'s `until`: wait for a task to be *ready* — a line in its log, a port that
//! accepts, a URL that answers — instead of for it to end.
//!
//! Nothing here polls the log: it is followed through
//! [`ExecutionContext::follow_output`](zidane_context::ExecutionContext::follow_output),
//! which wakes on new output, and every byte is looked at once. Ports and URLs are
//! probed by the context, where the task runs
//! ([`ExecutionContext::probe`](zidane_context::ExecutionContext::probe): a task on a
//! worker listens on the worker's ports), with a backoff from [`FIRST_PROBE_GAP`] up to
//! [`LAST_PROBE_GAP`]; this crate itself opens no connection. Dropping the future stops
//! everything.

use crate::data::ReadyMatch;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::Value;
use zidane_context::{ContextError, Probe, ProbeOutcome, TaskId, lock};

use crate::context::ToolContext;
#[cfg(test)]
use crate::log_lines::MAX_MATCHED_LINE;
use crate::log_lines::{Lines, LogFollower, match_line as match_log_line};

/// The first pause between two probes of a port or URL.
pub const FIRST_PROBE_GAP: Duration = Duration::from_millis(10);
/// The longest pause between two probes of a port or URL.
pub const LAST_PROBE_GAP: Duration = Duration::from_millis(250);
/// How long one probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The schema of `wait_task`'s `until`: one of three objects. Written out rather than
/// derived, so the model sees plain alternatives (the value is checked by
/// [`Until::parse`], which explains every mistake).
pub(crate) fn until_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "anyOf": [
            {
                "type": "object",
                "properties": {
                    "pattern": {
                        "type": "string",
                        "description": "A regular expression (Rust regex syntax) matched against each line of the task's log."
                    },
                    "from": {
                        "type": "string",
                        "enum": ["start", "now"],
                        "description": "`start` (default): lines already written count too; `now`: only lines written after the call."
                    }
                },
                "required": ["pattern"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {
                    "port": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 65535,
                        "description": "Ready when 127.0.0.1 accepts a TCP connection on this port."
                    }
                },
                "required": ["port"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {
                    "url": {
                        "type": "string",
                        "description": "Ready when an HTTP GET of this http:// URL on a loopback host answers 2xx or 3xx, e.g. http://127.0.0.1:8080/health."
                    }
                },
                "required": ["url"],
                "additionalProperties": false
            }
        ]
    })
}

/// Where a pattern starts looking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatternFrom {
    /// From the first line of the log.
    Start,
    /// From what the task writes after the call.
    Now,
}

/// A readiness condition, checked.
#[derive(Debug, Clone)]
pub(crate) enum Until {
    Pattern { regex: Regex, from: PatternFrom },
    Port(u16),
    Url { url: String },
}

impl Until {
    /// Parses `until`, or says exactly what is wrong with it.
    pub(crate) fn parse(value: &Value, allow_remote: bool) -> Result<Self, String> {
        let Some(object) = value.as_object() else {
            return Err(
                "`until` must be an object: {\"pattern\": …}, {\"port\": …} or {\"url\": …}".into(),
            );
        };
        let kinds: Vec<&str> = ["pattern", "port", "url"]
            .into_iter()
            .filter(|k| object.contains_key(*k))
            .collect();
        let [kind] = kinds.as_slice() else {
            return Err(format!(
                "`until` needs exactly one of `pattern`, `port` or `url`, got {}",
                if kinds.is_empty() {
                    "none".to_owned()
                } else {
                    kinds.join(" and ")
                }
            ));
        };
        let allowed: &[&str] = if *kind == "pattern" {
            &["pattern", "from"]
        } else {
            &[kind]
        };
        if let Some(extra) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(format!("`until`: unknown field `{extra}` beside `{kind}`"));
        }
        match *kind {
            "pattern" => {
                let Some(pattern) = object["pattern"].as_str() else {
                    return Err("`until.pattern` must be a string (a regular expression)".into());
                };
                let regex = Regex::new(pattern).map_err(|e| {
                    format!("`until.pattern` is not a valid regular expression: {e}")
                })?;
                let from = match object.get("from").map(Value::as_str) {
                    None | Some(Some("start")) => PatternFrom::Start,
                    Some(Some("now")) => PatternFrom::Now,
                    Some(_) => return Err("`until.from` must be \"start\" or \"now\"".into()),
                };
                Ok(Self::Pattern { regex, from })
            }
            "port" => match object["port"].as_u64().map(u16::try_from) {
                Some(Ok(port)) if port > 0 => Ok(Self::Port(port)),
                _ => Err("`until.port` must be a port number from 1 to 65535".into()),
            },
            _ => {
                let Some(url) = object["url"].as_str() else {
                    return Err("`until.url` must be a string".into());
                };
                loopback_addr(url, allow_remote)?;
                Ok(Self::Url {
                    url: url.to_owned(),
                })
            }
        }
    }

    /// How the condition reads in a result: "a line matching `ready`".
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Pattern { regex, .. } => format!("a line matching `{}`", regex.as_str()),
            Self::Port(port) => format!("127.0.0.1:{port} to accept a connection"),
            Self::Url { url, .. } => format!("GET {url} to answer 2xx or 3xx"),
        }
    }
}

/// The host and port of an `http://` URL, refused unless the host is loopback (or
/// `allow_remote`).
fn loopback_addr(url: &str, allow_remote: bool) -> Result<SocketAddr, String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!("`until.url` must start with http:// (got {url:?})"));
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            let port = port
                .parse::<u16>()
                .map_err(|_| format!("`until.url` has a bad port: {url:?}"))?;
            (host, port)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let ip: IpAddr = match host {
        "localhost" => IpAddr::V4(Ipv4Addr::LOCALHOST),
        _ => host.parse().map_err(|_| {
            format!("`until.url` needs an IP address or localhost as its host, got {host:?}")
        })?,
    };
    if !ip.is_loopback() && !allow_remote {
        return Err(format!(
            "`until.url` must point at this machine (127.0.0.1, ::1 or localhost); {host} is not allowed here"
        ));
    }
    Ok(SocketAddr::new(ip, port))
}

/// How a readiness wait ended (the task's exit and its log's tail are looked up by the
/// caller).
#[derive(Debug)]
pub(crate) enum Waited {
    /// The condition holds: the text for the model and the data for hosts.
    Ready { text: String, matched: ReadyMatch },
    /// The task ended first.
    Ended,
    /// Unknown task (it vanished from the context).
    Gone,
}

/// What a wait saw last, for the timeout's answer.
#[derive(Debug, Default)]
pub(crate) struct LastSeen {
    pub(crate) line: Option<String>,
    pub(crate) error: Option<String>,
}

impl LastSeen {
    pub(crate) fn describe(&self) -> String {
        match (&self.line, &self.error) {
            (_, Some(error)) => format!("Last probe: {error}."),
            (Some(line), None) => format!("Last line of its log: {line:?}."),
            (None, None) => "Its log is empty so far.".to_owned(),
        }
    }
}

/// Waits until `until` holds for `task_id`, or the task ends. `seen` keeps what the wait
/// saw, for a caller that gives up on it.
pub(crate) async fn wait_ready(
    context: &ToolContext,
    task_id: TaskId,
    until: &Until,
    seen: &std::sync::Mutex<LastSeen>,
) -> Result<Waited, ContextError> {
    let started = Instant::now();
    match until {
        Until::Pattern { regex, from } => {
            follow_pattern(context, task_id, regex, *from, seen).await
        }
        Until::Port(port) => {
            let probe = || probe_once(context, task_id, Probe::port(*port));
            probe_until_ready(context, task_id, probe, seen)
                .await
                .map(|ready| match ready {
                    Some(_) => {
                        let after = started.elapsed();
                        Waited::Ready {
                            text: format!(
                                "127.0.0.1:{port} accepted a connection after {}",
                                zidane_wire::format_duration(after)
                            ),
                            matched: ReadyMatch {
                                port: Some(*port),
                                after_ms: Some(millis(after)),
                                ..ReadyMatch::default()
                            },
                        }
                    }
                    None => Waited::Ended,
                })
        }
        Until::Url { url } => {
            let probe = || probe_once(context, task_id, Probe::http(url.clone()));
            probe_until_ready(context, task_id, probe, seen)
                .await
                .map(|ready| match ready {
                    Some(status) => {
                        let status = status.unwrap_or_default();
                        let after = started.elapsed();
                        Waited::Ready {
                            text: format!(
                                "GET {url} answered {status} after {}",
                                zidane_wire::format_duration(after)
                            ),
                            matched: ReadyMatch {
                                url: Some(url.to_string()),
                                status: Some(status),
                                after_ms: Some(millis(after)),
                                ..ReadyMatch::default()
                            },
                        }
                    }
                    None => Waited::Ended,
                })
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Probes with backoff until a probe succeeds (`Some`) or the task ends (`None`).
async fn probe_until_ready<T, F, Fut>(
    context: &ToolContext,
    task_id: TaskId,
    probe: F,
    seen: &std::sync::Mutex<LastSeen>,
) -> Result<Option<T>, ContextError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<Result<T, String>, ContextError>>,
{
    let mut gap = FIRST_PROBE_GAP;
    let ended = context.execution().wait_background(
        context.handle(),
        task_id,
        crate::wait_task::MAX_WAIT_TIMEOUT,
        context.cancel().clone(),
    );
    tokio::pin!(ended);
    // Cleared when the exit wait gave up (cancelled): the caller's timeout decides then.
    let mut watching = true;
    loop {
        match probe().await? {
            Ok(value) => return Ok(Some(value)),
            Err(error) => lock(seen).error = Some(error),
        }
        tokio::select! {
            exit = &mut ended, if watching => {
                if exit?.is_some() {
                    return Ok(None);
                }
                watching = false;
            }
            () = tokio::time::sleep(gap) => {}
        }
        gap = (gap * 2).min(LAST_PROBE_GAP);
    }
}

/// One probe by the context, where the task runs: `Ok(Ok(status))` once ready (an HTTP
/// probe's status), `Ok(Err(why))` while not, `Err` when the context cannot probe.
async fn probe_once(
    context: &ToolContext,
    task_id: TaskId,
    probe: Probe,
) -> Result<Result<Option<u16>, String>, ContextError> {
    match context
        .execution()
        .probe(context.handle(), task_id, probe, PROBE_TIMEOUT)
        .await?
    {
        ProbeOutcome::Ready { status } => Ok(Ok(status)),
        ProbeOutcome::NotReady { reason } => Ok(Err(reason)),
        // An outcome this version does not know is not a ready server.
        other => Ok(Err(format!("{other:?}"))),
    }
}

/// Follows the log line by line until a line matches or the task ends.
async fn follow_pattern(
    context: &ToolContext,
    task_id: TaskId,
    regex: &Regex,
    from: PatternFrom,
    seen: &std::sync::Mutex<LastSeen>,
) -> Result<Waited, ContextError> {
    let mut follower = match from {
        PatternFrom::Start => LogFollower::from_start(task_id),
        PatternFrom::Now => {
            match LogFollower::from_now(context.execution().as_ref(), context.handle(), task_id)
                .await?
            {
                Some(follower) => follower,
                None => return Ok(Waited::Gone),
            }
        }
    };
    loop {
        let Some(step) = follower
            .step(context.execution().as_ref(), context.handle())
            .await?
        else {
            return Ok(Waited::Gone);
        };
        for (line_number, line) in step.lines {
            if let Some(ready) = match_line(regex, &line, line_number, false) {
                return Ok(ready);
            }
            lock(seen).line = Some(String::from_utf8_lossy(&line).into_owned());
        }
        // A prompt does not end its line: the line being written counts too (it is
        // matched again, whole, once it ends).
        if !step.finished
            && !follower.pending().is_empty()
            && let Some(ready) =
                match_line(regex, follower.pending(), follower.next_line_number(), true)
        {
            return Ok(ready);
        }
        if step.finished {
            return Ok(Waited::Ended);
        }
    }
}

/// The answer to a wait whose `regex` matches `line` (see [`match_log_line`]), if it
/// does.
fn match_line(
    regex: &Regex,
    line: &[u8],
    line_number: Option<u64>,
    unterminated: bool,
) -> Option<Waited> {
    let matched = match_log_line(regex, line)?;
    let text = matched.text;
    let groups = matched.groups;
    let shown_groups = if groups.is_empty() {
        String::new()
    } else {
        format!(
            " (groups: {})",
            groups
                .iter()
                .enumerate()
                // As JSON: a group that took no part reads `null`, text is quoted.
                .map(|(i, g)| format!("{}={}", i + 1, serde_json::json!(g)))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let at = line_number.map_or(String::new(), |n| format!("line {n} "));
    let unended = if unterminated {
        " (a line not ended yet: a prompt?)"
    } else {
        ""
    };
    Some(Waited::Ready {
        text: format!("{at}matched{unended}: {text}{shown_groups}"),
        matched: ReadyMatch {
            line: Some(text),
            line_number,
            groups: Some(groups),
            ..ReadyMatch::default()
        },
    })
}

/// Bytes read from the end of a log for its last lines.
const TAIL_BYTES: u64 = 8 * 1024;

/// The last `count` lines of a task's log (read from its last few KiB), for the answer to
/// a wait whose task ended first. Empty when the context cannot follow output.
pub(crate) async fn log_tail(context: &ToolContext, task_id: TaskId, count: usize) -> Vec<String> {
    let follow = |offset, max| {
        context
            .execution()
            .follow_output(context.handle(), task_id, offset, max)
    };
    let Ok(Some(end)) = follow(u64::MAX, 0).await else {
        return Vec::new();
    };
    let start = end.offset.saturating_sub(TAIL_BYTES);
    let Ok(Some(chunk)) = follow(start, usize::try_from(TAIL_BYTES).unwrap_or(usize::MAX)).await
    else {
        return Vec::new();
    };
    let mut lines = Lines::default().feed(&chunk.bytes, true);
    if start > 0 && !lines.is_empty() {
        // The first line was cut by the window.
        lines.remove(0);
    }
    let skip = lines.len().saturating_sub(count);
    lines
        .into_iter()
        .skip(skip)
        .map(|line| String::from_utf8_lossy(&line).into_owned())
        .collect()
}

#[cfg(test)]
#[path = "readiness_tests.rs"]
mod tests;
