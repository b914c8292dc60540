//! Reading Codex's sandbox state: the real capture of each mode, states that cannot be
//! read, what zidane cannot name, and properties over any state: never wider than Codex,
//! never a panic.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Value, json};
use zidane_context::{NetworkAccess, SandboxMode, SandboxPolicy};

use super::*;

/// What Codex 0.169 sent, verbatim, per mode (`tests/fixtures/codex_sandbox_meta.json`).
fn captured(mode: &str) -> JsonObject {
    let fixture: Value =
        serde_json::from_str(include_str!("../tests/fixtures/codex_sandbox_meta.json")).unwrap();
    fixture["calls"][mode].as_object().unwrap().clone()
}

fn parsed(mode: &str) -> SandboxPolicy {
    host_policy_in(&captured(mode)).unwrap()
}

#[test]
fn the_captured_calls_read_as_codexs_modes() {
    let settings = {
        let mut settings = insta::Settings::clone_current();
        settings.add_filter(r"/work/main/target/tmp/\.tmp[A-Za-z0-9]+", "[root]");
        settings
    };
    settings.bind(|| {
        insta::assert_json_snapshot!("codex_read_only", parsed("read-only"));
        insta::assert_json_snapshot!("codex_workspace_write", parsed("workspace-write"));
        insta::assert_json_snapshot!("codex_danger_full_access", parsed("danger-full-access"));
    });
    assert_eq!(parsed("default (codex exec)"), parsed("read-only"));
    let write = parsed("workspace-write");
    assert_eq!(write.mode, SandboxMode::WorkspaceWrite);
    assert_eq!(write.network, NetworkAccess::Off);
    assert!(write.workspace[0].ends_with("work"), "{write:?}");
    assert!(
        write
            .read_only
            .iter()
            .any(|path| path.ends_with("work/.git"))
    );
    assert_eq!(parsed("danger-full-access"), SandboxPolicy::off());
}

#[test]
fn a_call_without_the_state_has_no_host_policy() {
    let mut meta = captured("read-only");
    meta.remove(SANDBOX_META);
    assert_eq!(host_policy_in(&meta), None);
}

#[test]
fn an_unreadable_state_runs_read_only_without_network() {
    let unreadable = [
        json!("read-only"),
        json!({}),
        json!({ "permissionProfile": { "type": "sandboxed" } }),
        json!({ "permissionProfile": { "type": "managed", "network": "restricted" } }),
        json!({ "permissionProfile": { "type": "managed", "network": "sometimes",
            "file_system": { "type": "restricted", "entries": [] } } }),
        json!({ "permissionProfile": { "type": "managed", "network": "enabled",
            "file_system": { "type": "restricted", "entries": [
                { "path": { "type": "path", "path": "relative/dir" }, "access": "write" } ] } } }),
        json!({ "permissionProfile": { "type": "managed", "network": "enabled",
            "file_system": { "type": "restricted", "entries": [
                { "path": { "type": "path", "path": "/w/../etc" }, "access": "write" } ] } } }),
        json!({ "permissionProfile": { "type": "managed", "network": "enabled",
            "file_system": { "type": "restricted", "entries": [
                { "path": { "type": "path", "path": "/w" }, "access": "admin" } ] } } }),
        json!({ "permissionProfile": { "type": "managed", "network": "enabled",
            "file_system": { "type": "restricted", "entries": [] } }, "sandboxCwd": "http://x/w" }),
    ];
    for state in unreadable {
        let meta: JsonObject = [(SANDBOX_META.to_owned(), state.clone())]
            .into_iter()
            .collect();
        assert!(host_policy(&state).is_err(), "{state}");
        assert_eq!(host_policy_in(&meta), Some(fallback()), "{state}");
    }
}

#[test]
fn what_zidane_cannot_name_is_not_written() {
    let state = json!({
        "sandboxCwd": "file:///w%20s",
        "permissionProfile": { "type": "managed", "network": "enabled",
            "file_system": { "type": "restricted", "entries": [
                { "path": { "type": "special", "value": { "kind": "project_roots",
                    "subpath": "src" } }, "access": "write" },
                { "path": { "type": "glob_pattern", "pattern": "/data/**" }, "access": "write" },
                { "path": { "type": "special", "value": { "kind": "future" } }, "access": "write" },
                { "path": { "type": "path", "path": "file:///w%20s/secret" }, "access": "none" },
            ] } },
    });
    let policy = host_policy(&state).unwrap();
    assert_eq!(policy.writable, vec![PathBuf::from("/w s/src")]);
    assert!(policy.workspace.is_empty());
    assert_eq!(policy.deny_read, vec![PathBuf::from("/w s/secret")]);
    assert_eq!(policy.network, NetworkAccess::On);
    let climbing = json!({ "sandboxCwd": "file:///w", "permissionProfile": { "type": "managed",
        "network": "enabled", "file_system": { "type": "restricted", "entries": [
            { "path": { "type": "special", "value": { "kind": "project_roots",
                "subpath": "../etc" } }, "access": "write" } ] } } });
    assert!(host_policy(&climbing).is_err());
}

/// Whether Codex lets a command write `probe` under `entries`: the most specific entry
/// covering it decides, a restrictive one winning a tie. Temp entries are left out (the
/// probes never lie in a temp directory).
fn codex_writes(entries: &[(PathBuf, &str)], probe: &Path) -> bool {
    let mut best: Option<(usize, &str)> = None;
    for (path, access) in entries {
        if !probe.starts_with(path) {
            continue;
        }
        let depth = path.components().count();
        best = match best {
            Some((held, _)) if held > depth => best,
            Some((held, kept)) if held == depth && kept != "write" => best,
            _ => Some((depth, access)),
        };
    }
    best.is_some_and(|(_, access)| access == "write")
}

/// Whether zidane lets a command write `probe` under `policy`: its sandbox plan, on a
/// machine without a home or temp directories (which the probes never lie in).
fn zidane_writes(policy: &SandboxPolicy, probe: &Path) -> bool {
    !policy.is_on() || zidane_process::SandboxPlan::new(policy, None, &[]).may_write(probe)
}

fn a_path() -> impl Strategy<Value = PathBuf> {
    prop::collection::vec(prop::sample::select(vec!["w", "x", ".git", "src"]), 0..4)
        .prop_map(|parts| Path::new("/").join(parts.join("/")))
}

fn an_entry() -> impl Strategy<Value = Value> {
    let path = prop_oneof![
        a_path().prop_map(|path| json!({ "type": "path", "path": path })),
        prop::sample::select(vec![
            "root",
            "slash_tmp",
            "tmpdir",
            "project_roots",
            "minimal"
        ])
        .prop_map(|kind| json!({ "type": "special", "value": { "kind": kind } })),
        Just(json!({ "type": "glob_pattern", "pattern": "/w/**" })),
    ];
    let access = prop::sample::select(vec!["read", "write", "none"]);
    (path, access).prop_map(|(path, access)| json!({ "path": path, "access": access }))
}

proptest! {
    /// Whatever Codex sends, a path zidane lets a command write is one Codex lets it
    /// write, a path Codex denies stays denied, and the network is on only where Codex
    /// says so.
    #[test]
    fn the_reading_is_never_wider_than_codex(
        entries in prop::collection::vec(an_entry(), 0..8),
        network in prop::sample::select(vec!["enabled", "restricted"]),
        cwd in a_path(),
        probes in prop::collection::vec(a_path(), 1..8),
    ) {
        let state = json!({
            "sandboxCwd": format!("file://{}", cwd.display()),
            "permissionProfile": { "type": "managed", "network": network,
                "file_system": { "type": "restricted", "entries": entries } },
        });
        let meta: JsonObject = [(SANDBOX_META.to_owned(), state)].into_iter().collect();
        let policy = host_policy_in(&meta).unwrap();
        prop_assert!(policy.mode != SandboxMode::Off);
        prop_assert!(policy.network == NetworkAccess::Off || network == "enabled");
        // Codex's entries as paths (the special ones resolved as Codex does).
        let named: Vec<(PathBuf, &str)> = entries
            .iter()
            .filter_map(|entry| {
                let access = entry["access"].as_str()?;
                let path = &entry["path"];
                let place = match (path["type"].as_str()?, path["value"]["kind"].as_str()) {
                    ("path", _) => PathBuf::from(path["path"].as_str()?),
                    ("special", Some("root")) => PathBuf::from("/"),
                    ("special", Some("project_roots")) => cwd.clone(),
                    _ => return None,
                };
                Some((place, access))
            })
            .collect();
        for probe in &probes {
            if zidane_writes(&policy, probe) {
                prop_assert!(codex_writes(&named, probe), "{probe:?} {policy:?} {named:?}");
            }
            let denied = named.iter().any(|(path, access)| *access == "none" && path == probe);
            if denied && policy != fallback() {
                prop_assert!(policy.deny_read.iter().any(|path| probe.starts_with(path)));
            }
        }
    }

    /// Any JSON at all: a readable state or the fallback, never a panic, and never
    /// unsandboxed unless Codex said `disabled`.
    #[test]
    fn any_state_reads_or_falls_back(state in any_json()) {
        let meta: JsonObject = [(SANDBOX_META.to_owned(), state.clone())].into_iter().collect();
        let policy = host_policy_in(&meta).unwrap();
        if !policy.is_on() {
            prop_assert_eq!(&state["permissionProfile"]["type"], "disabled");
        }
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            "managed",
            "disabled",
            "restricted",
            "enabled",
            "write",
            "read",
            "/w",
            "file:///w",
        ])
        .prop_map(|text| Value::String(text.to_owned())),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "permissionProfile",
                    "type",
                    "network",
                    "file_system",
                    "entries",
                    "path",
                    "access",
                    "value",
                    "kind",
                    "sandboxCwd",
                ])
                .prop_map(str::to_owned),
                inner,
                0..4,
            )
            .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}
