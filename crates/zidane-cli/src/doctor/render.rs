//! `zidane doctor`'s lines on a terminal: one per finding — a mark, what was found —
//! the fix indented below it, and a last line counting what is wrong. Colour only where
//! the [`Painter`] paints it (a terminal, `NO_COLOR` unset).

use std::fmt::Write as _;

use zidane::wire::{Painter, Tone};

use super::finding::{Report, Status};

/// Green, for the mark of what is fine.
const SGR_GREEN: &str = "\x1b[32m";

/// Ends a colour.
const SGR_RESET: &str = "\x1b[0m";

/// The mark a finding's line starts with.
fn mark(status: Status) -> &'static str {
    match status {
        Status::Ok => "✓",
        Status::Info => "·",
        Status::Warning => "!",
        Status::Broken => "✗",
    }
}

/// The report as lines for a person, each ending in `\n`.
pub(crate) fn human(report: &Report, painter: Painter) -> String {
    let mut out = String::new();
    for finding in &report.findings {
        let mark = mark(finding.status);
        let summary = printable(&finding.summary);
        let _ = match (painter.colour(), finding.status) {
            (false, _) => writeln!(out, "{mark} {summary}"),
            (true, Status::Ok) => writeln!(out, "{SGR_GREEN}{mark}{SGR_RESET} {summary}"),
            (true, Status::Info) => writeln!(out, "{}{mark} {summary}{SGR_RESET}", Tone::Dim.sgr()),
            (true, Status::Warning) => {
                writeln!(out, "{}{mark} {summary}{SGR_RESET}", Tone::Warn.sgr())
            }
            (true, Status::Broken) => {
                writeln!(out, "{}{mark} {summary}{SGR_RESET}", Tone::Error.sgr())
            }
        };
        if let Some(fix) = &finding.fix {
            let _ = writeln!(out, "    → {}", printable(fix));
        }
    }
    out.push_str(&painter.note(&tally(report)));
    out
}

/// The last line: what is broken and what is to be looked at, or that nothing is.
fn tally(report: &Report) -> String {
    let count = |status| {
        report
            .findings
            .iter()
            .filter(|finding| finding.status == status)
            .count()
    };
    let (broken, warnings) = (count(Status::Broken), count(Status::Warning));
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    match (broken, warnings) {
        (0, 0) => "nothing broken".to_owned(),
        (0, _) => format!(
            "nothing broken; {}",
            plural(warnings, "warning", "warnings")
        ),
        (_, 0) => plural(broken, "thing broken", "things broken"),
        _ => format!(
            "{}; {}",
            plural(broken, "thing broken", "things broken"),
            plural(warnings, "warning", "warnings")
        ),
    }
}

/// `text` with every control character shown as `U+FFFD`: what a config file holds
/// must not drive the terminal.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::finding::{Finding, Platform};

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            version: "0.0.0".to_owned(),
            platform: Platform::here(),
            findings,
        }
    }

    #[test]
    fn one_line_per_finding_its_fix_indented_below_and_a_tally() {
        let report = report(vec![
            Finding::ok("zidane", "zidane 0.0.0"),
            Finding::new("sandbox", Status::Broken, "sandbox: unavailable")
                .fix("sudo apt install bubblewrap"),
            Finding::new("host.x", Status::Warning, "X: \u{1b}[2Jtrust"),
        ]);
        assert_eq!(
            human(&report, Painter::plain()),
            "✓ zidane 0.0.0\n\
             ✗ sandbox: unavailable\n    → sudo apt install bubblewrap\n\
             ! X: \u{fffd}[2Jtrust\n\
             ·· 1 thing broken; 1 warning\n"
        );
        let coloured = human(&report, Painter::coloured());
        assert!(
            coloured.contains("\x1b[31m✗ sandbox: unavailable\x1b[0m\n"),
            "{coloured:?}"
        );
    }

    #[test]
    fn the_tally_says_nothing_broken_when_nothing_is() {
        assert_eq!(
            tally(&report(vec![Finding::ok("a", "a")])),
            "nothing broken"
        );
        let warned = report(vec![Finding::new("a", Status::Warning, "a")]);
        assert_eq!(tally(&warned), "nothing broken; 1 warning");
    }
}
