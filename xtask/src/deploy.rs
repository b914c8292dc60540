//! The worker's deployment files, checked by what this machine can run (part of
//! `cargo xtask dist`): the compose file against the Compose Specification's schema
//! (check-jsonschema's vendored copy), the container image's Dockerfile through
//! hadolint, every `ZIDANE_WORKER_*` setting the Dockerfile, the compose file and the
//! systemd unit name against those `zidane-worker --help` lists (a misspelt one is
//! ignored by the worker, not refused), and the compose file's Restate image against
//! the Restate version the tests run. No container runs here: building the image,
//! pushing it and starting the compose file are left to the release workflow and a
//! real deployment.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The compose file: a Restate server and two workers.
const COMPOSE: &str = "dist/compose/compose.yaml";

/// The worker's container image.
const DOCKERFILE: &str = "dist/container/Dockerfile";

/// The files that configure the worker through its environment.
const CONFIGURING: [&str; 3] = [COMPOSE, DOCKERFILE, "dist/systemd/zidane-worker.service"];

/// How every setting of the worker begins.
const SETTING_PREFIX: &str = "ZIDANE_WORKER_";

/// Restate's image, as the compose file names it (the tag follows a `:`).
const RESTATE_IMAGE: &str = "docker.restate.dev/restatedev/restate:";

/// Every deployment check, in order, stopping at the first failure.
pub fn check(root: &Path, venv: &Path) -> Result<(), String> {
    crate::dist::timed("compose file (Compose Specification schema)", || {
        crate::dist::run(
            Command::new(venv.join("bin/check-jsonschema"))
                .current_dir(root)
                .args(["--builtin-schema", "vendor.compose-spec", COMPOSE]),
        )
    })?;
    crate::dist::timed("container image (hadolint)", || {
        crate::dist::run(
            Command::new(venv.join("bin/hadolint"))
                .current_dir(root)
                .args(["--no-color", DOCKERFILE]),
        )
    })?;
    crate::dist::timed("compose file (Restate version)", || {
        let text = read(root, COMPOSE)?;
        restate_versions_match(&text, crate::restate::TESTED_VERSION)
    })?;
    let worker = built_worker(root)?;
    crate::dist::timed("worker settings (zidane-worker --help)", || {
        let help = crate::dist::output(Command::new(&worker).arg("--help"))?;
        let known = settings(&help);
        if known.is_empty() {
            return Err(format!(
                "zidane-worker --help names no {SETTING_PREFIX}* setting"
            ));
        }
        let mut problems = Vec::new();
        for file in CONFIGURING {
            for (line, name) in unknown_settings(&read(root, file)?, &known) {
                problems.push(format!(
                    "{file}:{line}: {name} is not a setting of zidane-worker"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "\n  {}\n  (its settings: {})",
                problems.join("\n  "),
                known.into_iter().collect::<Vec<_>>().join(", ")
            ))
        }
    })
}

/// Builds `zidane-worker` (debug) and returns its path under the target directory.
pub fn built_worker(workspace: &Path) -> Result<PathBuf, String> {
    crate::cross::step(
        "zidane-worker",
        &["build", "-p", "zidane-restate", "--bin", "zidane-worker"],
        &[],
    )?;
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace.join("target"), Into::into);
    Ok(target.join("debug").join("zidane-worker"))
}

fn read(root: &Path, file: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(file)).map_err(|e| format!("cannot read {file}: {e}"))
}

/// The `ZIDANE_WORKER_*` names in `text`, each once.
fn settings(text: &str) -> BTreeSet<String> {
    setting_names(text).map(|(_, name)| name).collect()
}

/// Each `ZIDANE_WORKER_*` name in `text` with its line number, in order.
fn setting_names(text: &str) -> impl Iterator<Item = (usize, String)> + '_ {
    text.lines().enumerate().flat_map(|(index, line)| {
        line.match_indices(SETTING_PREFIX)
            .filter_map(move |(at, _)| {
                // A longer name that merely contains the prefix is not one.
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return None;
                }
                let name: String = line[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                (name.len() > SETTING_PREFIX.len()).then_some((index + 1, name))
            })
    })
}

/// The `ZIDANE_WORKER_*` names of `text` that are not in `known`, with their lines.
fn unknown_settings(text: &str, known: &BTreeSet<String>) -> Vec<(usize, String)> {
    setting_names(text)
        .filter(|(_, name)| !known.contains(name))
        .collect()
}

/// Every Restate image the compose file names is tagged `tested` (the version the tests
/// run against, such as `1.7`), and it names at least one.
fn restate_versions_match(compose: &str, tested: &str) -> Result<(), String> {
    let tags: Vec<&str> = compose
        .match_indices(RESTATE_IMAGE)
        .map(|(at, _)| {
            let rest = &compose[at + RESTATE_IMAGE.len()..];
            rest.split(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .next()
                .unwrap_or_default()
        })
        .collect();
    if tags.is_empty() {
        return Err(format!("{COMPOSE} names no {RESTATE_IMAGE}<version> image"));
    }
    let other: Vec<&&str> = tags.iter().filter(|tag| **tag != tested).collect();
    if other.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{COMPOSE} runs Restate {other:?}, the tests run {tested} (xtask/src/restate.rs): \
             change both together"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> BTreeSet<String> {
        settings(
            "  --worker-id <ID>  [env: ZIDANE_WORKER_ID=]\n  --listen [env: ZIDANE_WORKER_LISTEN=]",
        )
    }

    #[test]
    fn a_misspelt_setting_is_found_with_its_line() {
        let compose = "\
services:
  w1:
    environment:
      ZIDANE_WORKER_ID: w1
      ZIDANE_WORKER_BIND: 0.0.0.0:9080
      # ZIDANE_WORKER_LISTEN=0.0.0.0:9080 in a comment is checked too
      NOT_ZIDANE_WORKER_THING: x
";
        assert_eq!(
            unknown_settings(compose, &known()),
            [(5, "ZIDANE_WORKER_BIND".to_owned())]
        );
        assert!(
            unknown_settings("ZIDANE_WORKER_ID=w1 ZIDANE_WORKER_LISTEN=x", &known()).is_empty()
        );
    }

    #[test]
    fn the_restate_image_must_be_the_tested_version() {
        let compose = "image: docker.restate.dev/restatedev/restate:1.7\n\
                       image: \"docker.restate.dev/restatedev/restate:1.7\"\n";
        assert_eq!(restate_versions_match(compose, "1.7"), Ok(()));
        let drifted = "image: docker.restate.dev/restatedev/restate:1.6\n";
        let said = restate_versions_match(drifted, "1.7").unwrap_err();
        assert!(said.contains("\"1.6\"") && said.contains("1.7"), "{said}");
        assert!(restate_versions_match("image: restate\n", "1.7").is_err());
    }

    #[test]
    fn the_compose_file_runs_the_tested_restate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let compose = read(&root, COMPOSE).unwrap();
        assert_eq!(
            restate_versions_match(&compose, crate::restate::TESTED_VERSION),
            Ok(())
        );
    }
}
