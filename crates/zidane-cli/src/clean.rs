//! What `zidane` leaves on disk, and how it goes: `zidane clean`, and the retention
//! `zidane` and `zidane mcp` run in the background as they start.
//!
//! Both remove *ended* sessions (their turns and task logs) through
//! [`RetentionPolicy`]; a session whose host still runs holds its lock and is never
//! removed. At start the policy is the config file's `[retention]` table
//! ([`RetentionFile`]) with [`RETENTION_DAYS_VAR`](env_config::RETENTION_DAYS_VAR) and
//! [`RETENTION_MAX_BYTES_VAR`](env_config::RETENTION_MAX_BYTES_VAR) over it; `zidane
//! clean` removes every ended session, or those older than `--older-than`.
//!
//! Each kind of thing zidane keeps on disk is one cleaner returning a [`Cleaned`]; `zidane
//! clean` prints them in turn and one total.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use zidane::agent::{
    DEFAULT_RETENTION_MAX_AGE, DEFAULT_RETENTION_MAX_BYTES, RetentionPolicy, RetentionReport,
};
use zidane::wire::Painter;

use crate::env_config::{self, RetentionFile};
use crate::error::CliError;
use crate::user_dir::user_dir;

/// One day.
const DAY_SECS: u64 = 24 * 60 * 60;

/// Flags of `zidane clean`.
#[derive(Debug, Args)]
pub(crate) struct CleanArgs {
    /// Remove only what has not changed for DAYS days or more (default: every ended
    /// session, whatever its age).
    #[arg(long, value_name = "DAYS")]
    older_than: Option<u64>,
    /// List what would be removed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
}

/// The retention `zidane` and `zidane mcp` run as they start: the config file's
/// `[retention]` table with the variables over it; `None` when the table turns it off.
/// A bad table or variable is an error naming it.
pub(crate) fn start_policy() -> Result<Option<RetentionPolicy>, CliError> {
    let file = env_config::config_file()?.retention;
    Ok(policy_of(
        &file,
        env_config::retention_days()?,
        env_config::retention_max_bytes()?,
    ))
}

/// `file` with the variables' `days` and `bytes` over it (0: no limit of that kind).
fn policy_of(
    file: &RetentionFile,
    days: Option<u64>,
    bytes: Option<u64>,
) -> Option<RetentionPolicy> {
    if !file.enabled {
        return None;
    }
    let max_age = match days.or(file.max_age_days) {
        None => Some(DEFAULT_RETENTION_MAX_AGE),
        Some(0) => None,
        Some(days) => Some(Duration::from_secs(days.saturating_mul(DAY_SECS))),
    };
    let max_bytes = match bytes.or(file.max_bytes) {
        None => Some(DEFAULT_RETENTION_MAX_BYTES),
        Some(0) => None,
        Some(bytes) => Some(bytes),
    };
    Some(RetentionPolicy::new().max_age(max_age).max_bytes(max_bytes))
}

/// Runs `policy` over the sessions under `user_dir` on the blocking pool, without
/// waiting for it; what it removed is logged (`tracing`, `info`; what it could not,
/// `warn`). Call inside the runtime, once the command's own session is held.
pub(crate) fn start_retention(policy: Option<RetentionPolicy>, user_dir: PathBuf) {
    let Some(policy) = policy else {
        return;
    };
    drop(tokio::task::spawn_blocking(move || {
        match policy.apply(&user_dir) {
            Ok(report) => log_report(&report),
            Err(error) => tracing::warn!(%error, "retention did not run"),
        }
    }));
}

fn log_report(report: &RetentionReport) {
    for removed in &report.removed {
        tracing::info!(
            session = %removed.id,
            bytes = removed.bytes,
            reason = ?removed.reason,
            "retention removed an ended session"
        );
    }
    for failure in &report.failed {
        tracing::warn!(dir = %failure.dir.display(), error = %failure.error, "retention could not remove a session");
    }
}

/// What one cleaner removed (or, with `--dry-run`, would remove).
struct Cleaned {
    /// What it removes, singular and plural: `session`, `sessions`.
    kind: (&'static str, &'static str),
    /// What it removed, oldest first.
    removed: Vec<Removed>,
    /// What it left because it is in use.
    in_use: Vec<String>,
    /// What it could not remove, and why.
    failed: Vec<String>,
}

/// One thing removed.
struct Removed {
    /// Its name, e.g. the session's id.
    name: String,
    /// Its last change, as printed.
    modified: String,
    /// Its size.
    bytes: u64,
}

/// `zidane clean`: removes ended sessions now (every one, or those older than
/// `--older-than`), printing one line each and a total; `--dry-run` only lists them.
/// Something that could not be removed is said on stderr and makes the status 1.
pub(crate) fn run(args: &CleanArgs) -> Result<ExitCode, CliError> {
    let user_dir = user_dir()?;
    // One cleaner per kind of thing kept on disk.
    let cleaned = [sessions(&user_dir, args)?, detached_tasks(args)?];
    let painter = Painter::for_stdout();
    let verb = if args.dry_run {
        "would remove"
    } else {
        "removed"
    };
    let mut out = std::io::stdout().lock();
    let mut counts = Vec::new();
    let mut bytes = 0u64;
    let mut failed = false;
    for cleaned in &cleaned {
        for removed in &cleaned.removed {
            writeln!(
                out,
                "{verb} {} {}  {}  {}",
                cleaned.kind.0,
                removed.name,
                removed.modified,
                human_bytes(removed.bytes)
            )?;
            bytes += removed.bytes;
        }
        for name in &cleaned.in_use {
            out.write_all(
                painter
                    .note(&format!("kept {} {name}: in use", cleaned.kind.0))
                    .as_bytes(),
            )?;
        }
        for failure in &cleaned.failed {
            writeln!(std::io::stderr(), "zidane: could not remove {failure}")?;
            failed = true;
        }
        if !cleaned.removed.is_empty() {
            let (one, many) = cleaned.kind;
            let n = cleaned.removed.len();
            counts.push(format!("{n} {}", if n == 1 { one } else { many }));
        }
    }
    let total = if counts.is_empty() {
        format!("nothing to remove under {}", user_dir.display())
    } else if args.dry_run {
        format!("would remove {}, {}", counts.join(", "), human_bytes(bytes))
    } else {
        format!(
            "removed {}, {} freed",
            counts.join(", "),
            human_bytes(bytes)
        )
    };
    out.write_all(painter.note(&total).as_bytes())?;
    out.flush()?;
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The ended sessions under `user_dir`: every one, or those older than `--older-than`.
fn sessions(user_dir: &Path, args: &CleanArgs) -> Result<Cleaned, CliError> {
    let age = Duration::from_secs(args.older_than.unwrap_or(0).saturating_mul(DAY_SECS));
    let policy = RetentionPolicy::new().max_age(Some(age)).max_bytes(None);
    let report = if args.dry_run {
        policy.plan(user_dir)
    } else {
        policy.apply(user_dir)
    }?;
    Ok(Cleaned {
        kind: ("session", "sessions"),
        removed: report
            .removed
            .into_iter()
            .map(|removed| Removed {
                modified: removed.modified.format("%Y-%m-%d %H:%M:%S").to_string(),
                name: removed.id,
                bytes: removed.bytes,
            })
            .collect(),
        in_use: report.kept_live,
        failed: report
            .failed
            .into_iter()
            .map(|failure| format!("{}: {}", failure.dir.display(), failure.error))
            .collect(),
    })
}

/// The ended detached tasks whose end was told (every one, or those that ended more
/// than `--older-than` ago), through their supervisor; running and untold ones stay.
fn detached_tasks(args: &CleanArgs) -> Result<Cleaned, CliError> {
    let older_than = args
        .older_than
        .map(|days| Duration::from_secs(days.saturating_mul(DAY_SECS)));
    let (listed, removed) = crate::detached::clean(older_than, args.dry_run)?;
    let size = |task: &zidane::supervisor::TaskView| {
        listed
            .iter()
            .find(|(id, _)| *id == task.record.id)
            .map_or(0, |(_, bytes)| *bytes)
    };
    Ok(Cleaned {
        kind: ("detached task", "detached tasks"),
        removed: removed
            .iter()
            .map(|task| Removed {
                name: task.record.id.to_string(),
                modified: task
                    .record
                    .started_at
                    .format("%Y-%m-%d %H:%M:%S")
                    .to_string(),
                bytes: size(task),
            })
            .collect(),
        in_use: Vec::new(),
        failed: Vec::new(),
    })
}

/// `bytes` in B, KiB, MiB or GiB, one decimal past bytes.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 3] = ["KiB", "MiB", "GiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Display only: the precision lost in the cast does not show in one decimal.
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for next in &UNITS[1..] {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = next;
    }
    format!("{value:.1} {unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_the_variables_make_the_policy() {
        let file = RetentionFile::default();
        assert_eq!(policy_of(&file, None, None), Some(RetentionPolicy::new()));
        let policy = policy_of(&file, Some(1), Some(0)).unwrap();
        assert_eq!(policy.max_age, Some(Duration::from_secs(DAY_SECS)));
        assert_eq!(policy.max_bytes, None);
        let file = RetentionFile {
            enabled: true,
            max_age_days: Some(0),
            max_bytes: Some(500),
        };
        let policy = policy_of(&file, None, None).unwrap();
        assert_eq!(policy.max_age, None);
        assert_eq!(policy.max_bytes, Some(500));
        // The variables win over the file.
        let policy = policy_of(&file, Some(2), Some(9)).unwrap();
        assert_eq!(policy.max_age, Some(Duration::from_secs(2 * DAY_SECS)));
        assert_eq!(policy.max_bytes, Some(9));
        let off = RetentionFile {
            enabled: false,
            ..file
        };
        assert_eq!(policy_of(&off, Some(1), None), None);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(5 << 20), "5.0 MiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(4096 << 30), "4096.0 GiB");
    }
}
