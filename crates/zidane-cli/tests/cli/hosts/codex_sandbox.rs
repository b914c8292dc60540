//! Codex's own sandbox, followed: Codex sends it with every call (zidane declares
//! `codex/sandbox-state-meta`), and the commands zidane starts for that call run no
//! wider. Judged on disk, with zidane's own sandbox off (`--sandbox off`) so that what
//! holds is Codex's: a write outside the workspace fails under `read-only` and
//! `workspace-write`, a write inside it works only under `workspace-write`; in the
//! foreground and in the background. Under `danger-full-access` Codex asks nothing.

use serde_json::json;
use zidane_test_support::Step;

use crate::hosts::host::{Host, Sandbox, describe};
use crate::hosts::scenarios::bash_1_done;

#[tokio::test(flavor = "multi_thread")]
async fn codex_read_only_lets_no_command_write_the_workspace() {
    let written = writes_under(Some("read-only")).await;
    assert_eq!(written, Some(Written::default()), "read-only");
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_workspace_write_lets_commands_write_the_workspace_only() {
    let written = writes_under(Some("workspace-write")).await;
    let inside = Written {
        foreground_inside: true,
        background_inside: true,
        ..Written::default()
    };
    assert_eq!(written, Some(inside), "workspace-write");
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_danger_full_access_asks_nothing_narrower() {
    let written = writes_under(Some("danger-full-access")).await;
    let everywhere = Written {
        foreground_inside: true,
        foreground_outside: true,
        background_inside: true,
        background_outside: true,
    };
    assert_eq!(written, Some(everywhere), "danger-full-access");
}

/// What the commands of one run wrote.
#[derive(Debug, Default, PartialEq, Eq)]
struct Written {
    foreground_inside: bool,
    foreground_outside: bool,
    background_inside: bool,
    background_outside: bool,
}

/// Runs Codex with its sandbox in `mode` (a sandbox outside the temp directories,
/// which every sandbox lets a command write): a background command that writes a file
/// in the workspace and one beside it, then the same in the foreground. `None` when the
/// hosts are not installed.
async fn writes_under(mode: Option<&'static str>) -> Option<Written> {
    let host = Host::Codex;
    let mut sandbox = Sandbox::outside_temp(host)?;
    if let Some(mode) = mode {
        sandbox = sandbox.codex_sandbox(mode);
    }
    let (work, outside) = (sandbox.root().join("work"), sandbox.root().join("outside"));
    std::fs::create_dir(&outside).unwrap();
    let writes = |tag: &str| {
        format!(
            "echo x > '{}'; echo x > '{}'; echo done",
            work.join(format!("{tag}_inside")).display(),
            outside.join(format!("{tag}_outside")).display(),
        )
    };
    let background = json!({ "command": writes("background"), "run_in_background": true });
    let steps = vec![
        Step::call(host.call("shell", background)),
        Step::call(host.call("shell", json!({ "command": writes("foreground") })))
            .gated(bash_1_done(&sandbox)),
        Step::text("Both ran."),
    ];
    let ran = sandbox.run(steps, &["--sandbox", "off"]).await;
    let requests = ran.main_requests();
    assert_eq!(requests.len(), 3, "{}", describe(&requests));
    Some(Written {
        foreground_inside: work.join("foreground_inside").exists(),
        foreground_outside: outside.join("foreground_outside").exists(),
        background_inside: work.join("background_inside").exists(),
        background_outside: outside.join("background_outside").exists(),
    })
}
