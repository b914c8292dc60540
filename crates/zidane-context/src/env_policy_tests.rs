//! The environment policy: its rules one by one, its serde shape, and properties over
//! any host environment and any policy.

use std::collections::BTreeMap;
use std::ffi::OsString;

use proptest::prelude::*;

use super::*;

fn host() -> Vec<(&'static str, &'static str)> {
    vec![
        ("PATH", "/usr/bin:/bin"),
        ("HOME", "/home/ada"),
        ("LC_ALL", "C.UTF-8"),
        ("EDITOR", "vi"),
        ("OPENAI_API_KEY", "sk-1"),
        ("AWS_SECRET_ACCESS_KEY", "aws-2"),
        ("GITHUB_TOKEN", "gh-3"),
        ("db_password", "pw-4"),
        ("ZIDANE_MCP_TOKEN", "mcp-5"),
        ("Monkey", "banana"),
    ]
}

fn value(child: &ChildEnv, name: &str) -> Option<String> {
    child
        .vars
        .get(&OsString::from(name))
        .map(|value| value.to_string_lossy().into_owned())
}

#[test]
fn the_default_keeps_everything_but_secrets() {
    let child = EnvPolicy::default().apply(host());
    assert_eq!(child.names(), ["EDITOR", "HOME", "LC_ALL", "PATH"]);
    assert_eq!(
        child.withheld,
        [
            (
                "AWS_SECRET_ACCESS_KEY",
                WithheldReason::DefaultExclude("*KEY*".into())
            ),
            (
                "GITHUB_TOKEN",
                WithheldReason::DefaultExclude("*TOKEN*".into())
            ),
            // Any case: `Monkey` holds "key".
            ("Monkey", WithheldReason::DefaultExclude("*KEY*".into())),
            (
                "OPENAI_API_KEY",
                WithheldReason::DefaultExclude("*KEY*".into())
            ),
            ("ZIDANE_MCP_TOKEN", WithheldReason::ZidaneSecret),
            (
                "db_password",
                WithheldReason::DefaultExclude("*PASSWORD*".into())
            ),
        ]
        .map(|(name, reason)| WithheldVar {
            name: name.to_owned(),
            reason
        })
    );
    assert_eq!(value(&child, "PATH").as_deref(), Some("/usr/bin:/bin"));
}

#[test]
fn core_keeps_the_documented_set() {
    let child = EnvPolicy::default().inherit(EnvInherit::Core).apply(host());
    assert_eq!(child.names(), ["HOME", "LC_ALL", "PATH"]);
    assert!(child.withheld.contains(&WithheldVar {
        name: "EDITOR".to_owned(),
        reason: WithheldReason::NotInherited(EnvInherit::Core),
    }));
    let every_core = CORE_ENV_VARS
        .iter()
        .map(|name| (name.replace('*', "CTYPE"), "x"));
    assert_eq!(
        EnvPolicy::default()
            .inherit(EnvInherit::Core)
            .apply(every_core)
            .vars
            .len(),
        CORE_ENV_VARS.len()
    );
}

#[test]
fn none_gives_only_what_is_set() {
    let child = EnvPolicy::default()
        .inherit(EnvInherit::None)
        .set("CI", "true")
        .apply(host());
    assert_eq!(child.names(), ["CI"]);
    assert_eq!(child.withheld.len(), host().len());
}

#[test]
fn exclude_and_include_only_are_case_insensitive_globs() {
    let child = EnvPolicy::default().exclude("edit?r").apply(host());
    assert!(value(&child, "EDITOR").is_none());
    assert!(child.withheld.contains(&WithheldVar {
        name: "EDITOR".to_owned(),
        reason: WithheldReason::Excluded("edit?r".into()),
    }));

    let child = EnvPolicy::default()
        .include_only("path")
        .include_only("lc_*")
        .apply(host());
    assert_eq!(child.names(), ["LC_ALL", "PATH"]);
    // Include-only does not bring back what an exclude withheld.
    let child = EnvPolicy::default().include_only("*TOKEN*").apply(host());
    assert!(child.vars.is_empty());
}

#[test]
fn set_wins_over_every_drop_but_zidane_own() {
    let child = EnvPolicy::default()
        .set("GITHUB_TOKEN", "given")
        .set("PATH", "/opt/bin")
        .set("zidane_mcp_token", "never")
        .set("ZIDANE_MCP_TOKEN", "never")
        .apply(host());
    assert_eq!(value(&child, "GITHUB_TOKEN").as_deref(), Some("given"));
    assert_eq!(value(&child, "PATH").as_deref(), Some("/opt/bin"));
    assert!(value(&child, "ZIDANE_MCP_TOKEN").is_none());
    assert!(value(&child, "zidane_mcp_token").is_none());
    assert!(!child.withheld_names().contains(&"GITHUB_TOKEN"));
    assert!(child.withheld_names().contains(&"ZIDANE_MCP_TOKEN"));
    assert!(
        EnvPolicy::default()
            .set("ZIDANE_MCP_TOKEN", "x")
            .validate()
            .is_err()
    );
}

#[test]
fn default_excludes_can_be_turned_off_but_not_zidane_own() {
    let child = EnvPolicy::default().default_excludes(false).apply(host());
    assert_eq!(value(&child, "GITHUB_TOKEN").as_deref(), Some("gh-3"));
    assert_eq!(child.withheld_names(), ["ZIDANE_MCP_TOKEN"]);
}

#[test]
fn a_set_entry_the_system_cannot_pass_is_refused() {
    for (name, value) in [("", "x"), ("A=B", "x"), ("A\0", "x"), ("A", "x\0")] {
        let policy = EnvPolicy::default().set(name, value);
        assert!(
            matches!(policy.validate(), Err(EnvPolicyError::InvalidSet { .. })),
            "{name:?}={value:?}"
        );
        let child = policy.apply(Vec::<(String, String)>::new());
        assert!(child.vars.is_empty(), "{name:?}={value:?}");
    }
    assert!(EnvPolicy::default().set("A", "b=c").validate().is_ok());
}

#[test]
fn inherit_modes_parse_in_any_case_and_name_the_choices() {
    assert_eq!("CORE".parse::<EnvInherit>(), Ok(EnvInherit::Core));
    assert_eq!(" none ".parse::<EnvInherit>(), Ok(EnvInherit::None));
    let error = "some".parse::<EnvInherit>().unwrap_err().to_string();
    assert!(error.contains("all, core or none"), "{error}");
}

#[test]
fn assignments_split_at_the_first_equals_sign() {
    assert_eq!(
        parse_env_assignment("X=1=2"),
        Ok(("X".to_owned(), "1=2".to_owned()))
    );
    assert_eq!(
        parse_env_assignment("X="),
        Ok(("X".to_owned(), String::new()))
    );
    assert!(parse_env_assignment("=1").is_err());
    assert!(parse_env_assignment("X").is_err());
}

#[test]
fn the_serde_shape_is_a_table_of_optional_fields() {
    let policy: EnvPolicy = serde_json::from_str("{}").unwrap();
    assert_eq!(policy, EnvPolicy::default());
    let policy = EnvPolicy::default()
        .inherit(EnvInherit::Core)
        .exclude("AWS_*")
        .include_only("PATH")
        .set("CI", "1");
    let json = serde_json::to_value(&policy).unwrap();
    assert_eq!(
        json,
        serde_json::json!({
            "inherit": "core",
            "default_excludes": true,
            "exclude": ["AWS_*"],
            "include_only": ["PATH"],
            "set": {"CI": "1"},
        })
    );
    assert_eq!(serde_json::from_value::<EnvPolicy>(json).unwrap(), policy);
    assert!(serde_json::from_str::<EnvPolicy>(r#"{"inherits": "all"}"#).is_err());
    let error = serde_json::from_str::<EnvPolicy>(r#"{"inherit": "some"}"#).unwrap_err();
    assert!(
        error.to_string().contains("use all, core or none"),
        "{error}"
    );
    let core: EnvPolicy = serde_json::from_str(r#"{"inherit": "Core"}"#).unwrap();
    assert_eq!(core.inherit, EnvInherit::Core);
}

#[test]
fn globs_match_as_documented() {
    let cases = [
        ("*KEY*", "OPENAI_API_KEY", true),
        ("*KEY*", "key", true),
        ("*KEY*", "KE", false),
        ("LC_*", "LC_", true),
        ("LC_*", "LANG", false),
        ("a?c", "abc", true),
        ("a?c", "ac", false),
        ("a?c", "aéc", true),
        ("*a*b", "xaxbxab", true),
        ("*a*b", "xaxbxa", false),
        ("", "", true),
        ("", "A", false),
        ("**", "", true),
    ];
    for (glob, name, expected) in cases {
        assert_eq!(
            EnvPattern::new(glob).matches(name),
            expected,
            "{glob} ~ {name}"
        );
    }
}

/// A plain recursive matcher over characters: the reference the fast one must agree
/// with.
fn reference_match(glob: &[char], name: &[char]) -> bool {
    match (glob.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            reference_match(&glob[1..], name)
                || (!name.is_empty() && reference_match(glob, &name[1..]))
        }
        (Some('?'), Some(_)) => reference_match(&glob[1..], &name[1..]),
        (Some(g), Some(n)) => g.eq_ignore_ascii_case(n) && reference_match(&glob[1..], &name[1..]),
        _ => false,
    }
}

fn env_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z_][A-Za-z0-9_]{0,12}",
        Just("ZIDANE_MCP_TOKEN".to_owned()),
        Just("zidane_mcp_token".to_owned()),
        Just("GITHUB_TOKEN".to_owned()),
        Just("PATH".to_owned()),
        Just("LC_ALL".to_owned()),
        "[a-z]{0,3}(key|Secret|TOKEN|password)[a-z]{0,3}",
    ]
}

fn glob() -> impl Strategy<Value = String> {
    "[A-Za-z_*?é]{0,6}"
}

fn policy() -> impl Strategy<Value = EnvPolicy> {
    (
        prop_oneof![
            Just(EnvInherit::All),
            Just(EnvInherit::Core),
            Just(EnvInherit::None)
        ],
        any::<bool>(),
        proptest::collection::vec(glob(), 0..3),
        proptest::collection::vec(glob(), 0..3),
        proptest::collection::btree_map(env_name(), "[a-z]{0,4}", 0..4),
    )
        .prop_map(
            |(inherit, default_excludes, exclude, include_only, set)| EnvPolicy {
                inherit,
                default_excludes,
                exclude: exclude.into_iter().map(EnvPattern::new).collect(),
                include_only: include_only.into_iter().map(EnvPattern::new).collect(),
                set,
            },
        )
}

proptest! {
    #[test]
    fn the_matcher_agrees_with_the_reference(glob in glob(), name in "[A-Za-z_é]{0,8}") {
        let chars = |s: &str| s.chars().collect::<Vec<_>>();
        prop_assert_eq!(
            EnvPattern::new(glob.clone()).matches(&name),
            reference_match(&chars(&glob), &chars(&name))
        );
    }

    /// Every name of the host is passed or withheld, never both; what is withheld never
    /// reaches the task; zidane's own never does, whatever the policy.
    #[test]
    fn withheld_never_reaches_the_task(
        host in proptest::collection::btree_map(env_name(), "[a-z]{0,4}", 0..12),
        policy in policy(),
    ) {
        let child = policy.apply(host.clone());
        let passed: Vec<String> = child.names();
        for name in child.withheld_names() {
            prop_assert!(!passed.iter().any(|p| p == name), "{} both withheld and passed", name);
        }
        for name in &passed {
            prop_assert!(!is_zidane_secret(name), "{} passed", name);
        }
        for (name, host_value) in &host {
            let given = value(&child, name);
            match policy.set.get(name) {
                _ if is_zidane_secret(name) => prop_assert!(given.is_none()),
                Some(set) => prop_assert_eq!(given.as_deref(), Some(set.as_str())),
                None => match policy.withholds(name) {
                    Some(reason) => {
                        prop_assert!(given.is_none());
                        let expected = WithheldVar { name: name.clone(), reason };
                        prop_assert!(child.withheld.contains(&expected));
                    }
                    None => prop_assert_eq!(given.as_deref(), Some(host_value.as_str())),
                },
            }
        }
        // Nothing comes from anywhere but the host and `set`.
        for name in &passed {
            prop_assert!(host.contains_key(name) || policy.set.contains_key(name));
        }
    }

    /// With the default excludes on, no host variable named like a secret reaches a
    /// task unless `set` gives it on purpose.
    #[test]
    fn default_excludes_hold_for_any_inherit_mode(
        host in proptest::collection::btree_map(env_name(), "[a-z]{0,4}", 0..12),
        mut policy in policy(),
    ) {
        policy.default_excludes = true;
        let child = policy.apply(host);
        let secret_like: BTreeMap<_, _> = child
            .names()
            .into_iter()
            .filter(|name| DEFAULT_ENV_EXCLUDES.iter().any(|p| EnvPattern::new(*p).matches(name)))
            .map(|name| (name, ()))
            .collect();
        for name in secret_like.keys() {
            prop_assert!(policy.set.contains_key(name), "{} passed without set", name);
        }
    }
}
