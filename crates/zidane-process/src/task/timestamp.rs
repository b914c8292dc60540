//! The context timestamp and the log file name built from it.
//!
//! Every task log is `<task-id>.<context-timestamp>.log`. The timestamp is taken once
//! per context, so one run's logs share a prefix and sort chronologically, and two
//! contexts on the same directory never resolve to the same file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, NaiveDateTime, Utc};
use zidane_context::TaskId;

/// `strftime` pattern of the context timestamp: `YYYYMMDD-HHMMSS-mmm`.
const TIMESTAMP_FORMAT: &str = "%Y%m%d-%H%M%S-%3f";

/// Length of a context timestamp: `YYYYMMDD-HHMMSS-mmm`.
const TIMESTAMP_LEN: usize = 19;

/// Formats `t` as a context timestamp, `YYYYMMDD-HHMMSS-mmm` (UTC, milliseconds).
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use zidane_process::format_context_timestamp;
///
/// let t = Utc.with_ymd_and_hms(2026, 5, 23, 2, 41, 47).unwrap()
///     + chrono::Duration::milliseconds(123);
/// assert_eq!(format_context_timestamp(t), "20260523-024147-123");
/// ```
pub fn format_context_timestamp(t: DateTime<Utc>) -> String {
    t.format(TIMESTAMP_FORMAT).to_string()
}

/// Splits a task log's file name, `<task-id>.<context-timestamp>.log`, into its task id
/// and timestamp. `None` for anything else (a bad id, a malformed or impossible
/// timestamp, a path, a missing `.log`).
///
/// A log whose name was taken by a file we did not make gets the next free name with a
/// suffix, `<task-id>.<context-timestamp>.<n>.log` (`n` from 1, no leading zero); that
/// parses too.
///
/// ```
/// use zidane_process::parse_task_log_filename;
///
/// let (id, ts) = parse_task_log_filename("bash_12.20260523-024147-123.log").unwrap();
/// assert_eq!(id.to_string(), "bash_12");
/// assert_eq!(ts, "20260523-024147-123");
/// let (id, _) = parse_task_log_filename("bash_12.20260523-024147-123.1.log").unwrap();
/// assert_eq!(id.to_string(), "bash_12");
/// assert!(parse_task_log_filename("../bash_1.20260523-024147-123.log").is_none());
/// assert!(parse_task_log_filename("bash_1.20260523-024147-123.01.log").is_none());
/// ```
pub fn parse_task_log_filename(name: &str) -> Option<(TaskId, String)> {
    let stem = name.strip_suffix(".log")?;
    let (id, rest) = stem.split_once('.')?;
    let timestamp = match rest.split_once('.') {
        Some((timestamp, suffix)) => {
            parse_suffix(suffix)?;
            timestamp
        }
        None => rest,
    };
    let id = TaskId::parse(id).ok()?;
    is_context_timestamp(timestamp).then(|| (id, timestamp.to_owned()))
}

/// A name suffix as [`task_log_path`] writes it: a decimal number from 1, no sign, no
/// leading zero.
fn parse_suffix(suffix: &str) -> Option<u32> {
    suffix
        .parse::<u32>()
        .ok()
        .filter(|n| *n > 0 && n.to_string() == suffix)
}

/// The file name of a task's log: `<task-id>.<context-timestamp>.log`.
///
/// The inverse of [`parse_task_log_filename`]. Hosts never need to build it (the path
/// comes back from `exec_background`); it is public for tools that list a task
/// directory.
pub(crate) fn task_log_filename(task_id: TaskId, context_timestamp: &str) -> String {
    format!("{task_id}.{context_timestamp}.log")
}

/// The path of a task's log. The one place a log path is built: attempt 0 is
/// [`task_log_filename`]; a later attempt, made when that name is taken, adds `.<n>`
/// before `.log`.
pub(crate) fn task_log_path(
    output_dir: &Path,
    task_id: TaskId,
    context_timestamp: &str,
    attempt: u32,
) -> PathBuf {
    if attempt == 0 {
        output_dir.join(task_log_filename(task_id, context_timestamp))
    } else {
        output_dir.join(format!("{task_id}.{context_timestamp}.{attempt}.log"))
    }
}

/// A fresh context timestamp, distinct from every other one this process has issued.
///
/// Two contexts created in the same millisecond would otherwise name their first logs
/// identically; the second would then fail to create them (logs are never opened over
/// an existing file). Bumping by a millisecond keeps the format and the ordering.
pub(crate) fn next_context_timestamp() -> String {
    static LAST_MS: AtomicI64 = AtomicI64::new(i64::MIN);
    let now = Utc::now().timestamp_millis();
    let previous = LAST_MS
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |last| {
            Some(now.max(last.saturating_add(1)))
        })
        .unwrap_or(i64::MIN);
    let ms = now.max(previous.saturating_add(1));
    let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_else(Utc::now);
    format_context_timestamp(t)
}

/// Whether `s` is exactly `YYYYMMDD-HHMMSS-mmm` and names a real UTC instant.
fn is_context_timestamp(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.len() != TIMESTAMP_LEN {
        return false;
    }
    let shape_ok = bytes.iter().enumerate().all(|(i, b)| match i {
        8 | 15 => *b == b'-',
        _ => b.is_ascii_digit(),
    });
    shape_ok && NaiveDateTime::parse_from_str(&s[..15], "%Y%m%d-%H%M%S").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use proptest::prelude::*;

    #[test]
    fn formats_utc_with_milliseconds() {
        let t =
            Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap() + chrono::Duration::milliseconds(7);
        assert_eq!(format_context_timestamp(t), "20260102-030405-007");
    }

    #[test]
    fn issued_timestamps_are_distinct_and_ordered() {
        let stamps: Vec<String> = (0..50).map(|_| next_context_timestamp()).collect();
        for pair in stamps.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
        }
    }

    #[test]
    fn refuses_malformed_names() {
        for bad in [
            "",
            ".log",
            "bash_1.log",
            "bash_1.20260523-024147-123",
            "bash_1.20260523-024147-123.txt",
            "bash_01.20260523-024147-123.log",
            "bash_1.20260523-024147-1234.log",
            "bash_1.20260523-024147-12.log",
            "bash_1.20260523_024147-123.log",
            "bash_1.20261323-024147-123.log",
            "bash_1.20260230-024147-123.log",
            "bash_1.20260523-024167-123.log",
            "bash_1.20260523-024147-123.log.log",
            "bash_1.x.20260523-024147-123.log",
            "bash_1.20260523-024147-123.0.log",
            "bash_1.20260523-024147-123.01.log",
            "bash_1.20260523-024147-123.+1.log",
            "bash_1.20260523-024147-123..log",
            "bash_1.20260523-024147-123.1.2.log",
            "dir/bash_1.20260523-024147-123.log",
            "bash_1.2026O523-024147-123.log",
        ] {
            assert!(parse_task_log_filename(bad).is_none(), "accepted {bad:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn filename_round_trips(n in any::<u64>(), ms in 0i64..253_402_300_799_999) {
            let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap();
            let ts = format_context_timestamp(t);
            prop_assert_eq!(ts.len(), TIMESTAMP_LEN);
            let name = task_log_filename(TaskId::from_number(n), &ts);
            let (id, parsed) = parse_task_log_filename(&name).unwrap();
            prop_assert_eq!(id.number(), n);
            prop_assert_eq!(parsed, ts);
        }

        #[test]
        fn any_string_parses_only_when_canonical(s in "\\PC{0,40}") {
            if let Some((id, ts)) = parse_task_log_filename(&s) {
                let canonical = task_log_filename(id, &ts) == s
                    || s.strip_prefix(&format!("{id}.{ts}."))
                        .and_then(|rest| rest.strip_suffix(".log"))
                        .and_then(parse_suffix)
                        .is_some_and(|n| {
                            task_log_path(Path::new(""), id, &ts, n).to_str() == Some(s.as_str())
                        });
                prop_assert!(canonical, "{s:?}");
            }
        }

        #[test]
        fn suffixed_names_round_trip(n in any::<u64>(), ms in 0i64..253_402_300_799_999, attempt in 1u32..1000) {
            let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap();
            let ts = format_context_timestamp(t);
            let path = task_log_path(Path::new(""), TaskId::from_number(n), &ts, attempt);
            let name = path.to_str().unwrap();
            prop_assert_eq!(parse_task_log_filename(name), Some((TaskId::from_number(n), ts)));
        }

        #[test]
        fn near_misses_are_refused(
            n in any::<u64>(),
            ms in 0i64..253_402_300_799_999,
            junk in "[a-z./_ -]{1,4}",
        ) {
            let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap();
            let name = task_log_filename(TaskId::from_number(n), &format_context_timestamp(t));
            let prefixed = format!("{junk}{name}");
            let suffixed = format!("{name}{junk}");
            prop_assert!(parse_task_log_filename(&prefixed).is_none());
            prop_assert!(parse_task_log_filename(&suffixed).is_none());
        }
    }
}
