//! Project automation for zidane. No product logic lives here.
//!
//! ```text
//! cargo xtask ci      fmt, clippy, the module-layering check, the public-surface
//!                     count, tests (the whole suite twice: on the fast and the
//!                     portable path), doc tests, docs, the macOS type-check, the
//!                     Windows build and tests under Wine — as CI runs them
//! cargo xtask bench   the process layer's benchmark driver: its table, written to
//!                     crates/zidane-process/benches/RESULTS.md (--peers: then the
//!                     comparison with the reference peers, where they are present);
//!                     `bench mcp|terminal|durable|hosts` records one measurement
//!                     outside the drivers into the same file
//! cargo xtask numbers no measured number in the docs: they live in the results file
//! cargo xtask macos-check   the workspace type-checked for aarch64 and x86_64 macOS
//! cargo xtask windows the crates that build for x86_64 Windows built, their tests run
//!                     under Wine
//! cargo xtask restate install the Restate server the zidane-restate tests run against
//! cargo xtask modules no import circle of more than two files inside a crate
//! cargo xtask surface each library crate's public surface, counted from rustdoc's
//!                     JSON, held to xtask/surface.txt (--bless: write the counts as
//!                     the new baseline)
//! cargo xtask dist    the shipping checks alone: workflows and install scripts linted,
//!                     the crates' publish dry run, the packaged files, the worker's
//!                     Dockerfile and compose file
//! cargo xtask hosts   install the real MCP hosts the zidane-cli host tests run
//!                     (Claude Code, Codex, Gemini CLI, qwen-code, opencode, Copilot
//!                     CLI, the MCP Inspector) into target/mcp-hosts, and Debian's
//!                     Chromium, in which the Inspector's web UI is driven
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::{Command, ExitCode};
use std::time::Instant;

mod apt;
mod bench;
mod bubblewrap;
mod chromium;
mod cross;
mod deploy;
mod dist;
mod failures;
mod macos_check;
mod mcp_hosts;
mod mcp_venv;
mod modules;
mod numbers;
mod record;
mod restate;
mod surface;
mod tmux;
mod units;
mod windows;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::bench(&args[1..]),
        Some("macos-check") => bench::workspace_root().and_then(|root| macos_check::check(&root)),
        Some("windows") => bench::workspace_root().and_then(|root| {
            let venv = mcp_venv::ensure()?;
            windows::check(&root, &venv)
        }),
        Some("restate") => restate::install().map(|path| println!("{}", path.display())),
        Some("modules") => bench::workspace_root().and_then(|root| modules::check(&root)),
        Some("numbers") => bench::workspace_root().and_then(|root| numbers::check(&root)),
        Some("surface") => {
            bench::workspace_root().and_then(|root| surface::surface(&root, &args[1..]))
        }
        Some("dist") => bench::workspace_root()
            .and_then(|root| dist::ensure_venv(&root).and_then(|venv| dist::check(&root, &venv))),
        Some("hosts") => mcp_hosts::ensure()
            .and_then(|path| chromium::ensure().map(|()| path))
            .map(|path| println!("{}", path.display())),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci|bench [--peers]|macos-check|windows|restate|modules|numbers|surface [--bless]|dist|hosts>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every check CI runs, in order, stopping at the first failure.
fn ci() -> Result<(), String> {
    let started = Instant::now();
    // What the tests need from outside Cargo, installed first when missing: the Python
    // `mcp` SDK (a foreign MCP client), real MCP hosts from npm and the Chromium the
    // Inspector's web UI runs in, the Restate server, tmux, bubblewrap (the sandbox the
    // binaries turn on by default).
    let venv = mcp_venv::ensure()?;
    let venv = venv.to_string_lossy();
    let hosts = mcp_hosts::ensure()?;
    chromium::ensure()?;
    let hosts = hosts.to_string_lossy();
    let server = restate::install()?;
    let server = server.to_string_lossy().into_owned();
    tmux::ensure()?;
    bubblewrap::ensure()?;
    let root = bench::workspace_root()?;
    let dist_venv = dist::ensure_venv(&root)?;
    let dist_venv_path = dist_venv.to_string_lossy();
    // Snapshots are checked, never accepted, by CI; incremental builds only cost time
    // and disk in a run that builds everything once.
    let env: &[(&str, &str)] = &[
        ("INSTA_UPDATE", "no"),
        ("CI", "true"),
        ("CARGO_INCREMENTAL", "0"),
        (mcp_venv::VENV_ENV, &venv),
        (mcp_hosts::HOSTS_ENV, &hosts),
        (restate::SERVER_ENV, &server),
        (dist::VENV_ENV, &dist_venv_path),
    ];
    // The whole suite again, on the mechanisms every Unix has: every binary and test
    // that starts a process honours the switch.
    let portable: Vec<(&str, &str)> = env
        .iter()
        .copied()
        .chain([(PROCESS_PATH_ENV, "portable")])
        .collect();
    cross::step("fmt", &["fmt", "--all", "--check"], env)?;
    cross::step(
        "clippy",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        env,
    )?;
    println!("==> modules: cargo xtask modules");
    let modules_started = Instant::now();
    modules::check(&root)?;
    println!("<== modules: ok in {:.1?}", modules_started.elapsed());
    println!("==> numbers: cargo xtask numbers");
    numbers::check(&root)?;
    println!("==> surface: cargo xtask surface");
    surface::check_rebuilt(&root)?;
    if has_nextest() {
        cross::step(
            "test (nextest)",
            &["nextest", "run", "--workspace", "--no-fail-fast"],
            env,
        )?;
        cross::step(
            "test on the portable path (nextest)",
            &["nextest", "run", "--workspace", "--no-fail-fast"],
            &portable,
        )?;
        cross::step("doc tests", &["test", "--workspace", "--doc"], env)?;
    } else {
        // `cargo test` runs doc tests too.
        cross::step("test", &["test", "--workspace"], env)?;
        cross::step(
            "test on the portable path",
            &["test", "--workspace"],
            &portable,
        )?;
    }
    cross::step(
        "doc",
        &["doc", "--workspace", "--no-deps"],
        &[
            ("RUSTDOCFLAGS", "-D warnings"),
            ("INSTA_UPDATE", "no"),
            ("CARGO_INCREMENTAL", "0"),
        ],
    )?;
    macos_check::check(&root)?;
    windows::check(&root, &mcp_venv::ensure()?)?;
    dist::check(&root, &dist_venv)?;
    units::check(&root)?;
    println!("xtask ci: all steps passed in {:.1?}", started.elapsed());
    Ok(())
}

/// `zidane-process`'s switch to the portable path (`zidane_process::PROCESS_PATH_ENV`).
const PROCESS_PATH_ENV: &str = "ZIDANE_PROCESS_PATH";

fn has_nextest() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}
