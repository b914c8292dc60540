//! A fixed view for the tests: five tasks of three sessions and a host, at a fixed time,
//! with CPU histories and the selected task's log.

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, TimeZone as _, Utc};
use zidane::process::TreeUsage;

use super::state::{LogLines, Task, Top};
use crate::listing::Row;

/// The time of the fixed view's last reading.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 19, 40, 0).unwrap()
}

/// A row of `kind` in `state`, started `ago` seconds before [`now`]; running rows use
/// `cpu_secs` of CPU and `rss_mib` of memory.
pub fn row(id: &str, kind: &'static str, state: &str, command: &str, cwd: &str, ago: i64) -> Row {
    let running = state == "running";
    Row {
        id: id.to_owned(),
        kind,
        state: state.to_owned(),
        exit_code: state
            .strip_prefix("exited ")
            .and_then(|code| code.parse().ok()),
        pid: Some(4000 + u32::try_from(ago).unwrap()),
        started_at: now() - chrono::Duration::seconds(ago),
        usage: running.then(|| TreeUsage {
            cpu: Duration::from_millis(u64::try_from(ago).unwrap() * 37),
            rss_bytes: u64::try_from(ago).unwrap() * 311 * 1024,
            processes: 2,
        }),
        host: if kind == "session" {
            "zidane".to_owned()
        } else {
            "zidane mcp".to_owned()
        },
        session: "20261201-193000-ab12".to_owned(),
        cwd: PathBuf::from(cwd),
        workspace: (kind == "detached").then(|| PathBuf::from(cwd)),
        command: command.to_owned(),
        output_path: Some(PathBuf::from(format!("/u/tasks/{id}.log"))),
        told: (kind == "detached").then_some(false),
        tty: false,
    }
}

/// The fixed view: a dev server (selected, its log read), a deploy in a terminal, a
/// host's build busy on CPU, a test run that failed and a task a person killed.
pub fn top() -> Top {
    let mut top = Top::new(PathBuf::from("/u/work/api"), false, now());
    let mut deploy = row(
        "bash_d2",
        "detached",
        "running",
        "python3 deploy.py --region eu",
        "/u/work/api",
        42,
    );
    deploy.tty = true;
    let idle = [Some(0); 12];
    let busy = [
        20, 65, 90, 100, 100, 97, 100, 100, 88, 100, 100, 100, 95, 100, 100, 100, 99,
    ];
    top.tasks = vec![
        Task::with_history(
            row(
                "bash_d1",
                "detached",
                "running",
                "npm run dev",
                "/u/work/web",
                312,
            ),
            [
                None,
                None,
                Some(2),
                Some(0),
                Some(1),
                Some(0),
                Some(30),
                Some(4),
                Some(0),
            ],
        ),
        Task::with_history(deploy, idle),
        Task::with_history(
            row(
                "41523:bash_3",
                "session",
                "running",
                "cargo build --release --workspace --all-targets",
                "/u/work/api",
                135,
            ),
            busy.map(Some),
        ),
        Task::with_history(
            row(
                "bash_d3",
                "detached",
                "exited 1",
                "pytest -x tests/",
                "/u/work/api",
                4000,
            ),
            [Some(50), Some(12), None, None],
        ),
        Task::with_history(
            row(
                "bash_d4",
                "detached",
                "killed",
                "sleep 300",
                "/u/work/web",
                90_000,
            ),
            [],
        ),
    ];
    top.settle_selection();
    top.log = LogLines {
        id: "bash_d1".to_owned(),
        lines: (1..=30)
            .map(|n| format!("[vite] page reload src/App.tsx (x{n})"))
            .chain(["  ➜  Local:   http://localhost:5173/".to_owned()])
            .collect(),
        missing: None,
    };
    top
}
