use std::os::unix::fs::PermissionsExt as _;

use super::*;

fn no_settings(_entry: &Map<String, Value>) -> Vec<Setting> {
    Vec::new()
}

fn trust(entry: &Map<String, Value>) -> Vec<Setting> {
    if entry.get("trust") == Some(&Value::Bool(true)) {
        return Vec::new();
    }
    vec![Setting {
        status: Status::Warning,
        problem: "not trusted".to_owned(),
        field: "trust",
        value: Value::Bool(true),
    }]
}

const RULES: Rules = Rules {
    check: "host.test",
    host: "Test",
    expansion: Expansion::Nothing,
    settings: no_settings,
};

fn place(format: Format) -> Place {
    Place {
        file: "~/.test/settings.json".to_owned(),
        format,
        key: vec!["mcpServers".to_owned(), "zidane".to_owned()],
        project: None,
    }
}

/// A home with `bin/zidane` (executable) in it, on `PATH`, and this binary as `exe`.
fn machine() -> (tempfile::TempDir, Here) {
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let zidane = bin.join("zidane");
    std::fs::write(&zidane, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&zidane, std::fs::Permissions::from_mode(0o755)).unwrap();
    let here = Here {
        home: Some(home.path().to_owned()),
        path: bin.into_os_string(),
        exe: Some(zidane),
        ..Here::default()
    };
    (home, here)
}

fn judged(rules: &Rules, here: &Here, format: Format, value: &Value) -> Vec<Finding> {
    judge(rules, here, &place(format), "zidane", value).unwrap()
}

#[test]
fn zidane_is_known_by_its_command_whatever_the_entrys_name() {
    let line = |value: Value| Line::of(value.as_object().unwrap()).unwrap();
    let at = |value: Value| line(value).zidane_args_at();
    assert_eq!(at(json!({"command": "zidane", "args": ["mcp"]})), Some(0));
    assert_eq!(at(json!({"command": "/opt/z/zidane"})), Some(0));
    assert_eq!(at(json!({"command": "C:\\z\\zidane.exe"})), Some(0));
    assert_eq!(at(json!({"command": ["zidane", "mcp"]})), Some(0));
    assert_eq!(
        at(json!({"command": "npx", "args": ["-y", "zidane-mcp", "mcp"]})),
        Some(2)
    );
    assert_eq!(
        at(json!({"command": "npx", "args": ["-y", "-p", "zidane-mcp@0.1.0", "zidane", "mcp"]})),
        Some(4)
    );
    assert_eq!(
        at(json!({"command": "npx", "args": ["-y", "other", "mcp"]})),
        None
    );
    assert_eq!(at(json!({"command": "zidane-old"})), None);
    assert_eq!(
        line(json!({"command": ["zidane", "mcp"]})),
        Line {
            shape: Shape::Joined,
            program: "zidane".to_owned(),
            args: vec!["mcp".to_owned()]
        }
    );
    let (_home, here) = machine();
    let other = judge(
        &RULES,
        &here,
        &place(Format::Json),
        "fetch",
        &json!({"command": "uvx"}),
    );
    assert_eq!(other, None);
}

#[test]
fn a_right_entry_is_ok_and_says_what_it_runs() {
    let (home, here) = machine();
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "zidane", "args": ["mcp"]}),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].status, Status::Ok);
    assert_eq!(
        findings[0].summary,
        "Test (~/.test/settings.json mcpServers.zidane): runs `zidane mcp` (~/bin/zidane)"
    );
    let absolute = home.path().join("bin/zidane").display().to_string();
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": absolute, "args": ["mcp", "--user-dir", "/tmp/z"]}),
    );
    assert_eq!(findings[0].status, Status::Ok, "{findings:?}");
}

#[test]
fn a_command_that_does_not_resolve_is_broken_with_the_path_that_does() {
    let (home, here) = machine();
    let zidane = home.path().join("bin/zidane").display().to_string();
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "/nowhere/zidane", "args": ["mcp"]}),
    );
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].status, Status::Broken);
    assert!(
        findings[0]
            .summary
            .ends_with("the command /nowhere/zidane does not exist")
    );
    // This zidane is the one on PATH: the bare name is the fix.
    assert_eq!(
        findings[0].fix.as_deref(),
        Some("in ~/.test/settings.json, set mcpServers.zidane.command to \"zidane\"")
    );
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "~/bin/zidane", "args": ["mcp"]}),
    );
    assert!(
        findings[0].summary.contains("starts with `~`"),
        "{findings:?}"
    );
    assert_eq!(
        findings[0].fix,
        Some(format!(
            "in ~/.test/settings.json, set mcpServers.zidane.command to \"{zidane}\""
        ))
    );
    // `$HOME` is left alone, unless the host expands it.
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "$HOME/bin/zidane", "args": ["mcp"]}),
    );
    assert_eq!(findings[0].status, Status::Broken);
    let dollar = Rules {
        expansion: Expansion::Dollar,
        ..RULES
    };
    let findings = judged(
        &dollar,
        &here,
        Format::Json,
        &json!({"command": "${NO_SUCH_VARIABLE_HERE}/zidane", "args": ["mcp"]}),
    );
    assert!(findings[0].summary.contains("holds a `$`"), "{findings:?}");
    let missing = Here {
        path: std::ffi::OsString::new(),
        ..here
    };
    let findings = judged(
        &RULES,
        &missing,
        Format::Json,
        &json!({"command": "zidane", "args": ["mcp"]}),
    );
    assert!(
        findings[0]
            .summary
            .ends_with("`zidane` is not on PATH, where Test looks for it")
    );
    assert_eq!(
        findings[0].fix,
        Some(format!(
            "in ~/.test/settings.json, set mcpServers.zidane.command to \"{zidane}\""
        ))
    );
}

#[test]
fn arguments_must_start_with_mcp_and_be_what_zidane_mcp_takes() {
    let (_home, here) = machine();
    let findings = judged(&RULES, &here, Format::Json, &json!({"command": "zidane"}));
    assert!(findings[0].summary.contains("no arguments"), "{findings:?}");
    assert_eq!(
        findings[0].fix.as_deref(),
        Some("in ~/.test/settings.json, set mcpServers.zidane.args to [\"mcp\"]")
    );
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "zidane", "args": ["--user-dir", "/tmp/z"]}),
    );
    assert_eq!(
        findings[0].fix.as_deref(),
        Some(
            "in ~/.test/settings.json, set mcpServers.zidane.args to \
             [\"mcp\", \"--user-dir\", \"/tmp/z\"]"
        )
    );
    let findings = judged(
        &RULES,
        &here,
        Format::Toml,
        &json!({"command": "zidane", "args": ["mcp", "--bogus", "--sandbox", "off"]}),
    );
    assert!(
        findings[0].summary.contains("refuses its arguments"),
        "{findings:?}"
    );
    assert_eq!(
        findings[0].fix.as_deref(),
        Some(
            "in ~/.test/settings.json, set args = [\"mcp\", \"--sandbox\", \"off\"] \
             under [mcpServers.zidane]"
        )
    );
    // opencode's one list.
    let findings = judged(
        &RULES,
        &here,
        Format::Jsonc,
        &json!({"command": ["zidane", "serve"]}),
    );
    assert_eq!(
        findings[0].fix.as_deref(),
        Some("in ~/.test/settings.json, set mcpServers.zidane.command to [\"zidane\", \"mcp\"]")
    );
}

#[test]
fn a_setting_the_host_needs_is_named_with_the_key_to_set() {
    let (_home, here) = machine();
    let rules = Rules {
        settings: trust,
        ..RULES
    };
    let findings = judged(
        &rules,
        &here,
        Format::Json,
        &json!({"command": "zidane", "args": ["mcp"]}),
    );
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].status, Status::Warning);
    assert_eq!(
        findings[0].fix.as_deref(),
        Some("in ~/.test/settings.json, set mcpServers.zidane.trust to true")
    );
}

#[test]
fn keys_read_as_paths_and_an_http_entry_is_not_dialled() {
    let place = Place {
        file: "~/.claude.json".to_owned(),
        format: Format::Json,
        key: vec![
            "projects".to_owned(),
            "/home/ada/app".to_owned(),
            "mcpServers".to_owned(),
            "zidane".to_owned(),
        ],
        project: None,
    };
    assert_eq!(
        place.shown(),
        "~/.claude.json projects[\"/home/ada/app\"].mcpServers.zidane"
    );
    let (_home, here) = machine();
    let findings = judge(
        &RULES,
        &here,
        &place,
        "zidane",
        &json!({"type": "http", "url": "http://127.0.0.1:8931/mcp"}),
    )
    .unwrap();
    assert_eq!(findings[0].status, Status::Ok);
    assert!(
        findings[0]
            .summary
            .contains("over HTTP at http://127.0.0.1:8931/mcp")
    );
}

#[test]
fn an_npx_entry_without_npx_is_pointed_at_zidane_itself() {
    let (_home, here) = machine();
    let findings = judged(
        &RULES,
        &here,
        Format::Json,
        &json!({"command": "npx", "args": ["-y", "zidane-mcp", "mcp", "--sandbox", "off"]}),
    );
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert!(
        findings[0]
            .summary
            .ends_with("`npx` is not on PATH (Node.js brings it)")
    );
    assert_eq!(
        findings[0].fix.as_deref(),
        Some(
            "in ~/.test/settings.json, set mcpServers.zidane.command to \"zidane\", and args \
             to [\"mcp\", \"--sandbox\", \"off\"]"
        )
    );
}

#[test]
fn a_fixs_value_reads_on_one_line() {
    assert_eq!(
        inline(&json!(["mcp", "--user-dir", "/a b"])),
        "[\"mcp\", \"--user-dir\", \"/a b\"]"
    );
    assert_eq!(
        inline(&json!({"trust": true, "n": [1, 2]})),
        "{\"n\": [1, 2], \"trust\": true}"
    );
    assert_eq!(inline(&json!("approve")), "\"approve\"");
}
