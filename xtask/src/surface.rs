//! `cargo xtask surface`: each library crate's public surface, counted from rustdoc's JSON
//! and held to a checked-in baseline (`xtask/surface.txt`), so that the public API grows
//! only when someone means it to. A crate whose count rises above its baseline fails the
//! check; `cargo xtask surface --bless` writes the new counts as the baseline, which then
//! shows up in review as a one-line diff beside the code that grew it.
//!
//! Two counts per crate, both over the items of the crate itself (`crate_id` 0):
//!
//! - **named**: the public members of its public modules, re-exports included — the paths
//!   a user can write (`zidane_context::TaskId`, `zidane_context::option`).
//! - **all**: every public item — modules, types, traits, functions, constants, inherent
//!   methods, fields — plus what is public through its parent (an enum's variants and
//!   their fields, a trait's methods and associated items). Not counted: the crate root,
//!   impl blocks and the members of trait impls (they implement a trait's surface, they
//!   add none), and a re-export of an item of the same crate (the item is counted).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use serde_json::Value;

/// The baseline, relative to the workspace root.
const BASELINE: &str = "xtask/surface.txt";

/// One crate's two counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// The public members of its public modules (re-exports included).
    pub named: usize,
    /// Every public item, fields, methods and variants included.
    pub all: usize,
}

/// `cargo xtask surface [--bless]`.
pub fn surface(root: &Path, args: &[String]) -> Result<(), String> {
    let bless = match args {
        [] => false,
        [flag] if flag == "--bless" => true,
        _ => {
            return Err(format!(
                "usage: cargo xtask surface [--bless], got {args:?}"
            ));
        }
    };
    run(root, bless, Trust::Mtimes)
}

/// The check as `cargo xtask ci` runs it: every crate documented again, whatever the
/// modification times say. A JSON written while a source was being edited is newer than
/// that source yet describes the old text, so the shortcut can pass a tree CI fails.
pub fn check_rebuilt(root: &Path) -> Result<(), String> {
    run(root, false, Trust::Nothing)
}

/// Whether a crate's JSON newer than its sources may be counted without documenting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// Yes: the quick local check.
    Mtimes,
    /// No: every crate is documented again.
    Nothing,
}

fn run(root: &Path, bless: bool, trust: Trust) -> Result<(), String> {
    let started = Instant::now();
    let current = measure(root, trust)?;
    let baseline_path = root.join(BASELINE);
    let table = render_table(&current);
    if bless {
        std::fs::write(&baseline_path, render_baseline(&current))
            .map_err(|e| format!("cannot write {}: {e}", baseline_path.display()))?;
        print!("{table}");
        println!("xtask surface: baseline written to {BASELINE}");
        return Ok(());
    }
    let text = std::fs::read_to_string(&baseline_path)
        .map_err(|e| format!("cannot read {}: {e}", baseline_path.display()))?;
    let baseline = parse_baseline(&text)?;
    print!("{table}");
    let verdict = compare(&baseline, &current);
    for line in &verdict.notes {
        println!("xtask surface: {line}");
    }
    if verdict.failures.is_empty() {
        println!(
            "xtask surface: {} crates within their baseline in {:.1?}",
            current.len(),
            started.elapsed()
        );
        Ok(())
    } else {
        Err(format!(
            "public surface grew beyond {BASELINE}:\n  {}\nIf the growth is meant, run \
             `cargo xtask surface --bless` and commit {BASELINE} with the change.",
            verdict.failures.join("\n  ")
        ))
    }
}

/// One library crate to count: its package name, the JSON rustdoc writes for it, and the
/// directories whose files it is documented from (its own and those of the workspace
/// crates it depends on).
struct Library {
    name: String,
    json: PathBuf,
    inputs: Vec<PathBuf>,
}

/// The workspace's published library crates, by package name.
fn libraries(root: &Path) -> Result<(Vec<Library>, PathBuf), String> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("cargo metadata printed no JSON: {e}"))?;
    let target_dir = metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .ok_or("cargo metadata: no target_directory")?;
    let packages = metadata["packages"]
        .as_array()
        .ok_or("cargo metadata: no packages")?;
    // Each workspace package's directory and the workspace packages its library uses.
    let mut dirs = BTreeMap::new();
    let mut uses = BTreeMap::new();
    for package in packages {
        let name = package["name"]
            .as_str()
            .ok_or("cargo metadata: a nameless package")?;
        let dir = package["manifest_path"]
            .as_str()
            .and_then(|manifest| Path::new(manifest).parent())
            .ok_or_else(|| format!("cargo metadata: {name} has no manifest path"))?;
        dirs.insert(name.to_owned(), dir.to_owned());
        let local: Vec<String> = package["dependencies"]
            .as_array()
            .map(|deps| {
                deps.iter()
                    .filter(|dep| dep["kind"].is_null() && dep["path"].is_string())
                    .filter_map(|dep| dep["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        uses.insert(name.to_owned(), local);
    }
    let mut crates = Vec::new();
    for package in packages {
        // `publish = false` reads as an empty list of registries.
        if package["publish"]
            .as_array()
            .is_some_and(|registries| registries.is_empty())
        {
            continue;
        }
        let name = package["name"]
            .as_str()
            .ok_or("cargo metadata: a nameless package")?;
        let lib = package["targets"].as_array().and_then(|targets| {
            targets.iter().find(|target| {
                target["kind"]
                    .as_array()
                    .is_some_and(|kinds| kinds.iter().any(|kind| kind == "lib"))
            })
        });
        let Some(lib) = lib else { continue };
        let lib_name = lib["name"]
            .as_str()
            .ok_or("cargo metadata: a nameless lib")?;
        // The crate and every workspace crate below it, transitively.
        let mut seen = BTreeSet::from([name.to_owned()]);
        let mut todo = vec![name.to_owned()];
        while let Some(next) = todo.pop() {
            for dep in uses.get(&next).into_iter().flatten() {
                if seen.insert(dep.clone()) {
                    todo.push(dep.clone());
                }
            }
        }
        let mut inputs: Vec<PathBuf> = seen.iter().filter_map(|n| dirs.get(n).cloned()).collect();
        inputs.extend(
            ["Cargo.toml", "Cargo.lock", "rust-toolchain.toml"]
                .iter()
                .map(|file| root.join(file)),
        );
        crates.push(Library {
            name: name.to_owned(),
            json: surface_dir(&target_dir)
                .join("doc")
                .join(format!("{lib_name}.json")),
            inputs,
        });
    }
    crates.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((crates, target_dir))
}

/// Where the surface count builds: a directory of its own inside the target directory.
/// Build scripts that probe for nightly features (proc-macro2's among them) rerun when
/// `RUSTC_BOOTSTRAP` changes, and everything above them with them; in the shared target
/// directory, each surface count would rebuild the workspace's proc macros twice — once
/// for it and once for the next ordinary build. Here they are built once and kept.
fn surface_dir(target_dir: &Path) -> PathBuf {
    target_dir.join("surface")
}

/// The newest modification time under `path` (a file, or a directory walked whole);
/// `None` when nothing there can be read.
fn newest(path: &Path) -> Option<SystemTime> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_dir() {
        return meta.modified().ok();
    }
    std::fs::read_dir(path)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| newest(&entry.path()))
        .max()
}

/// Whether the crate's JSON is newer than everything it is documented from. rustdoc's
/// JSON is not an output Cargo tracks, so Cargo documents again on every call; this
/// check is what lets a run with nothing changed skip rustdoc.
fn fresh(library: &Library) -> bool {
    let Some(written) = std::fs::metadata(&library.json)
        .ok()
        .and_then(|meta| meta.modified().ok())
    else {
        return false;
    };
    library
        .inputs
        .iter()
        .filter_map(|input| newest(input))
        .all(|changed| changed < written)
}

/// Documents the crates whose JSON is stale (every crate, trusting nothing) in one
/// `cargo doc` (its jobs run in parallel, and the dependencies' checks stay in
/// [`surface_dir`] from one run to the next) and counts each crate.
fn measure(root: &Path, trust: Trust) -> Result<BTreeMap<String, Counts>, String> {
    let (crates, target_dir) = libraries(root)?;
    let stale: Vec<&Library> = crates
        .iter()
        .filter(|library| trust == Trust::Nothing || !fresh(library))
        .collect();
    if stale.is_empty() {
        println!("surface: every crate's rustdoc JSON is newer than its sources");
    } else {
        let mut command = Command::new(env!("CARGO"));
        command
            .current_dir(root)
            .args(["doc", "--no-deps", "--lib", "--all-features"])
            // JSON output is unstable rustdoc; the bootstrap switch enables it on stable.
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTDOCFLAGS", "-Z unstable-options --output-format json")
            .env("CARGO_TARGET_DIR", surface_dir(&target_dir));
        for library in &stale {
            command.args(["-p", &library.name]);
        }
        crate::cross::run("surface: rustdoc JSON", &mut command)?;
    }
    let mut counts = BTreeMap::new();
    for Library { name, json, .. } in crates {
        let text = std::fs::read_to_string(&json)
            .map_err(|e| format!("{name}: cannot read {}: {e}", json.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{name}: {} is not JSON: {e}", json.display()))?;
        let counted = count(&doc).map_err(|e| format!("{name}: {e}"))?;
        counts.insert(name, counted);
    }
    Ok(counts)
}

/// The kind of an item: the one key of its `inner` object (`struct`, `function`, …).
fn kind(item: &Value) -> Option<&str> {
    item["inner"].as_object()?.keys().next().map(String::as_str)
}

/// The ids an item lists under `inner.<kind>.<field>`, as index keys.
fn ids(item: &Value, kind: &str, field: &str) -> Vec<String> {
    item["inner"][kind][field]
        .as_array()
        .map(|ids| ids.iter().filter_map(id_key).collect())
        .unwrap_or_default()
}

/// An id as the index keys it: rustdoc writes ids as numbers and keys them as strings.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Counts one crate's rustdoc JSON.
pub fn count(doc: &Value) -> Result<Counts, String> {
    let index = doc["index"]
        .as_object()
        .ok_or("rustdoc JSON without an index")?;
    let root = doc
        .get("root")
        .and_then(id_key)
        .ok_or("rustdoc JSON without a root")?;

    // Named: the public members of the crate's modules. Private modules are not in the
    // index at all, so what they hold is named only through a re-export.
    let mut named = BTreeSet::new();
    for item in index.values() {
        if local(item) && kind(item) == Some("module") {
            for id in ids(item, "module", "items") {
                if index.get(&id).is_some_and(public) {
                    named.insert(id);
                }
            }
        }
    }

    // What is public through its parent. Members of trait impls say `default` too, but
    // no public enum or trait lists them, so they stay out.
    let mut through_parent = BTreeSet::new();
    for item in index.values() {
        match kind(item) {
            Some("enum") if local(item) && public(item) => {
                for variant in ids(item, "enum", "variants") {
                    through_parent.insert(variant.clone());
                    if let Some(v) = index.get(&variant) {
                        through_parent.extend(variant_fields(v));
                    }
                }
            }
            Some("trait") if local(item) && public(item) => {
                through_parent.extend(ids(item, "trait", "items"));
            }
            _ => {}
        }
    }

    let mut all = 0;
    for (id, item) in index {
        if !local(item) || *id == root {
            continue;
        }
        let counted = match kind(item) {
            Some("impl") => false,
            // A re-export of this crate's own item: the item itself is counted.
            Some("use") => {
                public(item)
                    && !item["inner"]["use"]
                        .get("id")
                        .and_then(id_key)
                        .and_then(|target| index.get(&target))
                        .is_some_and(local)
            }
            _ => public(item) || through_parent.contains(id),
        };
        all += usize::from(counted);
    }
    Ok(Counts {
        named: named.len(),
        all,
    })
}

/// Whether an item belongs to the crate documented (rather than a dependency).
fn local(item: &Value) -> bool {
    item["crate_id"].as_u64() == Some(0)
}

/// Whether an item is declared `pub` (members public through their parent, such as
/// variants and trait methods, say `default`).
fn public(item: &Value) -> bool {
    item["visibility"].as_str() == Some("public")
}

/// The fields of a struct or tuple variant (a tuple variant lists `null` for a field
/// rustdoc stripped).
fn variant_fields(variant: &Value) -> Vec<String> {
    let shape = &variant["inner"]["variant"]["kind"];
    let list = shape["struct"]["fields"]
        .as_array()
        .or_else(|| shape["tuple"].as_array());
    list.map(|ids| ids.iter().filter_map(id_key).collect())
        .unwrap_or_default()
}

/// The table printed on every run.
fn render_table(counts: &BTreeMap<String, Counts>) -> String {
    let width = counts.keys().map(String::len).max().unwrap_or(5).max(5);
    let mut out = format!("{:width$}  {:>5}  {:>5}\n", "crate", "named", "all");
    for (name, c) in counts {
        let _ = writeln!(out, "{name:width$}  {:>5}  {:>5}", c.named, c.all);
    }
    out
}

/// The baseline file: a header saying what it is, then `crate named all` per line.
fn render_baseline(counts: &BTreeMap<String, Counts>) -> String {
    let mut out = String::from(
        "# The public surface of each library crate, as `cargo xtask surface` counts it:\n\
         # crate, named items, all items (fields, methods and variants included).\n\
         # A count above its line fails the check; `cargo xtask surface --bless` rewrites\n\
         # this file when the growth is meant.\n",
    );
    for (name, c) in counts {
        let _ = writeln!(out, "{name} {} {}", c.named, c.all);
    }
    out
}

/// Reads the baseline; a malformed line is an error naming it.
pub fn parse_baseline(text: &str) -> Result<BTreeMap<String, Counts>, String> {
    let mut baseline = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let parsed = match fields.as_slice() {
            [name, named, all] => named
                .parse()
                .ok()
                .zip(all.parse().ok())
                .map(|(named, all)| ((*name).to_owned(), Counts { named, all })),
            _ => None,
        };
        let (name, counts) = parsed.ok_or_else(|| {
            format!(
                "{BASELINE}:{}: expected `crate named all`, got `{line}`",
                number + 1
            )
        })?;
        baseline.insert(name, counts);
    }
    Ok(baseline)
}

/// What the comparison found: failures (growth, a crate without a baseline) and notes
/// (a shrink, a crate gone).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Each reason the check fails.
    pub failures: Vec<String>,
    /// What passes but is worth saying.
    pub notes: Vec<String>,
}

/// Compares the counts with the baseline.
pub fn compare(baseline: &BTreeMap<String, Counts>, current: &BTreeMap<String, Counts>) -> Verdict {
    let mut verdict = Verdict::default();
    for (name, now) in current {
        let Some(was) = baseline.get(name) else {
            verdict.failures.push(format!(
                "{name}: no baseline (named {}, all {})",
                now.named, now.all
            ));
            continue;
        };
        let mut grew = Vec::new();
        let mut shrank = Vec::new();
        for (what, before, after) in [("named", was.named, now.named), ("all", was.all, now.all)] {
            let change = format!("{what} {before} -> {after}");
            if after > before {
                grew.push(change);
            } else if after < before {
                shrank.push(change);
            }
        }
        if !grew.is_empty() {
            verdict
                .failures
                .push(format!("{name}: {}", grew.join(", ")));
        }
        if !shrank.is_empty() {
            verdict.notes.push(format!(
                "{name} shrank ({}); `cargo xtask surface --bless` lowers its baseline",
                shrank.join(", ")
            ));
        }
    }
    for name in baseline.keys().filter(|name| !current.contains_key(*name)) {
        verdict.notes.push(format!(
            "{name} is in the baseline but is no longer a library crate"
        ));
    }
    verdict
}

#[cfg(test)]
#[path = "surface_tests.rs"]
mod tests;
