// The launcher behind the npm package's commands (`bin/zidane.js`, `bin/zidane-worker.js`):
// finds the native binary that npm installed with this machine's platform package (one
// of the optionalDependencies, each holding `zidane` and `zidane-worker`) and runs it
// with the same arguments, stdio and environment. On Linux and macOS it becomes the
// binary where Node can; on Windows it runs `<name>.exe` as its child and ends with its
// exit code.
"use strict";

const { spawn } = require("node:child_process");
const { existsSync } = require("node:fs");
const path = require("node:path");

const PACKAGES = {
  "linux x64": "@zidane/linux-x64",
  "linux arm64": "@zidane/linux-arm64",
  "darwin x64": "@zidane/darwin-x64",
  "darwin arm64": "@zidane/darwin-arm64",
  "win32 x64": "@zidane/win32-x64",
  "win32 arm64": "@zidane/win32-arm64",
};

const WINDOWS = process.platform === "win32";

/** How to build `name` from source, where no prebuilt binary fits. */
const FROM_SOURCE = {
  zidane: "cargo install zidane-cli",
  "zidane-worker": "cargo install zidane-restate --bin zidane-worker",
};

function binaryPath(name) {
  const key = `${process.platform} ${process.arch}`;
  const pkg = PACKAGES[key];
  if (!pkg) {
    throw new Error(
      `${name} has no prebuilt binary for ${key}; it runs on Linux, macOS ` +
        `and Windows (x64, arm64). Build it from source: ${FROM_SOURCE[name]}`,
    );
  }
  let dir;
  try {
    dir = path.dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(
      `${pkg} is not installed: npm skipped this platform's optional dependency. ` +
        "Reinstall without --omit=optional (npm install -g zidane-mcp).",
    );
  }
  const binary = path.join(dir, "bin", WINDOWS ? `${name}.exe` : name);
  if (!existsSync(binary)) {
    throw new Error(`${pkg} holds no binary at ${binary}; reinstall zidane-mcp`);
  }
  return binary;
}

/** Runs the platform package's binary `name` (`zidane` or `zidane-worker`). */
function launch(name) {
  const binary = binaryPath(name);
  const args = process.argv.slice(2);

  // Where Node can, become the binary: signals, the exit status and the stdio an MCP
  // host talks over then go to it with no process in between. Windows has no exec.
  if (!WINDOWS && typeof process.execve === "function") {
    process.execve(binary, [binary, ...args], process.env);
  }

  // No console window of its own where the caller has none (an MCP host's child).
  const child = spawn(binary, args, { stdio: "inherit", windowsHide: true });
  child.on("error", (error) => {
    console.error(`${name}: cannot start ${binary}: ${error.message}`);
    process.exit(1);
  });
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      // On Windows, Ctrl+C and Ctrl+Break reach every process of the console, the
      // binary too, which ends as it chooses; a kill from here would end it outright,
      // before its own teardown. So the launcher only outlives it, to pass on its code.
      if (WINDOWS) return;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
    });
  }
  child.on("exit", (code, signal) => {
    if (signal && !WINDOWS) {
      // Die of the same signal, so the caller sees how the binary ended.
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(code ?? 1);
    }
  });
}

module.exports = { launch };
