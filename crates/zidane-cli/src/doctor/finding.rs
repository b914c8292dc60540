//! What `zidane doctor` reports, as `--json` prints it: the [`Report`] of this machine, a
//! list of [`Finding`]s, each with a [`Status`] and, where something is to be done, the
//! one line that does it. The checked-in JSON Schema (`docs/doctor.schema.json`) is
//! derived from these types, and a test holds the file to them.

use serde::Serialize;

/// How a finding stands, from fine to broken; the order is how bad it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    /// Set up right.
    Ok,
    /// Nothing wrong; something to know (a host without zidane, the line that adds it).
    Info,
    /// zidane works, but not as well as it could (a setting a host needs, leftovers).
    Warning,
    /// Something does not work, or zidane refuses to: `zidane doctor` exits 1.
    Broken,
}

/// One thing checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Finding {
    /// What was checked, a stable name: `zidane`, `process-path`, `config-file`,
    /// `sandbox`, `supervisor`, `host.<host>` (`host.claude-code`, `host.codex`,
    /// `host.gemini-cli`, `host.qwen-code`, `host.opencode`, `host.copilot-cli`,
    /// `host.vscode`, `host.cursor`, `host.claude-desktop`), `hosts`, `orphans` or
    /// `storage`.
    pub(crate) check: String,
    /// How it stands.
    pub(crate) status: Status,
    /// What was found, one line, naming its subject first.
    pub(crate) summary: String,
    /// The one line that fixes it (or, for `info`, that adds what is missing): a
    /// command to run or a setting to change. Absent when there is nothing to do.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, schemars(with = "String", default))]
    pub(crate) fix: Option<String>,
}

impl Finding {
    /// A finding of `check` with `status`, saying `summary`, with nothing to do.
    pub(crate) fn new(
        check: impl Into<String>,
        status: Status,
        summary: impl Into<String>,
    ) -> Self {
        Self {
            check: check.into(),
            status,
            summary: summary.into(),
            fix: None,
        }
    }

    /// An `ok` finding.
    pub(crate) fn ok(check: impl Into<String>, summary: impl Into<String>) -> Self {
        Self::new(check, Status::Ok, summary)
    }

    /// The same finding with `fix`, the one line that fixes it.
    #[must_use]
    pub(crate) fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}

/// The machine this `zidane` runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Platform {
    /// The operating system, as Rust names it: `linux`, `macos`, `windows`.
    pub(crate) os: String,
    /// The processor: `x86_64`, `aarch64`.
    pub(crate) arch: String,
}

impl Platform {
    /// The platform this binary was built for, which is the one it runs on.
    pub(crate) fn here() -> Self {
        Self {
            os: std::env::consts::OS.to_owned(),
            arch: std::env::consts::ARCH.to_owned(),
        }
    }
}

/// Everything `zidane doctor` found: what `--json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub(crate) struct Report {
    /// This zidane's version.
    pub(crate) version: String,
    /// The machine it runs on.
    pub(crate) platform: Platform,
    /// What was checked, in the order printed.
    pub(crate) findings: Vec<Finding>,
}

impl Report {
    /// Whether a finding is broken: then `zidane doctor` exits 1.
    pub(crate) fn broken(&self) -> bool {
        self.findings
            .iter()
            .any(|finding| finding.status == Status::Broken)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Where the schema of `--json` is checked in.
    const SCHEMA_FILE: &str = "../../docs/doctor.schema.json";

    /// The checked-in schema is the one derived from these types, and standard JSON
    /// Schema; `UPDATE_DOCTOR_SCHEMA=1` rewrites the file from them.
    #[test]
    fn the_checked_in_schema_is_the_one_of_the_types() {
        let schema = serde_json::to_value(schemars::schema_for!(Report)).unwrap();
        zidane_test_support::assert_standard_schema("zidane doctor --json", &schema);
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(SCHEMA_FILE);
        let derived = format!("{}\n", serde_json::to_string_pretty(&schema).unwrap());
        if std::env::var_os("UPDATE_DOCTOR_SCHEMA").is_some() {
            std::fs::write(&path, &derived).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == derived,
            "{} is not the schema of zidane doctor's report; UPDATE_DOCTOR_SCHEMA=1 rewrites it",
            path.display()
        );
    }

    #[test]
    fn a_report_is_broken_when_one_finding_is() {
        let mut report = Report {
            version: "0.0.0".to_owned(),
            platform: Platform::here(),
            findings: vec![Finding::new("a", Status::Warning, "a")],
        };
        assert!(!report.broken());
        report
            .findings
            .push(Finding::new("b", Status::Broken, "b").fix("do"));
        assert!(report.broken());
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["findings"][0].get("fix"), None);
        assert_eq!(json["findings"][1]["status"], "broken");
        assert_eq!(json["findings"][1]["fix"], "do");
    }
}
