#!/usr/bin/env node
// Stages the npm packages of a release in a directory and, with --pack, packs them with
// `npm pack`: the main package `zidane-mcp` (the `zidane` and `zidane-worker` launchers,
// its version and its optionalDependencies set to the release's) and one platform
// package per target (`@zidane/<os>-<cpu>`, holding that target's binaries as
// `bin/zidane` and `bin/zidane-worker`, `.exe` on Windows, installed by npm only on its
// os and cpu). Every --binary needs the --worker of the same target.
// The release workflow and the dist tests both run it, so what is tested is what ships.
//
// usage: node npm/stage.mjs --version <semver> --out <dir> [--pack]
//                           [--binary <target-triple>=<path> --worker <target-triple>=<path>]...
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const npmDir = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(npmDir);

/**
 * The platform package of each target triple the release builds, and of those built
 * here: the host's gnu one, and Windows' gnu one (`cargo xtask windows`).
 */
const PLATFORMS = {
  "x86_64-unknown-linux-musl": { os: "linux", cpu: "x64" },
  "x86_64-unknown-linux-gnu": { os: "linux", cpu: "x64" },
  "aarch64-unknown-linux-musl": { os: "linux", cpu: "arm64" },
  "aarch64-unknown-linux-gnu": { os: "linux", cpu: "arm64" },
  "x86_64-apple-darwin": { os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { os: "darwin", cpu: "arm64" },
  "x86_64-pc-windows-msvc": { os: "win32", cpu: "x64" },
  "x86_64-pc-windows-gnu": { os: "win32", cpu: "x64" },
  "aarch64-pc-windows-msvc": { os: "win32", cpu: "arm64" },
};

/** A binary's name in a platform package: the launcher looks for the same. */
function binaryName(os, name) {
  return os === "win32" ? `${name}.exe` : name;
}

/** `<target-triple>=<path>` of `flag`, split. */
function targetAndPath(flag, value) {
  const at = value.indexOf("=");
  if (at < 0) throw new Error(`${flag} wants <target-triple>=<path>, got ${value}`);
  return { target: value.slice(0, at), file: value.slice(at + 1) };
}

function parseArgs(argv) {
  const args = { binaries: [], workers: new Map(), pack: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--pack") {
      args.pack = true;
    } else if (flag === "--version" || flag === "--out" || flag === "--binary" || flag === "--worker") {
      const value = argv[++i];
      if (value === undefined) throw new Error(`${flag} needs a value`);
      if (flag === "--binary") {
        args.binaries.push(targetAndPath(flag, value));
      } else if (flag === "--worker") {
        const { target, file } = targetAndPath(flag, value);
        args.workers.set(target, file);
      } else {
        args[flag.slice(2)] = value;
      }
    } else {
      throw new Error(`unknown argument ${flag}`);
    }
  }
  if (!args.version || !args.out) {
    throw new Error(
      "usage: node npm/stage.mjs --version <semver> --out <dir> [--pack] " +
        "[--binary <triple>=<path> --worker <triple>=<path>]...",
    );
  }
  // Each platform package carries both binaries: a worker without its zidane, or the
  // reverse, is a mistake of the caller.
  const targets = new Set(args.binaries.map((binary) => binary.target));
  for (const binary of args.binaries) {
    binary.worker = args.workers.get(binary.target);
    if (binary.worker === undefined) {
      throw new Error(`--binary ${binary.target} has no --worker ${binary.target}=<path>`);
    }
  }
  for (const target of args.workers.keys()) {
    if (!targets.has(target)) throw new Error(`--worker ${target} has no --binary ${target}=<path>`);
  }
  return args;
}

function writeJson(file, value) {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

function copyLicenses(dir) {
  for (const file of ["LICENSE-MIT", "LICENSE-APACHE"]) {
    copyFileSync(path.join(root, file), path.join(dir, file));
  }
}

function stageMain(version, out) {
  const dir = path.join(out, "zidane-mcp");
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(npmDir, "zidane-mcp", "package.json"), "utf8"));
  manifest.version = version;
  for (const name of Object.keys(manifest.optionalDependencies)) {
    manifest.optionalDependencies[name] = version;
  }
  writeJson(path.join(dir, "package.json"), manifest);
  for (const [file, mode] of [["zidane.js", 0o755], ["zidane-worker.js", 0o755], ["launch.js", 0o644]]) {
    copyFileSync(path.join(npmDir, "zidane-mcp", "bin", file), path.join(dir, "bin", file));
    chmodSync(path.join(dir, "bin", file), mode);
  }
  copyFileSync(path.join(npmDir, "zidane-mcp", "README.md"), path.join(dir, "README.md"));
  copyLicenses(dir);
  return { dir, manifest };
}

function stagePlatform(version, out, main, { target, file, worker }) {
  const platform = PLATFORMS[target];
  if (!platform) throw new Error(`no npm platform for target ${target}`);
  const name = `@zidane/${platform.os}-${platform.cpu}`;
  if (!(name in main.manifest.optionalDependencies)) {
    throw new Error(`${name} is not an optionalDependency of zidane-mcp`);
  }
  const dir = path.join(out, `${platform.os}-${platform.cpu}`);
  const binaries = [
    [binaryName(platform.os, "zidane"), file],
    [binaryName(platform.os, "zidane-worker"), worker],
  ];
  mkdirSync(path.join(dir, "bin"), { recursive: true });
  writeJson(path.join(dir, "package.json"), {
    name,
    version,
    description: `The zidane and zidane-worker binaries for ${platform.os} ${platform.cpu} (${target}); installed by zidane-mcp.`,
    license: main.manifest.license,
    repository: main.manifest.repository,
    os: [platform.os],
    cpu: [platform.cpu],
    files: [...binaries.map(([binary]) => `bin/${binary}`), "LICENSE-MIT", "LICENSE-APACHE"],
  });
  for (const [binary, from] of binaries) {
    copyFileSync(from, path.join(dir, "bin", binary));
    chmodSync(path.join(dir, "bin", binary), 0o755);
  }
  copyLicenses(dir);
  return dir;
}

const args = parseArgs(process.argv.slice(2));
const out = path.resolve(args.out);
mkdirSync(out, { recursive: true });
const main = stageMain(args.version, out);
const dirs = [main.dir, ...args.binaries.map((binary) => stagePlatform(args.version, out, main, binary))];
if (args.pack) {
  const packs = path.join(out, "packs");
  mkdirSync(packs, { recursive: true });
  for (const dir of dirs) {
    execFileSync("npm", ["pack", "--silent", "--pack-destination", packs], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
  }
}
for (const dir of dirs) console.log(dir);
