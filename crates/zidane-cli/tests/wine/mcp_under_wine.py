"""`zidane mcp` built for Windows, run under Wine, driven over stdio by the official
Python MCP SDK (PyPI `mcp`) on the Linux side: `cargo xtask windows` runs it.

    python mcp_under_wine.py <zidane.exe> <scratch dir> [sigkill | detached | handshake]

Each case starts a background task whose `start /b` grandchild appends to a file without
pause, checks that the file grows, then ends the task one way and checks the file stops
growing (a live grandchild keeps growing it, so only its end can pass):

- `shell_kill`: the kill answers, and no <task-notification> follows a kill;
- a budget: `timeout_ms` ends the task, and the next tool result tells its exit, once;
- the end of the session: the client closes stdin, the server tears down;
- `SIGKILL` of the server: no teardown runs; the task's job object, kill-on-close, ends
  with the server's last handle.

And a detached task (`detach: true`) outlives its server SIGKILLed: its job is its
monitor's, under the per-user supervisor (a named pipe), so the file keeps growing;
`zidane ps --json` lists it running and `zidane kill` ends it, grandchild included.

Also: a task that ends on its own is told once. Exits non-zero on any failure.

`handshake` alone: what an MCP host does first (initialize, the tools listed, one
foreground command), which dist_under_wine.py also runs on the zidane.exe of the release
zip and through the npm launcher (`handshake`, with the program that runs the binary).
"""

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

warnings.simplefilter("ignore")

WAIT = 60.0
# A command that runs for a long while: ping waits a second between its probes.
LONG = "ping -n 1000 127.0.0.1 >nul"


def windows_path(path: str) -> str:
    return subprocess.run(["winepath", "-w", path], check=True, capture_output=True, text=True).stdout.strip()


def text(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def grandchild(file: str) -> str:
    # One command in the loop's body: Wine's cmd runs a parenthesised body once and
    # leaves `%i` unexpanded in it, so a file fed that way never grows.
    return f'start /b cmd /d /c "for /l %i in (1,1,100000000) do @echo %i>>{windows_path(file)}"'


def wait_for(what: str, done) -> None:
    deadline = time.monotonic() + WAIT
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.05)


def grows(file: str) -> bool:
    """Whether the file grows within a few seconds: the grandchild is alive."""
    size = lambda: os.path.getsize(file) if os.path.exists(file) else 0
    before = size()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if size() > before:
            return True
    return False


def stopped_growing(file: str) -> bool:
    size = lambda: os.path.getsize(file) if os.path.exists(file) else 0
    before = size()
    time.sleep(3.5)
    return size() == before


def server(user_dir: str, binary: str, runner: tuple[str, ...] = ()) -> StdioServerParameters:
    """`zidane mcp` under Wine: `binary` is zidane.exe, or what `runner` (a Windows
    program and its first arguments, such as node.exe and the npm launcher) runs."""
    return StdioServerParameters(command="wine", args=[*runner, binary, "mcp", "--user-dir", windows_path(user_dir)], env=dict(os.environ))


# The tools `zidane mcp` always lists.
TOOLS = {"shell", "shell_kill", "wait_task", "read_file"}


async def handshake(binary: str, scratch: str, runner: tuple[str, ...] = ()) -> str:
    """Initializes a session, checks the tools listed and runs one foreground command;
    returns the server's name and version."""
    async with stdio_client(server(os.path.join(scratch, "handshake-user"), binary, runner)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            listed = {t.name for t in (await session.list_tools()).tools}
            assert TOOLS <= listed, listed
            echoed = await session.call_tool("shell", {"command": "echo zidane-answers"})
            assert "zidane-answers" in text(echoed), text(echoed)
            return f"{init.server_info.name} {init.server_info.version}"


async def start_with_grandchild(session: ClientSession, file: str, extra: dict) -> str:
    started = await session.call_tool("shell", {"command": f"{grandchild(file)} & {LONG}", "run_in_background": True, **extra})
    assert text(started).startswith("Started bash_"), text(started)
    await anyio.to_thread.run_sync(lambda: wait_for("the grandchild's first line", lambda: os.path.exists(file)))
    assert await anyio.to_thread.run_sync(grows, file), "the grandchild does not write"
    return text(started).split()[1]


async def case_kill(binary: str, scratch: str) -> None:
    grown = os.path.join(scratch, "kill.txt")
    async with stdio_client(server(os.path.join(scratch, "kill-user"), binary)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            shell = next(t for t in (await session.list_tools()).tools if t.name == "shell")
            assert "cmd.exe" in (shell.description or "").lower() or "powershell" in (shell.description or "").lower(), shell.description
            # No sandbox on Windows yet: the model is told so, not left to assume one.
            assert "unsandboxed: zidane has no sandbox on Windows yet" in (shell.description or ""), shell.description
            # Windows tasks have no terminal: `tty` is not offered, and sent anyway it is
            # refused with the reason before anything runs.
            assert "tty" not in shell.input_schema["properties"], shell.input_schema
            forged = os.path.join(scratch, "forged-tty.txt")
            refused = await session.call_tool(
                "shell", {"command": f"echo made> {windows_path(forged)}", "run_in_background": True, "tty": True}
            )
            assert refused.is_error, text(refused)
            assert "`tty` is not available" in text(refused), text(refused)
            assert not os.path.exists(forged), "a refused call ran"
            task = await start_with_grandchild(session, grown, {})
            killed = await session.call_tool("shell_kill", {"task_id": task})
            assert text(killed).startswith(f"Killed {task}"), text(killed)
            after = await session.call_tool("list_tasks", {})
            assert "<task-notification>" not in text(after), text(after)
    assert await anyio.to_thread.run_sync(stopped_growing, grown), "shell_kill left the grandchild running"


async def case_budget_and_natural_exit(binary: str, scratch: str) -> None:
    grown = os.path.join(scratch, "budget.txt")
    async with stdio_client(server(os.path.join(scratch, "budget-user"), binary)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            task = await start_with_grandchild(session, grown, {"timeout_ms": 3000})
            waited = await session.call_tool("wait_task", {"task_id": task, "timeout_ms": 30000})
            told = text(waited)
            print(f"wait_task after a budget: {told!r}", file=sys.stderr)
            assert "timed out" in told.lower() or "budget" in told.lower() or "killed" in told.lower(), told
            assert await anyio.to_thread.run_sync(stopped_growing, grown), "the budget left the grandchild running"
            done = await session.call_tool("shell", {"command": "echo done", "run_in_background": True})
            done_id = text(done).split()[1]
            await session.call_tool("wait_task", {"task_id": done_id, "timeout_ms": 30000})
            seen = []
            for _ in range(3):
                seen.append(text(await session.call_tool("list_tasks", {})))
            blocks = sum(s.count(f"<task-id>{done_id}</task-id>") for s in seen if "<task-notification>" in s)
            assert blocks <= 1, seen


async def case_end_of_session(binary: str, scratch: str) -> None:
    grown = os.path.join(scratch, "session.txt")
    async with stdio_client(server(os.path.join(scratch, "session-user"), binary)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await start_with_grandchild(session, grown, {})
    assert await anyio.to_thread.run_sync(stopped_growing, grown), "the end of the session left the grandchild running"


class RawServer:
    """`zidane mcp` under Wine started by hand (not by the SDK, whose exit would close it
    politely), spoken to in raw JSON-RPC lines, so a test can SIGKILL it."""

    def __init__(self, binary: str, user_dir: str) -> None:
        self.proc = subprocess.Popen(
            ["wine", binary, "mcp", "--user-dir", windows_path(user_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wine-test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        id_ = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed its output")
            message = json.loads(line)
            if message.get("id") == id_:
                return message

    def shell(self, arguments: dict) -> dict:
        return self.request("tools/call", {"name": "shell", "arguments": arguments})

    def sigkill(self) -> None:
        """The server's own process only (its tasks share its Unix process group, and
        must end through their job, not this signal): nothing runs its teardown."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=WAIT)


def case_sigkill(binary: str, scratch: str) -> None:
    """SIGKILL of the server once its task's grandchild runs: the task's job, kill-on-
    close, ends with the server's last handle."""
    grown = os.path.join(scratch, "sigkill.txt")
    server = RawServer(binary, os.path.join(scratch, "sigkill-user"))
    started = server.shell({"command": f"{grandchild(grown)} & {LONG}", "run_in_background": True})
    assert "Started bash_1" in json.dumps(started), started
    wait_for("the grandchild's first line", lambda: os.path.exists(grown))
    assert grows(grown), "the grandchild does not write"
    server.sigkill()
    assert stopped_growing(grown), "SIGKILL of the server left the grandchild running"


def case_detached(binary: str, scratch: str) -> None:
    """A detached task survives its host SIGKILLed; a person lists and kills it."""
    grown = os.path.join(scratch, "detached.txt")
    user_dir = os.path.join(scratch, "detached-user")

    def person(*args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "ZIDANE_USER_DIR": windows_path(user_dir)}
        return subprocess.run(["wine", binary, *args], env=env, capture_output=True, text=True, timeout=WAIT)

    server = RawServer(binary, user_dir)
    started = server.shell({"command": f"{grandchild(grown)} & {LONG}", "detach": True})
    assert "Started bash_d1" in json.dumps(started), started
    wait_for("the grandchild's first line", lambda: os.path.exists(grown))
    assert grows(grown), "the grandchild does not write"
    server.sigkill()
    assert grows(grown), "the detached task died with its host"
    listed = person("ps", "--json")
    assert listed.returncode == 0, listed
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert rows.get("bash_d1", {}).get("state") == "running", rows
    killed = person("kill", "d1")
    assert killed.returncode == 0, killed
    assert stopped_growing(grown), "zidane kill left the detached task's grandchild running"
    listed = person("ps", "--all", "--json")
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert rows.get("bash_d1", {}).get("state") == "killed", rows


async def main() -> None:
    binary, scratch = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "sigkill":
        await anyio.to_thread.run_sync(case_sigkill, binary, scratch)
        print("ok sigkill")
        return
    if len(sys.argv) > 3 and sys.argv[3] == "detached":
        await anyio.to_thread.run_sync(case_detached, binary, scratch)
        print("ok detached")
        return
    if len(sys.argv) > 3 and sys.argv[3] == "handshake":
        print(f"ok handshake with {await handshake(binary, scratch)}")
        return
    await case_kill(binary, scratch)
    await case_budget_and_natural_exit(binary, scratch)
    await case_end_of_session(binary, scratch)
    await anyio.to_thread.run_sync(case_sigkill, binary, scratch)
    await anyio.to_thread.run_sync(case_detached, binary, scratch)
    print(
        "ok zidane mcp under Wine: shell_kill, a budget, the end of the session and SIGKILL each ended a start /b grandchild; "
        "a detached one outlived SIGKILL and zidane kill ended it"
    )


if __name__ == "__main__":
    anyio.run(main)
