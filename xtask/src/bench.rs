//! `cargo xtask bench`: the process layer's own benchmark driver
//! (`crates/zidane-process/benches/driver.rs`, speaking the bench protocol) and the
//! agent ops of `crates/zidane/benches/agent_driver.rs`, one run of every op, printed as
//! a table with the agent ops' targets and prepended to
//! `crates/zidane-process/benches/RESULTS.md`.
//! With `--peers`, and only where the reference peers' harness is present
//! (`../shared/bench/run.sh`, or `$ZIDANE_BENCH_PEERS`), the side-by-side comparison
//! runs after it: the driver on its fast and on its portable path
//! (`ZIDANE_PROCESS_PATH=portable`), each also sandboxed (`ZIDANE_BENCH_SANDBOX`), beside
//! the peers and the floor, its table and the sandbox's targets prepended to the results
//! file too.
//! `cargo xtask bench <measure>` records one of the measurements outside the drivers
//! (`record.rs`) into the same file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

/// The results file, relative to the workspace root: newest run on top.
pub(crate) const RESULTS_FILE: &str = "crates/zidane-process/benches/RESULTS.md";

/// The first lines of the results file; runs follow, newest first.
const RESULTS_HEADER: &str = "# Benchmark driver results\n\nWritten by `cargo xtask bench`, newest run first. \
Each row is one run of one op of `crates/zidane-process/benches/driver.rs` (the protocol's \
fields: times in µs unless named otherwise), or of the agent ops `wake`, `idle`, `ready`, `event`, \
`event-wake` and `event-cost` of \
`crates/zidane/benches/agent_driver.rs`; sections named after another measurement were \
recorded by `cargo xtask bench <measure>` (`xtask/src/record.rs`) and carry its command and output.\n";

/// Where the peers' harness is looked for when `$ZIDANE_BENCH_PEERS` does not say.
const PEERS_SCRIPT: &str = "../shared/bench/run.sh";

/// Every op of the protocol with the size of one quick run (a minute or so on two
/// cores), then the driver's own ops: a SIGKILLed host's processes ended by its
/// lifeline (its rounds' percentiles), input and terminals (a line written → back in
/// the log, on a pipe and in a terminal; a terminal task's start), run by the process
/// layer's driver.
const OPS: &[(&str, &str)] = &[
    ("spawn", "300"),
    ("roundtrip", "200"),
    ("throughput", "67108864"),
    ("interleave", "20000"),
    ("kill", "30"),
    ("concurrent", "100"),
    ("escape", "10"),
    ("orphan", "10"),
    ("lifeline", "20"),
    ("input", "2000"),
    ("input-tty", "2000"),
    ("spawn-tty", "300"),
];

/// The ops only a whole agent can show, run by the facade's `agent_driver` in the same
/// run (`wake` is compared with `roundtrip` above).
const AGENT_OPS: &[(&str, &str)] = &[
    ("wake", "200"),
    ("idle", "10"),
    ("ready", "50"),
    ("event", "200"),
    ("event-wake", "20"),
    ("event-cost", "1024"),
];

/// The targets of the agent ops: `wake` p50 within this much of `roundtrip` p50 (µs),
/// `idle` CPU over its window (ms), `ready` p50 after the line is written (µs); and
/// `event-cost`'s throughput ratio below.
const WAKE_OVER_ROUNDTRIP_US: f64 = 1000.0;
const IDLE_CPU_MS: f64 = 20.0;
const READY_P50_US: f64 = 2000.0;
/// The least throughput of a task whose log is followed for a pattern that never
/// matches, over the same task's without (`event-cost`'s `ratio`).
const EVENT_COST_RATIO: f64 = 0.9;

/// The most a sandbox may add to a start's p50 (µs), in the side-by-side run: the
/// sandboxed driver's `spawn` p50 median over the plain one's on the same path.
const SANDBOX_SPAWN_OVER_US: f64 = 2000.0;

/// The sandbox the side-by-side run's sandboxed drivers run their tasks in (the
/// driver's `ZIDANE_BENCH_SANDBOX`, `benches/driver/host.rs`).
const SANDBOX_VARIANT: &str = "ZIDANE_BENCH_SANDBOX=workspace-write";

/// The side-by-side run's drivers compared with and without the sandbox: (plain,
/// sandboxed) labels, one pair per process path.
const SANDBOX_PAIRS: &[(&str, &str)] = &[
    ("zidane", "zidane-sandbox"),
    ("zidane-portable", "zidane-portable-sandbox"),
];

/// Runs the driver, prints its table, writes it to the results file; then the peers'
/// comparison if asked for and present.
pub fn bench(args: &[String]) -> Result<(), String> {
    if let Some(measure) = args.first().and_then(|name| crate::record::find(name)) {
        return crate::record::record(measure, &args[1..]);
    }
    let peers = args.iter().any(|arg| arg == "--peers");
    if let Some(unknown) = args.iter().find(|arg| *arg != "--peers") {
        return Err(format!(
            "unknown argument {unknown:?}; usage: cargo xtask bench [--peers | mcp [CALLS] | terminal [--release] | durable [ROUNDS] | fleet [ROUNDS] | hosts | detached [TASKS]]"
        ));
    }
    let root = workspace_root()?;
    let started = Instant::now();
    let driver = build_driver(&root, "zidane-process", "driver")?;
    let agent_driver = build_driver(&root, "zidane", "agent_driver")?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    let runs = OPS
        .iter()
        .map(|op| (&driver, op))
        .chain(AGENT_OPS.iter().map(|op| (&agent_driver, op)));
    for (driver, (op, arg)) in runs {
        eprintln!("==> {} {op} {arg}", driver.display());
        let row = run_op(driver, op, arg)?;
        if row.get("ok") != Some(&Value::Bool(true)) {
            failed.push(format!(
                "{op}: {}",
                row.get("error").unwrap_or(&Value::Null)
            ));
        }
        rows.push((op.to_string(), arg.to_string(), row));
    }
    let mut table = render_table(&rows);
    table.push_str(&agent_targets(&rows));
    println!("{table}");
    let entry = format!(
        "## {} — {}\n\n`cargo xtask bench`\n\n{table}\n",
        utc_now(),
        machine()
    );
    prepend_to_results(&root, &entry)?;
    println!(
        "xtask bench: {} ops in {:.1?}; written to {RESULTS_FILE}",
        rows.len(),
        started.elapsed()
    );
    if peers {
        compare_with_peers(&root, &driver)?;
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("checks failed: {}", failed.join("; ")))
    }
}

/// The agent ops against their targets, one line each (empty if they did not run).
fn agent_targets(rows: &[(String, String, Value)]) -> String {
    let field = |op: &str, name: &str| {
        rows.iter()
            .find(|(o, _, _)| o == op)
            .and_then(|(_, _, row)| row.get(name)?.as_f64())
    };
    let verdict = |met: bool| if met { "met" } else { "**not met**" };
    let mut out = String::from("\n");
    if let (Some(wake), Some(roundtrip)) = (field("wake", "p50_us"), field("roundtrip", "p50_us")) {
        let over = wake - roundtrip;
        out.push_str(&format!(
            "- wake p50 − roundtrip p50 = {over:.1} µs (target ≤ {WAKE_OVER_ROUNDTRIP_US} µs): {}\n",
            verdict(over <= WAKE_OVER_ROUNDTRIP_US)
        ));
    }
    if let Some(cpu) = field("idle", "cpu_ms") {
        out.push_str(&format!(
            "- idle CPU = {cpu} ms (target ≤ {IDLE_CPU_MS} ms): {}\n",
            verdict(cpu <= IDLE_CPU_MS)
        ));
    }
    if let Some(ready) = field("ready", "p50_us") {
        out.push_str(&format!(
            "- ready p50 = {ready} µs after the line (target ≤ {READY_P50_US} µs): {}\n",
            verdict(ready <= READY_P50_US)
        ));
    }
    if let Some(ratio) = field("event-cost", "ratio") {
        out.push_str(&format!(
            "- event-cost throughput with a never-matching `notify_on` = {ratio}x of none (target ≥ {EVENT_COST_RATIO}x): {}\n",
            verdict(ratio >= EVENT_COST_RATIO)
        ));
    }
    out
}

/// Builds a driver (bench profile) and returns its executable.
fn build_driver(root: &Path, package: &str, bench: &str) -> Result<PathBuf, String> {
    let output = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "bench",
            "-p",
            package,
            "--bench",
            bench,
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !output.status.success() {
        return Err(format!("building the driver failed: {}", output.status));
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["target"]["name"] == bench)
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| format!("cargo built no {bench} executable"))
}

/// One op: the driver's JSON line (also on a failed check, which it reports as
/// `"ok": false`).
fn run_op(driver: &Path, op: &str, arg: &str) -> Result<Value, String> {
    let output = Command::new(driver)
        .args([op, arg])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", driver.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).map_err(|e| {
        format!(
            "driver {op} {arg} gave no JSON line ({}): {e}: {stdout:?}",
            output.status
        )
    })
}

/// A Markdown table: one row per op, its fields by name.
fn render_table(rows: &[(String, String, Value)]) -> String {
    let mut table = String::from("| op | arg | ok | results |\n|---|---|---|---|\n");
    for (op, arg, row) in rows {
        let ok = if row.get("ok") == Some(&Value::Bool(true)) {
            "yes"
        } else {
            "**no**"
        };
        let mut results = row
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(key, _)| !matches!(key.as_str(), "op" | "ok"))
            .map(|(key, value)| match value {
                Value::String(text) => format!("{key}={text}"),
                other => format!("{key}={other}"),
            })
            .collect::<Vec<_>>();
        results.sort();
        let results = results.join(", ");
        table.push_str(&format!("| {op} | {arg} | {ok} | {results} |\n"));
    }
    table
}

/// The results file with `entry` as its newest run: after the header, before the rest.
/// Whatever stands before the first run is the header, rewritten as it reads now.
pub(crate) fn prepend_entry(old: &str, entry: &str) -> String {
    let runs = if old.starts_with("## ") {
        old
    } else {
        old.find("\n## ").map_or("", |at| &old[at + 1..])
    };
    if runs.is_empty() {
        format!("{RESULTS_HEADER}\n{entry}")
    } else {
        format!("{RESULTS_HEADER}\n{entry}\n{runs}")
    }
}

/// The side-by-side run against the reference peers, only where they are present: the
/// process layer's driver on its fast path and on its portable one
/// (`ZIDANE_PROCESS_PATH=portable`), each also with every task sandboxed
/// ([`SANDBOX_VARIANT`]), beside the peers and the floor, in the same interleaved rounds;
/// the harness's table and the sandbox's targets (from its raw rows, `SAVE`) are printed
/// and prepended to the results file.
fn compare_with_peers(root: &Path, driver: &Path) -> Result<(), String> {
    let script = std::env::var_os("ZIDANE_BENCH_PEERS")
        .map_or_else(|| root.join(PEERS_SCRIPT), PathBuf::from);
    if !script.exists() {
        println!(
            "xtask bench: no peers at {} (set ZIDANE_BENCH_PEERS to their run.sh); comparison skipped",
            script.display()
        );
        return Ok(());
    }
    let driver = driver.display().to_string();
    let drivers = [
        "node".to_owned(),
        format!("zidane={driver}"),
        format!("zidane-portable=env ZIDANE_PROCESS_PATH=portable {driver}"),
        format!("zidane-sandbox=env {SANDBOX_VARIANT} {driver}"),
        format!(
            "zidane-portable-sandbox=env ZIDANE_PROCESS_PATH=portable {SANDBOX_VARIANT} {driver}"
        ),
    ];
    // The harness's raw rows, for the sandbox's targets: where `SAVE` says, else beside
    // the other temporary files.
    let save = std::env::var_os("SAVE").unwrap_or_else(|| {
        std::env::temp_dir()
            .join(format!("zidane-bench-peers-{}", std::process::id()))
            .into_os_string()
    });
    let output = Command::new(&script)
        .current_dir(root)
        .args(&drivers)
        .env("SAVE", &save)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let table = String::from_utf8_lossy(&output.stdout);
    println!("{table}");
    if !output.status.success() {
        return Err(format!("the peers' harness failed: {}", output.status));
    }
    let mut raw = PathBuf::from(&save).into_os_string();
    raw.push(".jsonl");
    let rows: Vec<Value> = std::fs::read_to_string(&raw)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let targets = sandbox_targets(&rows);
    println!("{targets}");
    let entry = format!(
        "## {} — {} — side by side with the peers\n\n`cargo xtask bench --peers`: `{} {}`\n\n```text\n{}\n```\n{targets}",
        utc_now(),
        machine(),
        PEERS_SCRIPT,
        drivers
            .iter()
            .map(|d| format!("{d:?}"))
            .collect::<Vec<_>>()
            .join(" "),
        table.trim_end()
    );
    prepend_to_results(root, &entry)
}

/// The median over the harness's rounds of `metric` of `op` (any argument when `arg`
/// is `None`) for `driver`, and half its min–max range as a fraction of it (the
/// harness's `±`): `None` when no round gave it.
fn harness_median(
    rows: &[Value],
    driver: &str,
    op: &str,
    arg: Option<&str>,
    metric: &str,
) -> Option<(f64, f64)> {
    let mut values: Vec<f64> = rows
        .iter()
        .filter(|row| row["driver"] == driver && row["op"] == op)
        .filter(|row| arg.is_none_or(|arg| row["arg"] == arg))
        .filter_map(|row| row["result"][metric].as_f64())
        .collect();
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = match n {
        0 => return None,
        _ if n % 2 == 1 => values[n / 2],
        _ => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    };
    let spread = if median == 0.0 {
        0.0
    } else {
        (values[n - 1] - values[0]) / 2.0 / median
    };
    Some((median, spread))
}

/// The sandbox's targets from the side-by-side run's raw rows (the harness's `SAVE`
/// lines), one line per process path and op: a sandboxed start's p50 over a plain one's
/// (target ≤ [`SANDBOX_SPAWN_OVER_US`]), its start → exit told (no target: bubblewrap
/// builds the sandbox before the shell runs) and its 1 GiB throughput, which should
/// lose nothing beyond the run's noise (the larger `±` of the two). Empty without rows.
fn sandbox_targets(rows: &[Value]) -> String {
    let verdict = |met: bool| if met { "met" } else { "**not met**" };
    let mut out = String::new();
    for (plain, sandboxed) in SANDBOX_PAIRS {
        let both = |op: &str, arg: Option<&str>, metric: &str| {
            Some((
                harness_median(rows, plain, op, arg, metric)?,
                harness_median(rows, sandboxed, op, arg, metric)?,
            ))
        };
        if let Some(((bare, _), (boxed, _))) = both("spawn", None, "p50_us") {
            let over = boxed - bare;
            out.push_str(&format!(
                "- {sandboxed} spawn p50 − {plain} spawn p50 = {over:.1} µs (target ≤ {SANDBOX_SPAWN_OVER_US} µs): {}\n",
                verdict(over <= SANDBOX_SPAWN_OVER_US)
            ));
        }
        if let Some(((bare, _), (boxed, _))) = both("roundtrip", None, "p50_us") {
            out.push_str(&format!(
                "- {sandboxed} roundtrip p50 − {plain} roundtrip p50 = {:.1} µs (no target)\n",
                boxed - bare
            ));
        }
        if let Some(((bare, bare_spread), (boxed, boxed_spread))) =
            both("throughput", Some("1073741824"), "mib_per_s")
        {
            let ratio = boxed / bare;
            let noise = bare_spread.max(boxed_spread);
            out.push_str(&format!(
                "- {sandboxed} 1 GiB throughput = {ratio:.2}x {plain}'s MiB/s (target: no loss beyond the run's noise, ±{:.0}%): {}\n",
                noise * 100.0,
                verdict(ratio >= 1.0 - noise)
            ));
        }
    }
    if out.is_empty() {
        out
    } else {
        format!("\n{out}")
    }
}

/// Writes `entry` into the results file as its newest run: the one way every recorded
/// measurement reaches it.
pub(crate) fn prepend_to_results(root: &Path, entry: &str) -> Result<(), String> {
    let results = root.join(RESULTS_FILE);
    let old = std::fs::read_to_string(&results).unwrap_or_default();
    std::fs::write(&results, prepend_entry(&old, entry))
        .map_err(|e| format!("cannot write {}: {e}", results.display()))
}

/// The workspace root: the parent of this crate's directory.
pub fn workspace_root() -> Result<PathBuf, String> {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_owned)
        .ok_or_else(|| "xtask has no parent directory".to_owned())
}

/// `2026-05-23 02:41 UTC`, from `date`; `unknown date` without it.
pub(crate) fn utc_now() -> String {
    command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]).unwrap_or_else(|| "unknown date".into())
}

/// The machine: host name, CPU model and count, kernel.
pub(crate) fn machine() -> String {
    let host = command_line("uname", &["-n"]).unwrap_or_default();
    let kernel = command_line("uname", &["-sr"]).unwrap_or_default();
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{host}, {cpu} × {cores}, {kernel}")
}

/// The first line a command prints, if it runs and succeeds.
fn command_line(program: &str, args: &[&str]) -> Option<String> {
    let output = Command::new(program).args(args).output().ok()?;
    output.status.success().then(|| {
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_op_and_flags_failures() {
        let rows = vec![
            (
                "spawn".to_owned(),
                "300".to_owned(),
                serde_json::json!({"op": "spawn", "ok": true, "n": 300, "p50_us": 41.5}),
            ),
            (
                "kill".to_owned(),
                "30".to_owned(),
                serde_json::json!({"op": "kill", "ok": false, "survivors": 1, "error": "a survivor"}),
            ),
        ];
        assert_eq!(
            render_table(&rows),
            "| op | arg | ok | results |\n|---|---|---|---|\n\
             | spawn | 300 | yes | n=300, p50_us=41.5 |\n\
             | kill | 30 | **no** | error=a survivor, survivors=1 |\n"
        );
    }

    #[test]
    fn the_agent_ops_are_checked_against_their_targets() {
        let row = |op: &str, fields: Value| (op.to_owned(), String::new(), fields);
        let rows = vec![
            row("roundtrip", serde_json::json!({ "p50_us": 900.0 })),
            row("wake", serde_json::json!({ "p50_us": 1400.0 })),
            row("idle", serde_json::json!({ "cpu_ms": 25.0 })),
            row("ready", serde_json::json!({ "p50_us": 300.0 })),
            row("event-cost", serde_json::json!({ "ratio": 0.85 })),
        ];
        let text = agent_targets(&rows);
        assert!(
            text.contains("wake p50 − roundtrip p50 = 500.0 µs (target ≤ 1000 µs): met"),
            "{text}"
        );
        assert!(
            text.contains("idle CPU = 25 ms (target ≤ 20 ms): **not met**"),
            "{text}"
        );
        assert!(
            text.contains("ready p50 = 300 µs after the line (target ≤ 2000 µs): met"),
            "{text}"
        );
        assert!(
            text.contains("= 0.85x of none (target ≥ 0.9x): **not met**"),
            "{text}"
        );
    }

    #[test]
    fn the_sandboxed_drivers_are_checked_against_the_plain_ones() {
        let row = |driver: &str, op: &str, arg: &str, result: Value| serde_json::json!({"driver": driver, "op": op, "arg": arg, "result": result});
        let rows = vec![
            row(
                "zidane",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 400.0}),
            ),
            row(
                "zidane",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 600.0}),
            ),
            row(
                "zidane-sandbox",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 1500.0}),
            ),
            row(
                "zidane-sandbox",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 1700.0}),
            ),
            row(
                "zidane",
                "roundtrip",
                "300",
                serde_json::json!({"p50_us": 900.0}),
            ),
            row(
                "zidane-sandbox",
                "roundtrip",
                "300",
                serde_json::json!({"p50_us": 4900.0}),
            ),
            row(
                "zidane",
                "throughput",
                "1073741824",
                serde_json::json!({"mib_per_s": 1000.0}),
            ),
            row(
                "zidane",
                "throughput",
                "1073741824",
                serde_json::json!({"mib_per_s": 800.0}),
            ),
            row(
                "zidane",
                "throughput",
                "67108864",
                serde_json::json!({"mib_per_s": 10.0}),
            ),
            row(
                "zidane-sandbox",
                "throughput",
                "1073741824",
                serde_json::json!({"mib_per_s": 850.0}),
            ),
            row(
                "zidane-portable",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 500.0}),
            ),
            row(
                "zidane-portable-sandbox",
                "spawn",
                "500",
                serde_json::json!({"p50_us": 2600.0}),
            ),
        ];
        let text = sandbox_targets(&rows);
        assert!(
            text.contains(
                "- zidane-sandbox spawn p50 − zidane spawn p50 = 1100.0 µs (target ≤ 2000 µs): met"
            ),
            "{text}"
        );
        assert!(
            text.contains("- zidane-sandbox roundtrip p50 − zidane roundtrip p50 = 4000.0 µs"),
            "{text}"
        );
        // 850 over a median of 900 (±11%) is within the noise; the 64 MiB row is not counted.
        assert!(
            text.contains(
                "= 0.94x zidane's MiB/s (target: no loss beyond the run's noise, ±11%): met"
            ),
            "{text}"
        );
        assert!(
            text.contains("- zidane-portable-sandbox spawn p50 − zidane-portable spawn p50 = 2100.0 µs (target ≤ 2000 µs): **not met**"),
            "{text}"
        );
        assert_eq!(sandbox_targets(&[]), "");
    }

    #[test]
    fn runs_are_prepended_newest_first_under_one_header() {
        let first = prepend_entry("", "## run 1\n");
        assert_eq!(first, format!("{RESULTS_HEADER}\n## run 1\n"));
        let second = prepend_entry(&first, "## run 2\n");
        assert_eq!(second, format!("{RESULTS_HEADER}\n## run 2\n\n## run 1\n"));
        assert_eq!(second.matches("# Benchmark driver results").count(), 1);
        let old_header = "# Benchmark driver results\n\nAn older header.\n\n## run 1\n";
        assert_eq!(
            prepend_entry(old_header, "## run 2\n"),
            format!("{RESULTS_HEADER}\n## run 2\n\n## run 1\n")
        );
    }
}
