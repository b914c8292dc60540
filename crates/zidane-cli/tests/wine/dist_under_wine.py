"""The Windows release as a user gets it, checked under Wine: `cargo xtask windows` runs
it on the zidane.exe it built (x86_64-pc-windows-gnu).

    python dist_under_wine.py <workspace> <zidane.exe> <zidane-worker.exe> <host zidane> <scratch dir> [<node.exe>]

- the zip: dist/package.sh packs zidane.exe and zidane-worker.exe (the completions and
  man pages made by the host's zidane, as the release workflow makes them), the zip
  holds what a release zip holds and its .sha256 matches; unpacked into an empty
  folder, the zidane.exe and zidane-worker.exe in it answer `--version`, and the Python
  MCP SDK gets through a handshake with its `zidane mcp` (mcp_under_wine.py's
  `handshake`);
- npm: npm/stage.mjs stages and packs `@zidane/win32-x64` and `zidane-mcp` with the same
  two binaries; the tarballs and manifests are what npm on Windows installs (os, cpu,
  bin, optionalDependencies); installed together for win32 x64, and where a Windows
  node.exe is given, the launchers run by it under Wine answer `--version`, zidane's
  passes on a failing exit code and serves the same MCP handshake.

What only Windows confirms: the MSVC build, install.ps1, npm's own install on Windows
(its .cmd shims) and Ctrl+C in a console; the release workflow runs those on Windows
runners. Exits non-zero on any failure.
"""

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile

import anyio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_under_wine  # noqa: E402  (beside this file)

TARGET = "x86_64-pc-windows-gnu"

# What a release zip holds under zidane-<target>/.
ZIP_FILES = {
    "zidane.exe",
    "zidane-worker.exe",
    "README.md",
    "CHANGELOG.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "completions/_zidane.ps1",
    "completions/zidane.bash",
    "completions/_zidane",
    "completions/zidane.fish",
    "completions/zidane.elv",
    "man/man1/zidane.1",
    "man/man1/zidane-mcp.1",
}

# The longest one Wine program here may take.
WAIT = 120


def run(*args: str, cwd: str | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=WAIT)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}")
    return done.stdout


def version(workspace: str) -> str:
    with open(os.path.join(workspace, "Cargo.toml"), "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


def check_zip(workspace: str, exe: str, worker: str, host: str, scratch: str, want: str) -> None:
    out = os.path.join(scratch, "out")
    run(
        "sh", os.path.join(workspace, "dist/package.sh"), "--target", TARGET, "--binary", exe, "--worker", worker,
        "--out", out, "--assets-from", host,
    )
    name = f"zidane-{TARGET}"
    archive = os.path.join(out, f"{name}.zip")
    with zipfile.ZipFile(archive) as z:
        listed = set(z.namelist())
    missing = {f"{name}/{f}" for f in ZIP_FILES} - listed
    assert not missing, f"{archive} lacks {sorted(missing)}; it holds {sorted(listed)}"
    with open(f"{archive}.sha256") as f:
        expected, file = f.read().split()
    with open(archive, "rb") as f:
        actual = hashlib.sha256(f.read()).hexdigest()
    assert (expected, file) == (actual, f"{name}.zip"), (expected, file, actual)

    # As a user unpacks it: into an empty folder, then run from there.
    unpacked = os.path.join(scratch, "unpacked")
    os.makedirs(unpacked)
    with zipfile.ZipFile(archive) as z:
        z.extractall(unpacked)
    installed = os.path.join(unpacked, name, "zidane.exe")
    answered = run("wine", installed, "--version").strip()
    assert answered == f"zidane {want}", answered
    answered = run("wine", os.path.join(unpacked, name, "zidane-worker.exe"), "--version").strip()
    assert answered == f"zidane-worker {want}", answered
    server = anyio.run(mcp_under_wine.handshake, installed, os.path.join(scratch, "zip-session"))
    assert server == f"zidane {want}", server
    print(
        f"ok the zip: {len(listed)} files, unpacked zidane.exe answers --version and an MCP handshake, "
        "zidane-worker.exe --version"
    )


def tarball_manifest(pack: str) -> tuple[set[str], dict]:
    with tarfile.open(pack) as t:
        names = set(t.getnames())
        manifest = json.load(t.extractfile("package/package.json"))
    return names, manifest


def check_npm(workspace: str, exe: str, worker: str, scratch: str, want: str, node: str | None) -> None:
    stage = os.path.join(scratch, "npm")
    run(
        "node", os.path.join(workspace, "npm/stage.mjs"), "--version", want, "--out", stage, "--pack",
        "--binary", f"{TARGET}={exe}", "--worker", f"{TARGET}={worker}",
    )
    packs = os.path.join(stage, "packs")
    main = os.path.join(packs, f"zidane-mcp-{want}.tgz")
    platform = os.path.join(packs, f"zidane-win32-x64-{want}.tgz")

    names, manifest = tarball_manifest(platform)
    assert {"package/bin/zidane.exe", "package/bin/zidane-worker.exe"} <= names, names
    assert manifest["name"] == "@zidane/win32-x64", manifest
    assert manifest["version"] == want, manifest
    assert manifest["os"] == ["win32"] and manifest["cpu"] == ["x64"], manifest
    assert manifest["files"] == ["bin/zidane.exe", "bin/zidane-worker.exe", "LICENSE-MIT", "LICENSE-APACHE"], manifest
    assert {"package/LICENSE-MIT", "package/LICENSE-APACHE"} <= names, names
    for packed_name, staged in (("zidane.exe", exe), ("zidane-worker.exe", worker)):
        with tarfile.open(platform) as t:
            packed = t.extractfile(f"package/bin/{packed_name}").read()
        with open(staged, "rb") as f:
            assert packed == f.read(), f"the packed {packed_name} is not the one staged"

    names, manifest = tarball_manifest(main)
    assert {"package/bin/zidane.js", "package/bin/zidane-worker.js", "package/bin/launch.js"} <= names, names
    assert {"package/LICENSE-MIT", "package/LICENSE-APACHE"} <= names, names
    assert manifest["bin"] == {"zidane": "bin/zidane.js", "zidane-worker": "bin/zidane-worker.js"}, manifest
    assert "win32" in manifest["os"], manifest
    assert manifest["optionalDependencies"].get("@zidane/win32-x64") == want, manifest

    # npm refuses a package of another platform named outright: --force, since this
    # install is for the Windows side. Offline: the two tarballs are all it needs.
    prefix = os.path.join(scratch, "prefix")
    run(
        "npm", "install", "--offline", "--force", "--os", "win32", "--cpu", "x64", "--no-audit", "--no-fund",
        "--cache", os.path.join(scratch, "npm-cache"), "--prefix", prefix, main, platform,
    )
    launcher = os.path.join(prefix, "node_modules", "zidane-mcp", "bin", "zidane.js")
    worker_launcher = os.path.join(prefix, "node_modules", "zidane-mcp", "bin", "zidane-worker.js")
    binary = os.path.join(prefix, "node_modules", "@zidane", "win32-x64", "bin", "zidane.exe")
    assert os.path.isfile(launcher) and os.path.isfile(worker_launcher) and os.path.isfile(binary), os.listdir(prefix)
    if node is None:
        print("ok npm: the win32 package and zidane-mcp pack and install; no Windows node.exe given, the launcher not run")
        return

    # Node 20 refuses Wine's reported Windows version unless told to go on.
    os.environ["NODE_SKIP_PLATFORM_CHECK"] = "1"
    answered = run("wine", node, launcher, "--version").strip()
    assert answered == f"zidane {want}", answered
    answered = run("wine", node, worker_launcher, "--version").strip()
    assert answered == f"zidane-worker {want}", answered
    refused = subprocess.run(["wine", node, launcher, "no-such-command"], capture_output=True, text=True, timeout=WAIT)
    assert refused.returncode == 2, (refused.returncode, refused.stderr)
    assert "no-such-command" in refused.stderr, refused.stderr
    server = anyio.run(mcp_under_wine.handshake, launcher, os.path.join(scratch, "npm-session"), (node,))
    assert server == f"zidane {want}", server
    print(
        "ok npm: the launchers under Wine's node.exe run zidane.exe (--version, its exit code, an MCP handshake) "
        "and zidane-worker.exe (--version)"
    )


def main() -> None:
    if len(sys.argv) not in (6, 7):
        raise SystemExit(__doc__)
    workspace, exe, worker, host, scratch = sys.argv[1:6]
    node = sys.argv[6] if len(sys.argv) == 7 else None
    want = version(workspace)
    check_zip(workspace, exe, worker, host, scratch, want)
    check_npm(workspace, exe, worker, scratch, want, node)


if __name__ == "__main__":
    main()
