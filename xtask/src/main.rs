//! Project automation for zidane. No product logic lives here.
//!
//! ```text
//! cargo xtask ci      fmt, clippy, tests, doc tests, docs — as CI runs them
//! cargo xtask bench   the process layer's benchmark driver: its table, written to
//!                     crates/zidane-process/benches/RESULTS.md (--peers: then the
//!                     comparison with the reference peers, where they are present)
//! cargo xtask restate install the Restate server the zidane-restate tests run against
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::{Command, ExitCode};
use std::time::Instant;

mod bench;
mod mcp_venv;
mod restate;
mod tmux;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") => bench::bench(&args[1..]),
        Some("restate") => restate::install().map(|path| println!("{}", path.display())),
        _ => {
            eprintln!("usage: cargo xtask <ci|bench [--peers]|restate>");
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
    // Snapshots are checked, never accepted, by CI.
    let venv = mcp_venv::ensure()?;
    let venv = venv.to_string_lossy();
    let env: &[(&str, &str)] = &[
        ("INSTA_UPDATE", "no"),
        ("CI", "true"),
        (mcp_venv::VENV_ENV, &venv),
    ];
    step("fmt", &["fmt", "--all", "--check"], env)?;
    // The zidane-restate tests run a real Restate server.
    let server = restate::install()?;
    let server = server.to_string_lossy().into_owned();
    let test_env: &[(&str, &str)] = &[
        ("INSTA_UPDATE", "no"),
        ("CI", "true"),
        (restate::SERVER_ENV, &server),
    ];
    step(
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
    // The zidane binary's end-to-end tests run it in tmux.
    tmux::ensure()?;
    if has_nextest() {
        step(
            "test (nextest)",
            &["nextest", "run", "--workspace", "--no-fail-fast"],
            test_env,
        )?;
        step("doc tests", &["test", "--workspace", "--doc"], test_env)?;
    } else {
        // `cargo test` runs doc tests too.
        step("test", &["test", "--workspace"], test_env)?;
    }
    step(
        "doc",
        &["doc", "--workspace", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings"), ("INSTA_UPDATE", "no")],
    )?;
    println!("xtask ci: all steps passed in {:.1?}", started.elapsed());
    Ok(())
}

fn has_nextest() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs one `cargo` step, printing its name and duration.
fn step(name: &str, args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    println!("==> {name}: cargo {}", args.join(" "));
    let started = Instant::now();
    let mut command = Command::new(env!("CARGO"));
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    let status = command
        .status()
        .map_err(|e| format!("{name}: cannot start cargo: {e}"))?;
    let elapsed = started.elapsed();
    if status.success() {
        println!("<== {name}: ok in {elapsed:.1?}");
        Ok(())
    } else {
        Err(format!("{name}: failed ({status}) after {elapsed:.1?}"))
    }
}
