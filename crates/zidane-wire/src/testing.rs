//! `insta` settings for hosts that snapshot-test transcripts and notification blocks.
//!
//! What varies between machines and runs is replaced by a stable placeholder:
//!
//! | what | example | becomes |
//! |---|---|---|
//! | a task log path | `/home/u/.zidane/sessions/s1/tasks/bash_1.20260523-024147-123.log` | `[LOG bash_1]` |
//! | a temp dir | `/tmp/.tmpAbC123/work`, on Windows `C:\…\Temp\.tmpAbC123\work` | `[TMP]/work` |
//! | a generated session id | `s-20260523-024147-123-4242-0` | `[SESSION]` |
//! | a context timestamp, an RFC 3339 time | `20260523-024147-123`, `2026-05-23T02:41:47.5Z` | `[TS]` |
//! | a duration | `<duration-ms>4200</duration-ms>`, `(4.2s) — `, a banner's `4.2s`, `"duration_ms": 4200`, `after 514ms`, `started 1.5s ago` | `<duration-ms>[DURATION]</duration-ms>`, `([DURATION]) — `, `[DURATION]`, `"duration_ms": "[DURATION]"`, `after [DURATION]`, `started [DURATION] ago` |
//! | a pid | `(pid 4242)`, `"pid": 4242`, `pid=4242` | `(pid [PID])`, `"pid": [PID]`, `pid=[PID]` |
//!
//! Only the number is replaced; the words around it stay, as the right-hand column
//! shows.
//!
//! ```
//! use zidane_wire::testing;
//!
//! let _guard = testing::settings().bind_to_scope();
//! let text = "<duration-ms>4200</duration-ms>\n\
//!     <output-file>/home/u/tasks/bash_1.20260523-024147-123.log</output-file>\n\
//!     Started bash_2 (pid 4242). Killed bash_2: killed (SIGTERM) after 514ms.\n\
//!     session s-20260523-024147-123-4242-0";
//! insta::assert_snapshot!(text, @r"
//! <duration-ms>[DURATION]</duration-ms>
//! <output-file>[LOG bash_1]</output-file>
//! Started bash_2 (pid [PID]). Killed bash_2: killed (SIGTERM) after [DURATION].
//! session [SESSION]
//! ");
//! ```
//!
//! Pass [`filters`] to your own `insta::Settings` to combine them with other settings.

use std::path::Path;

/// A duration as [`format_duration`](crate::format_duration) writes it.
pub const DURATION_PATTERN: &str = r"(?:\d+ms|\d+\.\d+s|\d+m \d{2}s|\d+h \d{2}m)";

/// The filters, in the order they must be applied: `(regex, replacement)`.
///
/// Log paths are replaced before temp dirs (a log under a temp dir is `[LOG bash_1]`,
/// not `[TMP]/…`), and before timestamps.
pub fn filters() -> Vec<(String, String)> {
    let mut filters = vec![
        // A task log path: any directory part (`/` or, on Windows, `\` between
        // components), `bash_<n>`, an optional context timestamp, `.log`.
        (
            r#"(?:[^\s<>"'()\[\]]*[/\\])?(bash_\d+)(?:\.\d{8}-\d{6}-\d{3})?\.log\b"#.to_owned(),
            "[LOG $1]".to_owned(),
        ),
    ];
    for dir in temp_dirs() {
        // Windows spells it with a final `\`.
        let dir = regex_escape(dir.trim_end_matches(SEPARATORS));
        // A tempfile-made directory first, then the temp dir itself.
        filters.push((format!(r"{dir}[/\\]\.tmp[A-Za-z0-9]+"), "[TMP]".to_owned()));
        filters.push((format!(r"{dir}\b"), "[TMP]".to_owned()));
    }
    // Windows separates the components below the temp dir with `\`: each becomes `/`,
    // so a snapshot reads the same on every OS. A filter turns one per path.
    if cfg!(windows) {
        for _ in 0..TMP_DEPTH {
            filters.push((
                r#"(\[TMP\][^\s\\<>"'()\[\]]*)\\"#.to_owned(),
                "$1/".to_owned(),
            ));
        }
    }
    filters.extend(
        [
            // `Session::generate`'s ids: before the timestamp inside them.
            (r"\bs-\d{8}-\d{6}-\d{3}-\d+-\d+\b", "[SESSION]"),
            (r"\b\d{8}-\d{6}-\d{3}\b", "[TS]"),
            (
                r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
                "[TS]",
            ),
            (r"<(duration-ms|stalled-for-ms)>\d+</", "<$1>[DURATION]</"),
            (
                r#""(duration_ms|stalled_for_ms|running_ms)": ?\d+"#,
                r#""$1": "[DURATION]""#,
            ),
        ]
        .map(|(pattern, replacement)| (pattern.to_owned(), replacement.to_owned())),
    );
    filters.push((
        format!(r"\({DURATION_PATTERN}\) — "),
        "([DURATION]) — ".to_owned(),
    ));
    filters.push((
        format!(r"(⌁ bash_\d+ (?:exited|killed) \([^)]*\)) {DURATION_PATTERN}"),
        "$1 [DURATION]".to_owned(),
    ));
    // `Killed bash_1: killed (SIGTERM) after 514ms.`, `background:exit … after 1.5s`.
    filters.push((
        format!(r"\bafter {DURATION_PATTERN}"),
        "after [DURATION]".to_owned(),
    ));
    // `bash_1 is still running (started 1.5s ago)`.
    filters.push((
        format!(r"\bstarted {DURATION_PATTERN} ago"),
        "started [DURATION] ago".to_owned(),
    ));
    filters.push((r#"(\bpid\b"?:? ?=?)\d+"#.to_owned(), "$1[PID]".to_owned()));
    filters
}

/// The current `insta` settings plus [`filters`]. Bind them around your snapshots:
/// `let _guard = zidane_wire::testing::settings().bind_to_scope();`.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    for (pattern, replacement) in filters() {
        settings.add_filter(&pattern, replacement);
    }
    settings
}

/// The spellings of the temp dir: `std::env::temp_dir()`, and its canonical form when
/// that differs (macOS's `/var/…` is `/private/var/…`).
fn temp_dirs() -> Vec<String> {
    let dir = std::env::temp_dir();
    let mut dirs = Vec::new();
    if let Ok(canonical) = dir.canonicalize() {
        push_dir(&mut dirs, &canonical);
    }
    push_dir(&mut dirs, &dir);
    dirs
}

fn push_dir(dirs: &mut Vec<String>, dir: &Path) {
    let dir = dir.to_string_lossy().into_owned();
    // `/` alone would match every path.
    if dir.trim_end_matches(SEPARATORS).len() > 1 && !dirs.contains(&dir) {
        dirs.push(dir);
    }
}

/// The most components below the temp dir whose separators become `/` on Windows.
const TMP_DEPTH: usize = 8;

/// What separates a path's components: `/`, and on Windows `\` too.
const SEPARATORS: [char; 2] = ['/', '\\'];

/// `s` with regex metacharacters escaped.
fn regex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if r"\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
