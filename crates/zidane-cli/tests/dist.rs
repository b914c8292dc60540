//! The ways to install `zidane` without a Rust toolchain, run as a user would run them:
//! the release archive made by `dist/package.sh` and installed by `install.sh` from a
//! local artifact into an empty prefix, the npm packages staged and packed by
//! `npm/stage.mjs` and installed with `npm install --prefix`, and in both cases MCP
//! clients talking to the installed `zidane mcp`: raw JSON-RPC over stdio (`initialize`,
//! `tools/list`), then the official Python SDK running its scenario of
//! `tests/cli/mcp_client.py`. Both carry `zidane-worker` beside `zidane`: the archive's
//! worker answers as cargo's does, registers with a real Restate server and runs a task
//! to its exit, then drains on SIGTERM. Also the completions and man pages the archives
//! carry, the `cargo binstall` metadata against the archives' names (Windows' zips
//! included), install.ps1's settings against install.sh's, and `server.json` against the
//! MCP registry's schema. The Windows zip and npm package themselves are made and run
//! under Wine by `cargo xtask windows` (tests/wine/dist_under_wine.py).
//!
//! The binaries are this build's (`CARGO_BIN_EXE_zidane`, and the `zidane-worker` built
//! beside it, debug builds stripped for packing): the release workflow packs release
//! builds with the same scripts. Where npm, `restate-server` or the Python venv with
//! `jsonschema` (`cargo xtask ci` makes it) is missing, a test skips, saying why; under
//! `CI=true` it fails instead. Linux only: the cleanup check reads `/proc`.
#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

#[path = "dist/worker.rs"]
mod worker;

/// The binary under test.
const BIN: &str = env!("CARGO_BIN_EXE_zidane");

/// The workspace version every package names.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Longest a test waits for one answer of the server.
const WAIT: Duration = Duration::from_secs(20);

/// This machine's target as a release names it, but for glibc: the binary under test is
/// this build's.
fn host_target() -> String {
    format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
}

/// The tools `zidane mcp` always lists.
const TOOLS: [&str; 4] = ["shell", "shell_kill", "wait_task", "read_file"];

/// Where the Python venv with `jsonschema` is, when `cargo xtask ci` made it.
const DIST_VENV_ENV: &str = "ZIDANE_DIST_VENV";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// Whether a test whose `what` is missing may run: outside CI it skips, saying why.
fn available(what: &str, present: bool) -> bool {
    if present {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{what} is missing, and CI must run this test (`cargo xtask ci` installs it)"
    );
    eprintln!("skipped: {what} is missing (`cargo xtask ci` installs it)");
    false
}

fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success())
}

/// Runs a command to its end and panics, with its output, unless it succeeded.
fn run_ok(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} exited {:?}\nstdout: {}\nstderr: {}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `zidane-worker` as cargo built it, beside `zidane` (the workspace's binaries share a
/// directory).
fn cargo_worker() -> PathBuf {
    let path = Path::new(BIN).with_file_name("zidane-worker");
    assert!(
        path.is_file(),
        "{} is not built: cargo build -p zidane-restate --bin zidane-worker",
        path.display()
    );
    path
}

/// A copy of `binary` named `name` in `dir`, without its debug info (a tenth of the
/// size), as a release build ships it.
fn stripped(binary: &Path, dir: &Path, name: &str) -> PathBuf {
    let copy = dir.join(name);
    let done = Command::new("strip")
        .arg("-o")
        .arg(&copy)
        .arg(binary)
        .status()
        .is_ok_and(|status| status.success());
    if !done {
        std::fs::copy(binary, &copy).unwrap();
    }
    copy
}

/// The binaries a release ships, stripped into `dir`: `zidane` and `zidane-worker`.
struct Binaries {
    zidane: PathBuf,
    worker: PathBuf,
}

fn stripped_binaries(dir: &Path) -> Binaries {
    Binaries {
        zidane: stripped(Path::new(BIN), dir, "zidane"),
        worker: stripped(&cargo_worker(), dir, "zidane-worker"),
    }
}

/// `dist/package.sh` on `binaries`: the archive's path.
fn package(binaries: &Binaries, target: &str, out: &Path) -> PathBuf {
    run_ok(
        Command::new("sh")
            .arg(workspace().join("dist/package.sh"))
            .args(["--target", target, "--binary"])
            .arg(&binaries.zidane)
            .arg("--worker")
            .arg(&binaries.worker)
            .arg("--out")
            .arg(out),
    );
    out.join(format!("zidane-{target}.tar.gz"))
}

fn archive_listing(archive: &Path) -> Vec<String> {
    let output = run_ok(Command::new("tar").arg("-tzf").arg(archive));
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `install.sh` from a local artifact, with `home` as HOME and the binary going to
/// `bin`.
fn install_sh(archive: &Path, home: &Path, bin: &Path) -> Output {
    Command::new("sh")
        .arg(workspace().join("install.sh"))
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("ZIDANE_DATA_DIR")
        .env("ZIDANE_INSTALL_DIR", bin)
        .env("ZIDANE_ARTIFACT", archive)
        .output()
        .unwrap()
}

/// A process group of one `zidane mcp` (or a launcher that runs it), killed whole when
/// dropped, so a failed test leaves nothing behind.
struct McpProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl McpProcess {
    fn start(program: &Path, user_dir: &Path) -> Self {
        let mut child = Command::new(program)
            .arg("mcp")
            .arg("--user-dir")
            .arg(user_dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits, bounded, for the response with its id (notifications
    /// the server sends in between are passed over).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let line = self
                .lines
                .recv_timeout(WAIT)
                .unwrap_or_else(|e| panic!("no answer to {method} within {WAIT:?}: {e}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON-RPC on stdout: {line:?}: {e}"));
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// What an MCP client does first: `initialize`, `notifications/initialized`, then
    /// `tools/list`. Returns the server's name and version and the tools' names.
    fn handshake(&mut self) -> (String, Vec<String>) {
        let init = self.request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "zidane-dist-test", "version": "0" }
            }),
        );
        let info = &init["result"]["serverInfo"];
        let server = format!(
            "{} {}",
            info["name"].as_str().unwrap_or_default(),
            info["version"].as_str().unwrap_or_default()
        );
        self.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        let list = self.request(2, "tools/list", json!({}));
        let tools = list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list answered {list}"))
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect();
        (server, tools)
    }

    /// Closes stdin, as a host does at the end of a session, and waits, bounded, for the
    /// whole process group to be gone.
    fn finish(mut self) {
        drop(self.stdin.take());
        let pgid = self.child.id();
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "zidane mcp exited {status} at end of input"
                );
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "zidane mcp still runs {WAIT:?} after its stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let deadline = std::time::Instant::now() + WAIT;
        while !zidane_test_support::live_processes_in_group(pgid).is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "processes of the server's group outlive it: {:?}",
                zidane_test_support::live_processes_in_group(pgid)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for McpProcess {
    fn drop(&mut self) {
        let pgid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

/// A real client's session with the `zidane` at `program`: the server names itself and
/// this version, and lists the tools every session is offered.
fn assert_serves_mcp(program: &Path, scratch: &Path) {
    let user_dir = scratch.join("user");
    let mut server = McpProcess::start(program, &user_dir);
    let (name, tools) = server.handshake();
    assert_eq!(name, format!("zidane {VERSION}"));
    for tool in TOOLS {
        assert!(tools.iter().any(|t| t == tool), "{tool} not in {tools:?}");
    }
    server.finish();

    // And the official Python SDK, as a host would drive it: background tasks, the
    // notification on the next result, a kill, nothing left running after it leaves.
    if let Some(python) = zidane_test_support::mcp_sdk_python(&workspace()) {
        let script = workspace().join("crates/zidane-cli/tests/cli/mcp_client.py");
        let output = run_ok(
            Command::new(python)
                .arg(script)
                .arg("stdio")
                .arg(program)
                .arg(scratch.join("sdk-user"))
                .env("ZIDANE_SWEEP_ORPHANS", "off"),
        );
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.starts_with("ok "), "the Python SDK said:\n{stdout}");
    }
}

/// A value of zidane-cli's manifest in `section` (such as `package.metadata.binstall`).
fn manifest_value(section: &str, key: &str) -> Option<String> {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let body = manifest.split(&format!("[{section}]\n")).nth(1)?;
    body.lines()
        .take_while(|line| !line.starts_with('['))
        .find_map(|line| {
            let (k, v) = line.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_owned())
        })
}

/// The `[package.metadata.binstall]` values of zidane-cli's manifest.
fn binstall_value(key: &str) -> String {
    manifest_value("package.metadata.binstall", key)
        .unwrap_or_else(|| panic!("no {key} in [package.metadata.binstall]"))
}

/// A binstall template with its placeholders filled as cargo-binstall fills them for
/// `target`.
fn render_binstall(template: &str, target: &str) -> String {
    let repo = "https://github.com/zidane-rs/zidane";
    let windows = target.contains("-windows-");
    [
        ("{ repo }", repo),
        ("{ version }", VERSION),
        ("{ target }", target),
        ("{ bin }", "zidane"),
        ("{ binary-ext }", if windows { ".exe" } else { "" }),
        (
            "{ archive-suffix }",
            if windows { ".zip" } else { ".tar.gz" },
        ),
    ]
    .iter()
    .fold(template.to_owned(), |text, (key, value)| {
        text.replace(key, value)
    })
}

#[test]
fn the_archive_installs_with_install_sh_and_serves_mcp() {
    let scratch = tempfile::tempdir().unwrap();
    let binaries = stripped_binaries(scratch.path());
    let target = host_target();
    let target = target.as_str();
    let archive = package(&binaries, target, &scratch.path().join("out"));

    let listing = archive_listing(&archive);
    let top = format!("zidane-{target}");
    for file in [
        "zidane",
        "zidane-worker",
        "README.md",
        "CHANGELOG.md",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "completions/zidane.bash",
        "completions/_zidane",
        "completions/zidane.fish",
        "completions/_zidane.ps1",
        "completions/zidane.elv",
        "man/man1/zidane.1",
        "man/man1/zidane-mcp.1",
    ] {
        let path = format!("{top}/{file}");
        assert!(listing.contains(&path), "{path} not in {listing:#?}");
    }

    // What cargo-binstall downloads and where it looks for the binary inside.
    let url = render_binstall(&binstall_value("pkg-url"), target);
    assert_eq!(
        url,
        format!(
            "https://github.com/zidane-rs/zidane/releases/download/v{VERSION}/zidane-{target}.tar.gz"
        )
    );
    assert!(url.ends_with(&archive.file_name().unwrap().to_string_lossy().into_owned()));
    let bin_dir = render_binstall(&binstall_value("bin-dir"), target);
    assert!(listing.contains(&bin_dir), "{bin_dir} not in {listing:#?}");
    assert_eq!(binstall_value("pkg-fmt"), "tgz");

    // A checksum that does not match stops the install before anything is written.
    let sums = PathBuf::from(format!("{}.sha256", archive.display()));
    let good = std::fs::read_to_string(&sums).unwrap();
    let home = scratch.path().join("home");
    let bin = scratch.path().join("bin");
    std::fs::write(&sums, format!("{}  x\n", "0".repeat(64))).unwrap();
    let refused = install_sh(&archive, &home, &bin);
    assert!(!refused.status.success(), "install.sh took a bad checksum");
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("checksum mismatch"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!bin.join("zidane").exists());
    assert!(!bin.join("zidane-worker").exists());

    std::fs::write(&sums, good).unwrap();
    let installed = install_sh(&archive, &home, &bin);
    assert!(
        installed.status.success(),
        "install.sh failed: {}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let zidane = bin.join("zidane");
    let version = run_ok(Command::new(&zidane).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("zidane {VERSION}")
    );
    let worker_version = run_ok(Command::new(bin.join("zidane-worker")).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&worker_version.stdout).trim(),
        format!("zidane-worker {VERSION}")
    );
    let share = home.join(".local/share");
    for file in [
        "man/man1/zidane.1",
        "bash-completion/completions/zidane",
        "zsh/site-functions/_zidane",
        "fish/vendor_completions.d/zidane.fish",
    ] {
        assert!(
            share.join(file).is_file(),
            "install.sh did not write {file}"
        );
    }

    assert_serves_mcp(&zidane, scratch.path());
}

/// What cargo-binstall fetches on Windows is the zip dist/package.sh makes there, and
/// the binary it looks for is the one in it (`cargo xtask windows` packs that zip).
#[test]
fn binstall_finds_the_windows_zips() {
    for target in ["x86_64-pc-windows-msvc", "aarch64-pc-windows-msvc"] {
        let overrides = format!("package.metadata.binstall.overrides.{target}");
        assert_eq!(
            manifest_value(&overrides, "pkg-fmt").as_deref(),
            Some("zip"),
            "[{overrides}]"
        );
        assert_eq!(
            render_binstall(&binstall_value("pkg-url"), target),
            format!(
                "https://github.com/zidane-rs/zidane/releases/download/v{VERSION}/zidane-{target}.zip"
            )
        );
        assert_eq!(
            render_binstall(&binstall_value("bin-dir"), target),
            format!("zidane-{target}/zidane.exe")
        );
    }
}

/// install.ps1 mirrors install.sh: every setting install.sh reads, it reads too (but
/// the XDG fallback, which Windows has no use for), and it says the same things.
#[test]
fn install_ps1_takes_install_sh_settings() {
    let root = workspace();
    let sh = std::fs::read_to_string(root.join("install.sh")).unwrap();
    let ps1 = std::fs::read_to_string(root.join("install.ps1")).unwrap();
    let settings = |text: &str, prefix: &str| -> std::collections::BTreeSet<String> {
        text.match_indices(prefix)
            .map(|(at, _)| {
                text[at + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect::<String>()
            })
            .filter(|name| name.starts_with("ZIDANE_"))
            .collect()
    };
    let from_sh = settings(&sh, "${");
    let from_ps1 = settings(&ps1, "$env:");
    assert!(from_sh.len() >= 5, "{from_sh:?}");
    for name in &from_sh {
        assert!(from_ps1.contains(name), "install.ps1 ignores {name}");
    }
    assert!(from_ps1.contains("ZIDANE_NO_MODIFY_PATH"), "{from_ps1:?}");
    for said in [
        "zidane install: ",
        "checksum mismatch for ",
        "nothing installed",
        "no artifact at ",
        "no checksum at ",
        "cargo install zidane-cli",
    ] {
        assert!(sh.contains(said), "install.sh no longer says {said:?}");
        assert!(ps1.contains(said), "install.ps1 does not say {said:?}");
    }
}

#[test]
fn the_npm_package_installs_and_serves_mcp() {
    if !available("npm and node", runs("npm") && runs("node")) {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let binaries = stripped_binaries(scratch.path());
    let stage = scratch.path().join("stage");
    run_ok(
        Command::new("node")
            .arg(workspace().join("npm/stage.mjs"))
            .args(["--version", VERSION, "--out"])
            .arg(&stage)
            .arg("--pack")
            .arg("--binary")
            .arg(format!("{}={}", host_target(), binaries.zidane.display()))
            .arg("--worker")
            .arg(format!("{}={}", host_target(), binaries.worker.display())),
    );
    let packs = stage.join("packs");
    let main = packs.join(format!("zidane-mcp-{VERSION}.tgz"));
    let cpu = if cfg!(target_arch = "aarch64") {
        "arm64"
    } else {
        "x64"
    };
    let platform = packs.join(format!("zidane-linux-{cpu}-{VERSION}.tgz"));
    assert!(
        main.is_file() && platform.is_file(),
        "npm pack made {packs:?}"
    );

    // Offline: the two tarballs are all it needs; the other platforms' optional
    // packages are skipped, as npm skips them on a machine they do not fit.
    let prefix = scratch.path().join("prefix");
    run_ok(
        Command::new("npm")
            .args([
                "install",
                "--offline",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(&prefix)
            .arg(&main)
            .arg(&platform)
            .env("npm_config_cache", scratch.path().join("npm-cache")),
    );
    // Both packages carry the licenses (npm packs only what `files` names).
    for package in ["zidane-mcp", &format!("@zidane/linux-{cpu}")] {
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let path = prefix.join("node_modules").join(package).join(license);
            assert!(path.is_file(), "{} not installed", path.display());
        }
    }
    let launcher = prefix.join("node_modules/.bin/zidane");
    let version = run_ok(Command::new(&launcher).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("zidane {VERSION}")
    );
    let worker = prefix.join("node_modules/.bin/zidane-worker");
    let version = run_ok(Command::new(&worker).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("zidane-worker {VERSION}")
    );
    assert_serves_mcp(&launcher, scratch.path());
}

#[test]
fn server_json_is_valid_for_the_mcp_registry_and_names_this_release() {
    let root = workspace();
    let read = |path: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(root.join(path)).unwrap()).unwrap()
    };
    let server = read("server.json");
    let schema = read("dist/server.schema.json");
    let npm = read("npm/zidane-mcp/package.json");

    assert_eq!(server["$schema"], schema["$id"]);
    assert_eq!(server["version"], VERSION);
    let package = &server["packages"][0];
    assert_eq!(package["registryType"], "npm");
    assert_eq!(package["identifier"], npm["name"]);
    assert_eq!(package["version"], VERSION);
    assert_eq!(package["transport"]["type"], "stdio");
    // The registry checks the npm package claims the server by this name.
    assert_eq!(npm["mcpName"], server["name"]);
    assert_eq!(npm["version"], VERSION);
    for (name, version) in npm["optionalDependencies"].as_object().unwrap() {
        assert_eq!(version, VERSION, "{name}");
    }

    let venv = std::env::var_os(DIST_VENV_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/dist-venv"));
    let python = venv.join("bin/python");
    let has_jsonschema = Command::new(&python)
        .args(["-c", "import jsonschema"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !available(
        &format!("a Python venv with jsonschema at {}", venv.display()),
        has_jsonschema,
    ) {
        return;
    }
    let validate = |document: &Path| {
        Command::new(&python)
            .arg(root.join("dist/validate_json.py"))
            .arg(root.join("dist/server.schema.json"))
            .arg(document)
            .output()
            .unwrap()
    };
    let valid = validate(&root.join("server.json"));
    assert!(
        valid.status.success(),
        "server.json is not valid: {}",
        String::from_utf8_lossy(&valid.stderr)
    );

    // The same check refuses what the registry refuses.
    let scratch = tempfile::tempdir().unwrap();
    let mut bad = server.clone();
    bad["description"] = json!("x".repeat(101));
    bad["packages"][0]["version"] = json!("latest");
    let bad_path = scratch.path().join("server.json");
    std::fs::write(&bad_path, bad.to_string()).unwrap();
    let refused = validate(&bad_path);
    let errors = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "a bad server.json passed");
    assert!(
        errors.contains("description") && errors.contains("packages/0/version"),
        "{errors}"
    );
}

#[test]
fn completions_and_man_pages_come_from_the_binary() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let output = run_ok(Command::new(BIN).args(["completions", shell]));
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(
            script.contains("zidane") && script.contains("mcp") && script.contains("resume"),
            "{shell} completions:\n{script}"
        );
    }
    let bash = run_ok(Command::new(BIN).args(["completions", "bash"]));
    let scratch = tempfile::tempdir().unwrap();
    let script = scratch.path().join("zidane.bash");
    std::fs::write(&script, bash.stdout).unwrap();
    run_ok(Command::new("bash").arg("-n").arg(&script));

    let page = run_ok(Command::new(BIN).arg("man"));
    let page = String::from_utf8(page.stdout).unwrap();
    assert!(page.contains(".TH zidane 1"), "{page}");
    assert!(page.contains("zidane\\-mcp(1)"), "{page}");

    let pages = scratch.path().join("man");
    run_ok(Command::new(BIN).arg("man").arg("--out-dir").arg(&pages));
    let mut names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "zidane-attach.1",
            "zidane-clean.1",
            "zidane-doctor.1",
            "zidane-kill.1",
            "zidane-logs.1",
            "zidane-mcp.1",
            "zidane-ps.1",
            "zidane-replay.1",
            "zidane-sessions.1",
            "zidane-top.1",
            "zidane-wait.1",
            "zidane.1",
        ]
    );
    let mcp_page = std::fs::read_to_string(pages.join("zidane-mcp.1")).unwrap();
    assert!(mcp_page.contains("user\\-dir"), "{mcp_page}");

    // For packagers: left out of the help a user reads.
    let help = run_ok(Command::new(BIN).arg("--help"));
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(
        !help.contains("completions") && !help.contains("  man"),
        "{help}"
    );
}
