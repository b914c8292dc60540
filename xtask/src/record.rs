//! `cargo xtask bench <measure>`: the measurements that are not ops of the bench
//! drivers — an example, or an ignored test that only prints — run once, their output
//! prepended to the results file as a dated section with the command and the machine,
//! the same way `cargo xtask bench` records its own runs. The docs say what each one
//! times and link to the results file; the numbers live only there.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::bench;

/// One measurement `cargo xtask bench` can record besides its driver ops.
pub struct Measure {
    /// Its name on the command line: `cargo xtask bench <name>`.
    pub name: &'static str,
    /// What it times, the heading's tail in the results file.
    pub title: &'static str,
    /// The usage of its one optional argument, for the error on a bad one.
    pub usage: &'static str,
}

/// Every measurement recorded this way, each described in the doc its title names.
pub const MEASURES: &[Measure] = &[
    Measure {
        name: "mcp",
        title: "a foreground `true` through `zidane mcp` over stdio beside `Agent::call_tool` in-process (docs/MCP.md, What it costs)",
        usage: "cargo xtask bench mcp [CALLS] (default 1000)",
    },
    Measure {
        name: "terminal",
        title: "the terminal host driven in tmux: first frame, resume, keys, idle CPU (docs/CLI.md, Measurements)",
        usage: "cargo xtask bench terminal [--release]",
    },
    Measure {
        name: "durable",
        title: "start → notified through Restate beside `ProcessContext`, and concurrent durable starts (docs/DURABLE.md, Measured)",
        usage: "cargo xtask bench durable [ROUNDS] (default 200)",
    },
    Measure {
        name: "hosts",
        title: "a tool call through real MCP hosts beside a raw JSON-RPC client (docs/MCP.md, What it costs)",
        usage: "cargo xtask bench hosts",
    },
    Measure {
        name: "fleet",
        title: "a background `true` through `zidane mcp --restate` on two workers beside a local `zidane mcp`, start → result and result → exit told, and placement by labels over ten workers (docs/DURABLE.md, From an MCP host)",
        usage: "cargo xtask bench fleet [ROUNDS] (default 200)",
    },
    Measure {
        name: "detached",
        title: "detached tasks: `zidane ps` with many tasks, the supervisor's memory, a detached start and its end told beside a session task's (docs/DETACHED.md, Measured)",
        usage: "cargo xtask bench detached [TASKS] (default 1000)",
    },
];

/// The measurement named `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Measure> {
    MEASURES.iter().find(|measure| measure.name == name)
}

/// What a measurement runs: its argument checked, the command to show in the results
/// file and the steps that produce its output.
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    /// The `cargo xtask bench …` line that reproduces the section.
    shown: String,
    /// The cargo invocation whose standard output is the measurement.
    cargo: Vec<String>,
    /// Whether the release build of the `zidane` binary is passed as the second-to-last
    /// argument.
    needs_zidane_binary: bool,
    /// Whether `zidane-worker` is built beside it (where the measurement finds it).
    needs_worker_binary: bool,
    /// Which build is measured.
    build: &'static str,
}

/// The plan for `measure` with its arguments, or an error naming the bad argument.
fn plan(measure: &Measure, args: &[String]) -> Result<Plan, String> {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let count = |default: u32| -> Result<u32, String> {
        match args {
            [] => Ok(default),
            [n] => n.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| {
                format!(
                    "count {n:?} is not a positive whole number; usage: {}",
                    measure.usage
                )
            }),
            _ => Err(format!("too many arguments; usage: {}", measure.usage)),
        }
    };
    match measure.name {
        "mcp" => {
            let calls = count(1000)?;
            Ok(Plan {
                shown: format!("cargo xtask bench mcp {calls}"),
                cargo: strings(&[
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "zidane-mcp",
                    "--example",
                    "mcp_latency",
                    "--",
                ])
                .into_iter()
                .chain([String::new(), calls.to_string()])
                .collect(),
                needs_zidane_binary: true,
                needs_worker_binary: false,
                build: "release build",
            })
        }
        "detached" => {
            let tasks = count(1000)?;
            Ok(Plan {
                shown: format!("cargo xtask bench detached {tasks}"),
                cargo: strings(&[
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "zidane-supervisor",
                    "--example",
                    "detached_latency",
                    "--",
                ])
                .into_iter()
                .chain([String::new(), tasks.to_string()])
                .collect(),
                needs_zidane_binary: true,
                needs_worker_binary: false,
                build: "release build",
            })
        }
        "durable" => {
            let rounds = count(200)?;
            Ok(Plan {
                shown: format!("cargo xtask bench durable {rounds}"),
                cargo: strings(&[
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "zidane-restate",
                    "--example",
                    "durable_latency",
                    "--",
                ])
                .into_iter()
                .chain([rounds.to_string()])
                .collect(),
                needs_zidane_binary: false,
                needs_worker_binary: false,
                build: "release build",
            })
        }
        "fleet" => {
            let rounds = count(200)?;
            Ok(Plan {
                shown: format!("cargo xtask bench fleet {rounds}"),
                cargo: strings(&[
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "zidane-restate",
                    "--example",
                    "fleet_latency",
                    "--",
                ])
                .into_iter()
                .chain([String::new(), rounds.to_string()])
                .collect(),
                needs_zidane_binary: true,
                needs_worker_binary: true,
                build: "release build",
            })
        }
        "terminal" => {
            let release = match args {
                [] => false,
                [flag] if flag == "--release" => true,
                _ => {
                    return Err(format!(
                        "unknown arguments {args:?}; usage: {}",
                        measure.usage
                    ));
                }
            };
            let mut cargo = strings(&["nextest", "run", "-p", "zidane-cli"]);
            if release {
                cargo.push("--release".into());
            }
            cargo.extend(strings(&[
                "--test",
                "cli",
                "--run-ignored",
                "only",
                "--no-capture",
                "measure",
            ]));
            Ok(Plan {
                shown: format!(
                    "cargo xtask bench terminal{}",
                    if release { " --release" } else { "" }
                ),
                build: if release {
                    "release build"
                } else {
                    "debug build"
                },
                cargo,
                needs_zidane_binary: false,
                needs_worker_binary: false,
            })
        }
        "hosts" => {
            if !args.is_empty() {
                return Err(format!(
                    "unknown arguments {args:?}; usage: {}",
                    measure.usage
                ));
            }
            Ok(Plan {
                shown: "cargo xtask bench hosts".into(),
                cargo: strings(&[
                    "nextest",
                    "run",
                    "-p",
                    "zidane-cli",
                    "--test",
                    "cli",
                    "--run-ignored",
                    "only",
                    "--no-capture",
                    "hosts::latency",
                ]),
                needs_zidane_binary: false,
                needs_worker_binary: false,
                build: "debug build",
            })
        }
        other => Err(format!("no measurement named {other:?}")),
    }
}

/// Runs `measure` once and prepends its output to the results file.
pub fn record(measure: &Measure, args: &[String]) -> Result<(), String> {
    let mut plan = plan(measure, args)?;
    let root = bench::workspace_root()?;
    if plan.needs_zidane_binary {
        let binary = build_zidane(&root, plan.needs_worker_binary)?;
        // The example's first argument is the binary under test.
        let slot = plan.cargo.len() - 2;
        plan.cargo[slot] = binary.display().to_string();
    }
    let mut command = Command::new(env!("CARGO"));
    command.current_dir(&root).args(&plan.cargo);
    match measure.name {
        "durable" | "fleet" => {
            let server = env_or(crate::restate::SERVER_ENV, crate::restate::install)?;
            command.env(crate::restate::SERVER_ENV, server);
        }
        "hosts" => {
            let hosts = env_or(crate::mcp_hosts::HOSTS_ENV, crate::mcp_hosts::ensure)?;
            command.env(crate::mcp_hosts::HOSTS_ENV, hosts);
        }
        "terminal" => crate::tmux::ensure()?,
        _ => {}
    }
    eprintln!("==> {}: cargo {}", plan.shown, plan.cargo.join(" "));
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    if !output.status.success() {
        return Err(format!("{} failed: {}", plan.shown, output.status));
    }
    let entry = entry(
        &bench::utc_now(),
        &bench::machine(),
        &load_average(),
        &format!("{}, {}", measure.title, plan.build),
        &format!("`{}`: `cargo {}`", plan.shown, plan.cargo.join(" ")),
        &measurement_lines(&stdout),
    );
    bench::prepend_to_results(&root, &entry)?;
    println!(
        "xtask bench {}: written to {}",
        measure.name,
        bench::RESULTS_FILE
    );
    Ok(())
}

/// A path from the environment when it is set, else from the installer.
fn env_or(variable: &str, install: fn() -> Result<PathBuf, String>) -> Result<PathBuf, String> {
    match std::env::var_os(variable) {
        Some(path) if !path.is_empty() => Ok(PathBuf::from(path)),
        _ => install(),
    }
}

/// Builds the release `zidane` binary, and `zidane-worker` beside it when `with_worker`,
/// and returns the path of `zidane`.
fn build_zidane(root: &Path, with_worker: bool) -> Result<PathBuf, String> {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(root)
        .args(["build", "--release", "-p", "zidane-cli", "--bin", "zidane"]);
    if with_worker {
        command.args(["-p", "zidane-restate", "--bin", "zidane-worker"]);
    }
    let output = command
        .arg("--message-format=json-render-diagnostics")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("building zidane failed: {}", output.status));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == "zidane")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo built no zidane executable".to_owned())
}

/// The machine's load average over one, five and fifteen minutes, as `/proc/loadavg`
/// gives it; `unknown` where there is none.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|load| !load.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

/// What a measurement printed, without the lines of the test harness around an ignored
/// test's own (`running 1 test`, `test … ok`, `test result: …`) and without runs of
/// blank lines.
fn measurement_lines(stdout: &str) -> String {
    let harness = |line: &str| {
        let running =
            line.starts_with("running ") && (line.ends_with(" test") || line.ends_with(" tests"));
        let verdict = line.starts_with("test ")
            && (line.ends_with(" ... ok") || line.ends_with(" ... FAILED"));
        running || verdict || line.starts_with("test result: ")
    };
    let mut out = String::new();
    for line in stdout.lines().filter(|line| !harness(line)) {
        if line.trim().is_empty() && (out.is_empty() || out.ends_with("\n\n")) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_end().to_owned()
}

/// One section of the results file: heading with date, machine and load, the command,
/// then the measurement's own output as it printed it.
fn entry(
    date: &str,
    machine: &str,
    load: &str,
    title: &str,
    command: &str,
    output: &str,
) -> String {
    format!(
        "## {date} — {machine} — {title} — load average {load}\n\n{command}\n\n```text\n{}\n```\n",
        output.trim_end()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn every_measure_has_a_plan_with_its_defaults() {
        for measure in MEASURES {
            let plan = plan(measure, &[]).unwrap();
            assert!(
                plan.shown
                    .starts_with(&format!("cargo xtask bench {}", measure.name))
            );
            assert!(find(measure.name).is_some());
        }
        let mcp = plan(find("mcp").unwrap(), &[]).unwrap();
        assert_eq!(mcp.shown, "cargo xtask bench mcp 1000");
        assert_eq!(mcp.cargo.last().map(String::as_str), Some("1000"));
        assert!(mcp.needs_zidane_binary);
        let durable = plan(find("durable").unwrap(), &args(&["20"])).unwrap();
        assert_eq!(durable.cargo.last().map(String::as_str), Some("20"));
        let release = plan(find("terminal").unwrap(), &args(&["--release"])).unwrap();
        assert!(release.cargo.contains(&"--release".to_owned()));
        assert_eq!(release.shown, "cargo xtask bench terminal --release");
        assert_eq!(release.build, "release build");
        let detached = plan(find("detached").unwrap(), &[]).unwrap();
        assert_eq!(detached.shown, "cargo xtask bench detached 1000");
        assert_eq!(detached.cargo.last().map(String::as_str), Some("1000"));
        assert!(detached.needs_zidane_binary);
    }

    #[test]
    fn the_fleet_plan_builds_zidane_and_the_worker_and_takes_rounds() {
        let fleet = plan(find("fleet").unwrap(), &[]).unwrap();
        assert_eq!(fleet.shown, "cargo xtask bench fleet 200");
        assert_eq!(fleet.cargo.last().map(String::as_str), Some("200"));
        assert!(fleet.needs_zidane_binary && fleet.needs_worker_binary);
        assert_eq!(fleet.build, "release build");
        // The binary's slot, filled by `record`, comes just before the rounds.
        let slot = &fleet.cargo[fleet.cargo.len() - 2];
        assert!(slot.is_empty(), "{:?}", fleet.cargo);
        assert!(
            fleet
                .cargo
                .windows(2)
                .any(|pair| pair == ["--example", "fleet_latency"])
        );
        let few = plan(find("fleet").unwrap(), &args(&["20"])).unwrap();
        assert_eq!(few.shown, "cargo xtask bench fleet 20");
        assert_eq!(few.cargo.last().map(String::as_str), Some("20"));
        let zero = plan(find("fleet").unwrap(), &args(&["0"])).unwrap_err();
        assert!(zero.contains("cargo xtask bench fleet [ROUNDS]"), "{zero}");
        // Only the fleet's plan builds the worker.
        for measure in MEASURES.iter().filter(|measure| measure.name != "fleet") {
            assert!(
                !plan(measure, &[]).unwrap().needs_worker_binary,
                "{}",
                measure.name
            );
        }
    }

    #[test]
    fn a_bad_argument_is_named_with_the_usage() {
        let error = plan(find("mcp").unwrap(), &args(&["lots"])).unwrap_err();
        assert!(error.contains("\"lots\""), "{error}");
        assert!(error.contains("cargo xtask bench mcp [CALLS]"), "{error}");
        let zero = plan(find("durable").unwrap(), &args(&["0"])).unwrap_err();
        assert!(zero.contains("positive"), "{zero}");
        assert!(plan(find("terminal").unwrap(), &args(&["--fast"])).is_err());
        assert!(plan(find("hosts").unwrap(), &args(&["1"])).is_err());
        assert!(find("nonsense").is_none());
    }

    #[test]
    fn the_test_harness_lines_are_left_out() {
        let stdout = "\nrunning 1 test\nfirst frame: 31ms\nidle cpu: 0 ticks\n\
                      test measure::first ... ok\n\ntest result: ok. 1 passed; 0 failed\n\n\n\
                      running 2 tests\nkey to echo: 19ms\ntest measure::second ... ok\n";
        assert_eq!(
            measurement_lines(stdout),
            "first frame: 31ms\nidle cpu: 0 ticks\n\nkey to echo: 19ms"
        );
        assert_eq!(measurement_lines("p50 1 ms\n"), "p50 1 ms");
    }

    #[test]
    fn an_entry_carries_date_machine_load_command_and_output() {
        let text = entry(
            "2026-12-06 03:00 UTC",
            "vm, CPU × 2, Linux",
            "4.1 3.9 3.5",
            "a title",
            "`cargo xtask bench mcp 10`",
            "p50 1 ms\n\n",
        );
        assert_eq!(
            text,
            "## 2026-12-06 03:00 UTC — vm, CPU × 2, Linux — a title — load average 4.1 3.9 3.5\n\n\
             `cargo xtask bench mcp 10`\n\n```text\np50 1 ms\n```\n"
        );
        let file = bench::prepend_entry("", &text);
        assert!(file.contains("## 2026-12-06 03:00 UTC"), "{file}");
    }
}
