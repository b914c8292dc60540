//! The lists of tools and of context methods in the docs, checked against the code: every
//! list of the builtin tools names exactly the tools of `default_tools()` (plus the
//! extras that list declares), the context contract table names exactly the methods of
//! `ExecutionContext`, and "Per-context support" names every context.

use std::collections::BTreeSet;
use std::path::PathBuf;

use zidane_tools::{SpecView, default_tools};

/// Tools that are not builtin but that some lists name beside them: the agent's `spawn`
/// and the MCP server's `list_tasks`.
const EXTRAS: [&str; 2] = ["spawn", "list_tasks"];

/// Where one list of tools sits in a file.
enum Place {
    /// The first column of the markdown table under this header row.
    Table(&'static str),
    /// The text between two markers (the first `end` after `start`).
    Between(&'static str, &'static str),
}

/// Every list of the tools: the file, where in it, and the extras it names.
const LISTS: &[(&str, Place, &[&str])] = &[
    (
        "README.md",
        Place::Between("[`zidane-tools`](crates/zidane-tools) |", "|\n"),
        &[],
    ),
    (
        "crates/zidane/README.md",
        Place::Between("| `zidane::tools` | `zidane-tools` |", "|\n"),
        &[],
    ),
    (
        "crates/zidane/src/lib.rs",
        Place::Between("| [`tools`] | `zidane-tools` |", "|\n"),
        &[],
    ),
    (
        "crates/zidane-agent/README.md",
        Place::Between("(by default", ")"),
        &[],
    ),
    (
        "crates/zidane-agent/src/lib.rs",
        Place::Between("the tools (by default", ")"),
        &[],
    ),
    (
        "crates/zidane-mcp/src/lib.rs",
        Place::Between("zidane-tools' own —", "with their"),
        &[],
    ),
    (
        "crates/zidane-tools/src/lib.rs",
        Place::Between("The model-facing tools of zidane:", "over any"),
        &[],
    ),
    (
        "crates/zidane-tools/README.md",
        Place::Table("| tool | input | result |"),
        &[],
    ),
    (
        "crates/zidane-tools/Cargo.toml",
        Place::Between("ExecutionContext:", "\"\n"),
        &[],
    ),
    (
        "crates/zidane-mcp/Cargo.toml",
        Place::Between("every MCP host gets", ";"),
        &["list_tasks"],
    ),
    (
        "docs/BACKGROUND_TASKS.md",
        Place::Table("| tool | input | result |"),
        &["spawn", "list_tasks"],
    ),
    (
        "docs/BACKGROUND_TASKS.md",
        Place::Between("wakes the model when it ends:", "the notification pipeline"),
        &[],
    ),
    (
        "README.md",
        Place::Between("## What the model sees", "Their inputs"),
        &["spawn", "list_tasks"],
    ),
    (
        "crates/zidane-agent/src/config.rs",
        Place::Between("`zidane_tools::default_tools()` —", ")."),
        &[],
    ),
    (
        "crates/zidane/src/local.rs",
        Place::Between("/// - the default tools:", ".\n"),
        &[],
    ),
];

/// Where a count of the tools may be written: the workspace's Markdown and the Rust
/// sources of its crates (their doc comments).
const COUNTED: [&str; 3] = ["README.md", "docs", "crates"];

/// Phrases with a number before "tools" that count something else.
const NOT_A_COUNT: [&str; 2] = ["two tools claim", "no two tools may"];

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text of `place` in `text`.
fn section(path: &str, text: &str, place: &Place) -> Vec<String> {
    match place {
        Place::Table(header) => {
            let start = text
                .find(header)
                .unwrap_or_else(|| panic!("{path}: no table headed {header}"));
            text[start..]
                .lines()
                .skip(2)
                .take_while(|line| line.starts_with('|'))
                .filter_map(|line| line.split('|').nth(1).map(str::to_owned))
                .collect()
        }
        Place::Between(start, end) => {
            let from = text
                .find(start)
                .map(|at| at + start.len())
                .unwrap_or_else(|| panic!("{path}: no `{start}`"));
            let to = text[from..]
                .find(end)
                .map(|at| from + at)
                .unwrap_or_else(|| panic!("{path}: nothing ends `{start}`"));
            vec![text[from..to].to_owned()]
        }
    }
}

/// The tool names in `text`: the backticked names if it has backticks, else its words,
/// keeping those that are a known tool or look like one (`snake_case` with an `_`).
fn tool_names(text: &str, known: &BTreeSet<String>) -> Vec<String> {
    let words: Vec<&str> = if text.contains('`') {
        text.split('`').skip(1).step_by(2).collect()
    } else {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect()
    };
    words
        .into_iter()
        .filter(|word| {
            !word.is_empty()
                && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && (known.contains(*word) || word.contains('_'))
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_list_of_the_tools_names_exactly_the_default_tools() {
    let builtin: BTreeSet<String> = default_tools()
        .iter()
        .map(|tool| tool.spec(&SpecView::default()).name)
        .collect();
    let known: BTreeSet<String> = builtin
        .iter()
        .cloned()
        .chain(EXTRAS.iter().map(|extra| (*extra).to_owned()))
        .collect();
    let mut wrong = Vec::new();
    for (path, place, extras) in LISTS {
        let text = read(path);
        let named: Vec<String> = section(path, &text, place)
            .iter()
            .flat_map(|part| tool_names(part, &known))
            .collect();
        let expected: BTreeSet<String> = builtin
            .iter()
            .cloned()
            .chain(extras.iter().map(|extra| (*extra).to_owned()))
            .collect();
        let set: BTreeSet<String> = named.iter().cloned().collect();
        if set != expected || set.len() != named.len() {
            wrong.push(format!(
                "{path}: names {named:?}, expected each of {expected:?} once"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The methods of the `ExecutionContext` trait, read from its source.
fn context_methods() -> BTreeSet<String> {
    let source = read("crates/zidane-context/src/context.rs");
    let start = source
        .find("pub trait ExecutionContext")
        .unwrap_or_else(|| panic!("no ExecutionContext trait"));
    source[start..]
        .lines()
        .skip(1)
        .take_while(|line| *line != "}")
        .filter_map(|line| {
            let line = line.strip_prefix("    ")?;
            let rest = line
                .strip_prefix("async fn ")
                .or_else(|| line.strip_prefix("fn "))?;
            Some(rest.split(['(', '<']).next()?.to_owned())
        })
        .collect()
}

#[test]
fn the_contract_table_names_every_method_of_the_context_trait() {
    let methods = context_methods();
    assert!(methods.contains("exec"), "{methods:?}");
    let architecture = read("docs/ARCHITECTURE.md");
    let named: BTreeSet<String> = section(
        "docs/ARCHITECTURE.md",
        &architecture,
        &Place::Table("| method | contract |"),
    )
    .iter()
    .flat_map(|cell| {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter_map(|name| name.split('(').next().map(str::to_owned))
            .collect::<Vec<_>>()
    })
    .collect();
    assert_eq!(named, methods);
}

#[test]
fn per_context_support_names_every_context() {
    let text = read("docs/BACKGROUND_TASKS.md");
    let contexts = section(
        "docs/BACKGROUND_TASKS.md",
        &text,
        &Place::Table("| context | background tasks |"),
    );
    for context in ["ProcessContext", "MockContext", "RestateContext"] {
        assert!(
            contexts
                .iter()
                .any(|cell| cell.contains(&format!("`{context}`"))),
            "Per-context support lacks {context}: {contexts:?}"
        );
    }
}

/// The number words a count of the tools is written with.
const NUMBER_WORDS: [&str; 13] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
];

/// Every file under `path` (itself, if it is one) that is Markdown or Rust, outside
/// build output.
fn counted_files(path: &std::path::Path, found: &mut Vec<PathBuf>) {
    if path.is_file() {
        if path
            .extension()
            .is_some_and(|ext| ext == "md" || ext == "rs")
        {
            found.push(path.to_owned());
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let child = entry.path();
        if child
            .file_name()
            .is_some_and(|name| name == "target" || name == "snapshots")
        {
            continue;
        }
        counted_files(&child, found);
    }
}

/// The counts of tools in `text`: a number word, at most one of a few words, then
/// `tools` (`Four tools`, `the seven model tools`), each with its line number and the
/// number; [`NOT_A_COUNT`] skipped.
fn tool_counts(text: &str) -> Vec<(usize, usize, String)> {
    let pattern = regex::Regex::new(&format!(
        r"(?i)\b({})\s+(?:(?:builtin|default|model|background|model-facing)\s+)?tools\b",
        NUMBER_WORDS.join("|")
    ))
    .unwrap();
    let mut counts = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        if NOT_A_COUNT.iter().any(|phrase| lower.contains(phrase)) {
            continue;
        }
        for found in pattern.captures_iter(line) {
            let word = found[1].to_ascii_lowercase();
            if let Some(n) = NUMBER_WORDS.iter().position(|known| *known == word) {
                counts.push((at + 1, n, line.trim().to_owned()));
            }
        }
    }
    counts
}

#[test]
fn every_count_of_the_tools_is_the_number_of_default_tools() {
    let builtin = default_tools().len();
    let mut files = Vec::new();
    for path in COUNTED {
        counted_files(&workspace().join(path), &mut files);
    }
    assert!(files.len() > 50, "found only {files:?}");
    let mut wrong = Vec::new();
    for file in files {
        // This file plants a stale count to check the check.
        if file.ends_with(file!().rsplit('/').next().unwrap_or_default()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (line, n, said) in tool_counts(&text) {
            if n != builtin {
                wrong.push(format!("{}:{line}: {said:?} counts {n}", file.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{builtin} default tools, but:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_stale_count_is_found() {
    assert_eq!(
        tool_counts("intro\nFour tools: `shell`, …\nthe seven model tools are"),
        vec![
            (2, 4, "Four tools: `shell`, …".to_owned()),
            (3, 7, "the seven model tools are".to_owned()),
        ]
    );
    assert!(tool_counts("No two tools may claim one name").is_empty());
}
