//! What zidane keeps running and keeps on disk for this user: the supervisor of
//! detached tasks (asked, never started), the tasks of dead hosts still running (listed,
//! never ended), and the size of the sessions and detached tasks under the user dir
//! against the retention `zidane` applies as it starts.

use std::path::Path;
use std::time::Duration;

use zidane::agent::{DEFAULT_RETENTION_MAX_BYTES, RetentionPolicy};
use zidane::supervisor::{SupervisorClient, SupervisorError, SupervisorPaths};

use super::finding::{Finding, Status};
use super::here::Here;
use crate::clean::human_bytes;
use crate::env_config::SWEEP_ORPHANS_VAR;

/// How long the supervisor has to answer a ping before it is said not to.
const PING_WAIT: Duration = Duration::from_secs(2);

/// How many orphans a finding names; the rest are counted.
const ORPHANS_NAMED: usize = 5;

/// One day.
const DAY_SECS: u64 = 24 * 60 * 60;

/// Whether the supervisor of `user_dir`'s detached tasks runs, asked on its socket by a
/// client that never starts one (`zidane ps` would, to re-adopt kept tasks).
pub(crate) fn supervisor(here: &Here, user_dir: &Path) -> Finding {
    const CHECK: &str = "supervisor";
    if !zidane::supervisor::SUPPORTED {
        return Finding::new(
            CHECK,
            Status::Info,
            "supervisor: detached tasks are not available on this platform yet",
        );
    }
    let paths = SupervisorPaths::for_user_dir(user_dir);
    // Without a supervisor, what its state holds (as `zidane ps` judges whether to start
    // one); with one, what it answers for (a directory can be its monitor kept ready).
    let kept = entries(&paths.tasks_dir());
    let client = SupervisorClient::new(paths.clone());
    let asked = crate::detached::block_on(async {
        Ok(tokio::time::timeout(PING_WAIT, async {
            let (pid, _) = client.ping().await?;
            let tasks = client.list(None, None).await?;
            Ok::<_, SupervisorError>((pid, tasks.len()))
        })
        .await)
    });
    let log = here.show(&paths.log_file());
    match asked {
        Ok(Ok(Ok((pid, tasks)))) => Finding::ok(
            CHECK,
            format!("supervisor: running (pid {pid}), {}", tasks_kept(tasks)),
        ),
        Ok(Ok(Err(SupervisorError::Unreachable { .. }))) if kept == 0 => Finding::ok(
            CHECK,
            "supervisor: not running, no detached task kept (it starts with the first one)",
        ),
        Ok(Ok(Err(SupervisorError::Unreachable { .. }))) => Finding::new(
            CHECK,
            Status::Warning,
            format!("supervisor: not running, {}", tasks_kept(kept)),
        )
        .fix("zidane ps (starts it; it re-adopts the kept tasks)"),
        Ok(Ok(Err(error))) => Finding::new(
            CHECK,
            Status::Broken,
            format!(
                "supervisor: answers wrongly at {}: {error}",
                here.show(&paths.socket)
            ),
        )
        .fix(format!("read its log, {log}")),
        Ok(Err(_elapsed)) => Finding::new(
            CHECK,
            Status::Broken,
            format!(
                "supervisor: does not answer at {} within {}s",
                here.show(&paths.socket),
                PING_WAIT.as_secs()
            ),
        )
        .fix(format!("read its log, {log}")),
        Err(error) => Finding::new(CHECK, Status::Broken, format!("supervisor: {error}")),
    }
}

fn tasks_kept(kept: usize) -> String {
    match kept {
        1 => "1 detached task kept".to_owned(),
        n => format!("{n} detached tasks kept"),
    }
}

/// How many entries `dir` holds; 0 when it cannot be read.
fn entries(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.filter_map(Result::ok).count())
}

/// The processes of dead hosts of this user that still run: listed, never ended.
pub(crate) fn orphans() -> Finding {
    const CHECK: &str = "orphans";
    let Some(orphans) = zidane::process::find_orphans() else {
        return Finding::new(
            CHECK,
            Status::Info,
            "orphans: the process table cannot be read here, so none were looked for",
        );
    };
    if orphans.is_empty() {
        return Finding::ok(CHECK, "orphans: none (no task of a dead host still runs)");
    }
    let mut named: Vec<String> = orphans
        .iter()
        .take(ORPHANS_NAMED)
        .map(|orphan| {
            let task = orphan
                .task_id
                .map_or_else(String::new, |task| format!(" {task}"));
            format!(
                "pid {} `{}` (host {}{task})",
                orphan.pid,
                zidane::context::command_excerpt(&orphan.command_line),
                orphan.owner.pid
            )
        })
        .collect();
    if orphans.len() > ORPHANS_NAMED {
        named.push(format!("and {} more", orphans.len() - ORPHANS_NAMED));
    }
    let pids: Vec<String> = orphans
        .iter()
        .map(|orphan| orphan.pid.to_string())
        .collect();
    let start = if crate::env_config::sweep_orphans().unwrap_or(true) {
        "or start `zidane` or `zidane mcp`, which end them as they start".to_owned()
    } else {
        format!("{SWEEP_ORPHANS_VAR}=off keeps `zidane` from ending them as it starts")
    };
    Finding::new(
        CHECK,
        Status::Warning,
        format!(
            "orphans: {} of hosts that died still {}: {}",
            if orphans.len() == 1 {
                "1 process"
            } else {
                "processes"
            },
            if orphans.len() == 1 { "runs" } else { "run" },
            named.join(", ")
        ),
    )
    .fix(format!("kill {} ({start})", pids.join(" ")))
}

/// The bytes the sessions and detached tasks take under `user_dir`, against `policy`,
/// the retention `zidane` applies as it starts (`None`: turned off).
pub(crate) fn storage(here: &Here, user_dir: &Path, policy: Option<RetentionPolicy>) -> Finding {
    const CHECK: &str = "storage";
    let shown = here.show(user_dir);
    if !user_dir.exists() {
        return Finding::ok(CHECK, format!("storage: {shown}: nothing kept yet"));
    }
    // No rule fires: nothing would be removed, and the total is what is there.
    let measured = RetentionPolicy::new()
        .max_age(None)
        .max_bytes(None)
        .plan(user_dir);
    let sessions = match measured {
        Ok(report) => report.total_bytes,
        Err(error) => {
            return Finding::new(
                CHECK,
                Status::Warning,
                format!("storage: {shown}: the sessions cannot be measured: {error}"),
            );
        }
    };
    let session_count = entries(&user_dir.join(zidane::agent::SESSIONS_DIR));
    let detached = SupervisorPaths::for_user_dir(user_dir);
    let said = format!(
        "storage: {shown}: {} in {} {}, {} of detached tasks; retention at start: {}",
        human_bytes(sessions),
        session_count,
        if session_count == 1 {
            "session"
        } else {
            "sessions"
        },
        human_bytes(tree_bytes(&detached.state)),
        retention(policy.as_ref()),
    );
    let cap = match policy {
        Some(policy) => policy.max_bytes,
        None => Some(DEFAULT_RETENTION_MAX_BYTES),
    };
    match cap {
        Some(cap) if sessions > cap => Finding::new(
            CHECK,
            Status::Warning,
            format!("{said}; the sessions are over {}", human_bytes(cap)),
        )
        .fix(if policy.is_some() {
            "zidane clean (every ended session; --dry-run lists them first)".to_owned()
        } else {
            "zidane clean --older-than 30 (retention is off in the config file)".to_owned()
        }),
        _ => Finding::ok(CHECK, said),
    }
}

/// The retention as a person reads it: `30 days, 1.0 GiB`, or `off`.
fn retention(policy: Option<&RetentionPolicy>) -> String {
    let Some(policy) = policy else {
        return "off".to_owned();
    };
    let age = policy.max_age.map_or_else(
        || "no age limit".to_owned(),
        |age| match age.as_secs() / DAY_SECS {
            1 => "1 day".to_owned(),
            days => format!("{days} days"),
        },
    );
    let bytes = policy
        .max_bytes
        .map_or_else(|| "no size cap".to_owned(), human_bytes);
    format!("{age}, {bytes}")
}

/// The bytes of the files under `path`, links not followed; what cannot be read counts
/// nothing.
fn tree_bytes(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .map(|entry| tree_bytes(&entry.path()))
            .sum()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_retention_reads_as_people_write_it() {
        assert_eq!(retention(None), "off");
        assert_eq!(retention(Some(&RetentionPolicy::new())), "30 days, 1.0 GiB");
        let unlimited = RetentionPolicy::new().max_age(None).max_bytes(None);
        assert_eq!(retention(Some(&unlimited)), "no age limit, no size cap");
    }

    #[test]
    fn a_trees_bytes_are_its_files_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/one"), [0u8; 10]).unwrap();
        std::fs::write(dir.path().join("two"), [0u8; 5]).unwrap();
        assert_eq!(tree_bytes(dir.path()), 15);
        assert_eq!(tree_bytes(&dir.path().join("missing")), 0);
    }
}
