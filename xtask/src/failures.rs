//! What failed in a test run, kept from its output to be said again at the end of a
//! step: a long run under Wine prints many test binaries after the one that failed, and
//! a CI log's tail shows only the last of them.

/// At most this many lines are kept, whatever failed.
const KEPT: usize = 120;

/// The failed tests' names and their captured output, from `cargo test`'s lines.
#[derive(Debug, Default)]
pub struct Failures {
    kept: Vec<String>,
    /// Inside a `---- name stdout ----` section.
    in_section: bool,
}

impl Failures {
    /// Takes one line of `cargo test`'s output.
    pub fn line(&mut self, line: &str) {
        let trimmed = line.trim_end();
        let starts_section = trimmed.starts_with("---- ") && trimmed.ends_with(" ----");
        if starts_section {
            self.in_section = true;
        } else if self.in_section && trimmed == "failures:" {
            self.in_section = false;
        }
        let failed_test = trimmed.starts_with("test ") && trimmed.ends_with("... FAILED");
        let timed_out = trimmed.contains("has been running for over");
        if (self.in_section || failed_test || timed_out) && self.kept.len() < KEPT {
            self.kept.push(trimmed.to_owned());
        }
    }

    /// What failed, as lines to print; `None` when nothing did.
    pub fn report(&self) -> Option<String> {
        (!self.kept.is_empty()).then(|| self.kept.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
running 3 tests
test a::passes ... ok
test b::fails ... FAILED
test c::passes ... ok

failures:

---- b::fails stdout ----

thread 'b::fails' panicked at src/b.rs:3:5:
the frame never came

failures:
    b::fails

test result: FAILED. 2 passed; 1 failed
     Running unittests src/lib.rs
running 1 test
test d::passes ... ok
";

    #[test]
    fn the_failed_test_and_its_panic_are_kept_and_nothing_else() {
        let mut failures = Failures::default();
        OUTPUT.lines().for_each(|line| failures.line(line));
        let report = failures.report().unwrap();
        assert!(report.contains("test b::fails ... FAILED"), "{report}");
        assert!(report.contains("the frame never came"), "{report}");
        assert!(
            !report.contains("a::passes") && !report.contains("d::passes"),
            "{report}"
        );
        assert!(!report.contains("test result"), "{report}");
    }

    #[test]
    fn a_run_where_all_passed_reports_nothing() {
        let mut failures = Failures::default();
        "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed"
            .lines()
            .for_each(|line| failures.line(line));
        assert!(failures.report().is_none());
    }

    #[test]
    fn a_flood_is_cut() {
        let mut failures = Failures::default();
        failures.line("---- x stdout ----");
        for n in 0..10_000 {
            failures.line(&format!("line {n}"));
        }
        assert_eq!(failures.report().unwrap().lines().count(), KEPT);
    }
}
