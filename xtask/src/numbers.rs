//! `cargo xtask numbers`: no measured number in the docs. Docs say what is true of the
//! code and how a thing is measured; what a run measured lives in the results file
//! `cargo xtask bench` writes (`crates/zidane-process/benches/RESULTS.md`), dated, with
//! its machine. The rule is narrow on purpose: a setting or a default (a 500 ms kill
//! grace, a 50 s cap) is a fact of the code and passes; what is flagged is a time beside
//! a percentile, a phrase that only a measurement can back ("within about 20 ms",
//! "took 12 ms", "in every round measured"), and a time in a table that reports
//! percentiles or stands under a heading about measuring.

use std::path::{Path, PathBuf};

/// One flagged line: where it is and why.
#[derive(Debug, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line number.
    pub line: usize,
    /// Which rule it broke.
    pub reason: &'static str,
}

/// The Markdown files the rule covers: `README.md`, `docs/*.md`, `crates/*/README.md`.
fn documents(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut files = vec![root.join("README.md")];
    let markdown_in = |dir: &Path, only: Option<&str>| -> Result<Vec<PathBuf>, String> {
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
        let mut found = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
                .path();
            match only {
                Some(name) => {
                    let readme = path.join(name);
                    if readme.is_file() {
                        found.push(readme);
                    }
                }
                None if path.extension().is_some_and(|ext| ext == "md") => found.push(path),
                None => {}
            }
        }
        Ok(found)
    };
    files.extend(markdown_in(&root.join("docs"), None)?);
    files.extend(markdown_in(&root.join("crates"), Some("README.md"))?);
    files.sort();
    Ok(files)
}

/// Checks every covered document; an error lists each flagged line.
pub fn check(root: &Path) -> Result<(), String> {
    let mut report = Vec::new();
    let files = documents(root)?;
    for file in &files {
        let text = std::fs::read_to_string(file)
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
        let shown = file
            .strip_prefix(root)
            .unwrap_or(file)
            .display()
            .to_string();
        let lines: Vec<&str> = text.lines().collect();
        for finding in findings(&text) {
            report.push(format!(
                "{shown}:{}: {}: {}",
                finding.line,
                finding.reason,
                lines
                    .get(finding.line - 1)
                    .copied()
                    .unwrap_or_default()
                    .trim()
            ));
        }
    }
    if report.is_empty() {
        println!(
            "xtask numbers: {} documents, no measured number",
            files.len()
        );
        Ok(())
    } else {
        Err(format!(
            "measured numbers in the docs (they belong in crates/zidane-process/benches/RESULTS.md, \
             written by `cargo xtask bench`; a doc says how it is measured and links there):\n{}",
            report.join("\n")
        ))
    }
}

/// The flagged lines of one Markdown document.
pub fn findings(text: &str) -> Vec<Finding> {
    let mut found = Vec::new();
    let mut heading = String::new();
    // Whether the table being read reports numbers: its header row names a percentile,
    // or it stands under a heading about measuring.
    let mut table: Option<bool> = None;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(title) = trimmed.strip_prefix('#') {
            heading = title.trim_start_matches('#').trim().to_lowercase();
        }
        let is_row = trimmed.starts_with('|');
        let mut reason = None;
        if is_row {
            match table {
                None => {
                    let reports = has_percentile(trimmed) || heading.contains("measur");
                    table = Some(reports);
                }
                Some(true) if trimmed.split('|').any(is_measured_value) => {
                    reason = Some("a time in a table of measurements");
                }
                Some(_) => {}
            }
        } else {
            table = None;
        }
        if reason.is_none() {
            reason = phrase(line);
        }
        if let Some(reason) = reason {
            found.push(Finding {
                line: index + 1,
                reason,
            });
        }
    }
    found
}

/// Whether a table cell is a value that was measured — a short cell opening with a
/// number and holding a time (`30 ms`, `1.44 s / 2.27 s`, `0 ticks (< 10 ms)`) — rather
/// than a description that mentions a time (`CPU over 10 s idle`).
fn is_measured_value(cell: &str) -> bool {
    let cell = cell.trim().trim_start_matches(['~', '≈', '<', '≤', ' ']);
    cell.chars().count() <= MEASURED_CELL_CHARS
        && cell.starts_with(|c: char| c.is_ascii_digit())
        && has_time(cell)
}

/// The longest table cell read as a measured value.
const MEASURED_CELL_CHARS: usize = 40;

/// The rules that hold on one line, whatever surrounds it.
fn phrase(line: &str) -> Option<&'static str> {
    let lower = line.to_lowercase();
    // A percentile's value stands close to it, in the same clause ("p50 was 9–21 ms",
    // "0.3 ms at the median"); a time further along the line, or past a comma or a
    // parenthesis, is some other fact ("polled every 5 ms), median of ten").
    let clause_break = |c: char| matches!(c, ',' | ';' | '(' | ')');
    let near = |(start, end): (usize, usize)| {
        let before = lower[..start]
            .char_indices()
            .rev()
            .take(PERCENTILE_WINDOW)
            .take_while(|(_, c)| !clause_break(*c))
            .last()
            .map_or(start, |(at, _)| at);
        let after = lower[end..]
            .char_indices()
            .take(PERCENTILE_WINDOW)
            .take_while(|(_, c)| !clause_break(*c))
            .last()
            .map_or(end, |(at, c)| end + at + c.len_utf8());
        has_time(&lower[before..start]) || has_time(&lower[end..after])
    };
    if percentile_spans(&lower).into_iter().any(near) {
        return Some("a time beside a percentile");
    }
    if lower.contains("every round measured") || lower.contains("every run measured") {
        return Some("a claim only a measurement backs");
    }
    for lead in ["within about ", "took ", "takes about ", "measured at "] {
        let mut rest = lower.as_str();
        while let Some(at) = rest.find(lead) {
            let after = &rest[at + lead.len()..];
            if time_at_start(after) {
                return Some("a measured duration");
            }
            rest = after;
        }
    }
    None
}

/// How many characters either side of a percentile its value is looked for.
const PERCENTILE_WINDOW: usize = 24;

/// Whether the text names a percentile or a median as a word of its own.
fn has_percentile(text: &str) -> bool {
    !percentile_spans(&text.to_lowercase()).is_empty()
}

/// Where each percentile or median named in the (lowercase) text starts and ends: `p50`,
/// `p99.9`, `median` as words of their own, not as part of a field name such as `p50_us`.
fn percentile_spans(lower: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let bytes = lower.as_bytes();
    let word_edge = |at: usize| {
        bytes
            .get(at)
            .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
    };
    for (at, _) in lower.match_indices('p') {
        if at > 0 && !word_edge(at - 1) {
            continue;
        }
        let digits = bytes[at + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .count();
        let end = at + 1 + digits;
        if digits >= 2 && bytes[at + 1].is_ascii_digit() && word_edge(end) {
            spans.push((at, end));
        }
    }
    for (at, word) in lower.match_indices("median") {
        let end = at + word.len();
        if (at == 0 || word_edge(at - 1)) && word_edge(end) {
            spans.push((at, end));
        }
    }
    spans
}

/// The units of time a number may carry.
const UNITS: &[&str] = &[
    "ns", "µs", "us", "ms", "s", "sec", "secs", "second", "seconds", "min", "minute", "minutes",
];

/// Whether a number with a unit of time stands anywhere in the text.
fn has_time(text: &str) -> bool {
    text.char_indices().any(|(at, c)| {
        c.is_ascii_digit()
            && text[..at]
                .chars()
                .next_back()
                .is_none_or(|before| !(before.is_alphanumeric() || before == '_' || before == '.'))
            && time_at_start(&text[at..])
    })
}

/// Whether the text opens with a number (a range like `9–21` included) and a unit of
/// time: `20 ms`, `0.99ms`, `9–21 ms`, `1,000 µs`.
fn time_at_start(text: &str) -> bool {
    let number_end = text
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '–' | '-')))
        .map_or(text.len(), |(at, _)| at);
    if number_end == 0 || !text.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let rest = text[number_end..]
        .strip_prefix([' ', '\u{a0}'])
        .unwrap_or(&text[number_end..]);
    UNITS.iter().any(|unit| {
        rest.strip_prefix(unit)
            .is_some_and(|after| after.chars().next().is_none_or(|c| !c.is_alphanumeric()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reasons(text: &str) -> Vec<(usize, &'static str)> {
        findings(text)
            .into_iter()
            .map(|f| (f.line, f.reason))
            .collect()
    }

    #[test]
    fn settings_and_defaults_pass() {
        let settings = "\
# Killing

A 500 ms kill grace (`MCP_DEFAULT_KILL_GRACE`), shorter than the context's own 5 s.
Probed with a backoff from 10 ms to 250 ms; waits are capped at 50 s.
`INPUT_SETTLE_QUIET` is 300 ms, at most 2 s. Each op reports `p50_us` and `p99_us`.
The driver's `lifeline` op times it; see RESULTS.md for the numbers.
Cursor, VS Code and goose stop at about 5 minutes.

| setting | default | why |
|---|---|---|
| connect timeout | 10 s | `HttpOptions::connect_timeout` |
| backoff | 0.5 s doubling, ≤ 30 s | `retry-after` wins |

| tool | answer |
|---|---|
| `shell_kill` | `Killed bash_1: killed (SIGTERM) after 1.2s.` |
";
        assert_eq!(reasons(settings), vec![]);
    }

    #[test]
    fn measurements_are_flagged() {
        let measured = "\
# Containment

- **Linux**: nothing, within about 20 ms (under 0.1 s in every round measured).
  each run's p50 was 9–21 ms (median 19 ms); the scan took 10–20 ms by itself.

## What it costs

| run | path | p50 | p99 |
|---|---|---|---|
| 1 | over stdio | 1.16 ms | 8.13 ms |

## Measurements

| what | how | debug |
|---|---|---|
| start to first frame | until the footer shows | 30 ms |
| CPU over 10 s idle | `utime + stime` before and after 10 s |
";
        assert_eq!(
            reasons(measured),
            vec![
                (3, "a claim only a measurement backs"),
                (4, "a time beside a percentile"),
                (10, "a time in a table of measurements"),
                (16, "a time in a table of measurements"),
            ]
        );
    }

    #[test]
    fn each_phrase_on_its_own() {
        assert_eq!(
            phrase("all gone within about 20 ms"),
            Some("a measured duration")
        );
        assert_eq!(phrase("the scan took 12ms"), Some("a measured duration"));
        assert_eq!(phrase("it took a while"), None);
        assert_eq!(phrase("p99 is 4.98 ms"), Some("a time beside a percentile"));
        assert_eq!(
            phrase("Median of the p50s: 19.0 ms"),
            Some("a time beside a percentile")
        );
        assert_eq!(phrase("`p50_us` in µs, 20 rounds"), None);
        assert_eq!(phrase("p50 of the `lifeline` op, beside a 50 s cap"), None);
        assert_eq!(phrase("polled every 5 ms), median of ten"), None);
        assert_eq!(phrase("p50 (of the rounds) beside a 2 s limit"), None);
        assert_eq!(
            phrase("the hop adds about 0.3 ms at the median"),
            Some("a time beside a percentile")
        );
    }

    #[test]
    fn times_are_numbers_with_a_unit() {
        for time in [
            "20 ms",
            "0.99ms",
            "9–21 ms",
            "1,000 µs",
            "5 s",
            "2 minutes",
            "(30 s)",
        ] {
            assert!(has_time(time), "{time}");
        }
        for not_time in [
            "20 mb",
            "bash_1",
            "10,000 turns",
            "v1.5",
            "x86_64 sys",
            "2s3",
        ] {
            assert!(!has_time(not_time), "{not_time}");
        }
    }

    #[test]
    fn the_repository_passes() {
        let root = crate::bench::workspace_root().unwrap();
        check(&root).unwrap();
    }
}
