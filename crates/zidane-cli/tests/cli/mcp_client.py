"""A foreign MCP client — the official Python SDK (PyPI `mcp`) — driving `zidane mcp`.

    python mcp_client.py stdio <zidane binary> <user dir>
    python mcp_client.py http <url> <file holding the bearer token>
    python mcp_client.py env <zidane binary> <user dir>
    python mcp_client.py move <zidane binary> <user dir>

Starts background tasks, waits for the resource-updated notification of the first one,
checks that the next tool result (and only that one) opens with its
<task-notification> block, kills a task (no block follows), checks that a line matching
a task's `notify_on` is pushed and opens the next tool result as a <task-event> block
(and only that one), leaves one running,
disconnects, and checks that no task process is left. Exits non-zero on any failure.

`env` starts `zidane mcp` with secrets in its environment and checks that neither a
foreground command's `env` nor a background task's shows any of them, while what the
policy passes and sets is there.

`move` starts `zidane mcp --move-after-secs 1`: a foreground command that outlives the
second comes back as a background task whose end is told once, with the next tool
result; one that ends in time comes back as a foreground answer and is never told.
"""

import json
import os
import sys
import time
import warnings

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from sdk_common import alive, text

# resources/subscribe is deprecated for 2026-07-28 servers; zidane speaks 2025-11-25.
warnings.simplefilter("ignore")

WAIT = 10.0
TOOLS = ["shell", "shell_kill", "wait_task", "read_file", "shell_input", "shell_screen", "shell_notify", "list_tasks"]


async def exercise(read, write) -> list[int]:
    updated = anyio.Event()
    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == "task://bash_1":
            updated.set()

    event_pushed = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)
        if isinstance(params.data, dict) and params.data.get("event") == "task_event":
            event_pushed.set()

    async with ClientSession(read, write, message_handler=on_message, logging_callback=on_log) as session:
        await session.initialize()
        # Log messages come only to a client that asks for them.
        await session.set_logging_level("info")
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names == TOOLS, names

        started = await session.call_tool("shell", {"command": "sleep 0.5; echo built", "run_in_background": True})
        assert not started.is_error, text(started)
        assert started.structured_content["task_id"] == "bash_1", started.structured_content
        assert text(started).startswith("Started bash_1 (pid "), text(started)
        pids = [started.structured_content["pid"]]
        await session.subscribe_resource("task://bash_1")
        with anyio.fail_after(WAIT):
            await updated.wait()

        first = await session.call_tool("list_tasks", {})
        assert text(first).startswith("<task-notification>\n<task-id>bash_1</task-id>"), text(first)
        second = await session.call_tool("list_tasks", {})
        assert "<task-notification>" not in text(second), text(second)
        assert second.structured_content["tasks"][0]["status"] == "exited", second.structured_content
        # Plain results (this client declares no MCP tasks), checked against their outputSchema.
        waited = await session.call_tool("wait_task", {"task_id": "bash_1"})
        assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content
        log = started.structured_content["output_path"]
        read = await session.call_tool("read_file", {"path": log})
        assert text(read).startswith("     1\tbuilt\n"), text(read)

        # Every shape of a wait's and a read's data, each checked by the SDK against the
        # tool's derived outputSchema.
        server = await session.call_tool(
            "shell", {"command": "echo 'listening on port 4000'; sleep 60", "run_in_background": True}
        )
        pids.append(server.structured_content["pid"])
        ready = await session.call_tool(
            "wait_task", {"task_id": "bash_2", "until": {"pattern": "port (\\d+)"}, "timeout_ms": 20000}
        )
        assert ready.structured_content["ready"] is True, ready.structured_content
        assert ready.structured_content["groups"] == ["4000"], ready.structured_content
        assert ready.structured_content["line_number"] == 1, ready.structured_content
        timed_out = await session.call_tool("wait_task", {"task_id": "bash_2", "timeout_ms": 200})
        assert timed_out.structured_content["timed_out"] is True, timed_out.structured_content
        assert timed_out.structured_content["last_lines"] == ["listening on port 4000"], timed_out.structured_content
        tail = await session.call_tool("read_file", {"path": log, "offset": -1})
        assert tail.structured_content["lines"] == 1, tail.structured_content
        await session.call_tool("shell_kill", {"task_id": "bash_2"})

        doomed = await session.call_tool("shell", {"command": "sleep 60", "run_in_background": True})
        pids.append(doomed.structured_content["pid"])
        killed = await session.call_tool("shell_kill", {"task_id": "bash_3"})
        assert text(killed).startswith("Killed bash_3: killed (SIGTERM)"), text(killed)
        after_kill = await session.call_tool("list_tasks", {})
        assert "<task-notification>" not in text(after_kill), text(after_kill)

        # A line matching `notify_on` is pushed, then opens the next tool result, once.
        noisy = await session.call_tool(
            "shell", {"command": "echo 'ERROR: disk full'; sleep 60", "run_in_background": True, "notify_on": "^ERROR"}
        )
        assert not noisy.is_error, text(noisy)
        pids.append(noisy.structured_content["pid"])
        with anyio.fail_after(WAIT):
            await event_pushed.wait()
        told = await session.call_tool("list_tasks", {})
        # The next result after the line is written: the start's own, when the line was
        # matched before its answer left, else the call after the push.
        event = (
            "<task-event>\n<task-id>bash_4</task-id>\n<match>\n<line-number>1</line-number>\n"
            "<pattern>^ERROR</pattern>\n<line>ERROR: disk full</line>\n</match>\n</task-event>"
        )
        opened = [r for r in (text(noisy), text(told)) if r.startswith(event)]
        assert len(opened) == 1, (text(noisy), text(told))
        assert sum(text(r).count("<task-event>") for r in (noisy, told)) == 1, (text(noisy), text(told))
        again = await session.call_tool("list_tasks", {})
        assert "<task-event>" not in text(again), text(again)
        cleared = await session.call_tool("shell_notify", {"task_id": "bash_4", "notify_on": []})
        assert "patterns cleared" in text(cleared), text(cleared)
        await session.call_tool("shell_kill", {"task_id": "bash_4"})

        # Left running: the disconnect must end it.
        left = await session.call_tool("shell", {"command": "sleep 60", "run_in_background": True})
        pids.append(left.structured_content["pid"])
        assert alive(pids[-1])

        unknown = await session.call_tool("bash_output", {})
        assert unknown.is_error, text(unknown)
        wrong = await session.call_tool("shell", {"command": 5})
        assert wrong.is_error and "`command` must be" in text(wrong), text(wrong)

        assert any(isinstance(log.data, dict) and log.data.get("event") == "task_exit" for log in logs), logs
    return pids


# What the server's environment holds that no command may see.
SECRETS = {
    "OPENAI_API_KEY": "sk-py-secret-1",
    "AWS_SECRET_ACCESS_KEY": "aws-py-secret-2",
    "ZIDANE_MCP_TOKEN": "mcp-py-secret-3",
    "GITHUB_TOKEN": "gh-py-secret-4",
    "DB_PASSWORD": "pw-py-secret-5",
}


def env_of(output: str) -> dict[str, str]:
    """`env`'s lines as a dict; a read_file result's line numbers are dropped."""
    found = {}
    for line in output.splitlines():
        line = line.split("\t", 1)[1] if "\t" in line and line.split("\t", 1)[0].strip().isdigit() else line
        name, sep, value = line.partition("=")
        if sep:
            found[name] = value
    return found


async def exercise_env(read, write) -> list[int]:
    async with ClientSession(read, write) as session:
        await session.initialize()
        foreground = await session.call_tool("shell", {"command": "env"})
        assert not foreground.is_error, text(foreground)
        started = await session.call_tool("shell", {"command": "env", "run_in_background": True})
        assert not started.is_error, text(started)
        waited = await session.call_tool("wait_task", {"task_id": "bash_1"})
        assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content
        log = await session.call_tool("read_file", {"path": started.structured_content["output_path"]})
        for label, output in [("foreground", text(foreground)), ("background", text(log))]:
            for name, value in SECRETS.items():
                assert value not in output, f"{label}: {name}'s value reached a command:\n{output}"
            env = env_of(output)
            for name in SECRETS:
                assert name not in env, f"{label}: {name} reached a command:\n{output}"
            assert env.get("PATH"), f"{label}: no PATH:\n{output}"
            assert env.get("HOME") == os.environ["HOME"], f"{label}: HOME:\n{output}"
            assert env.get("FROM_FLAG") == "flag-value", f"{label}: FROM_FLAG:\n{output}"
        return [started.structured_content["pid"]]


async def exercise_move(read, write) -> list[int]:
    updated = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == "task://bash_1":
            updated.set()

    async with ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        shell = next(tool for tool in (await session.list_tools()).tools if tool.name == "shell")
        assert "A command still running after 1 second moves to the background" in shell.description, shell.description

        began = time.monotonic()
        moved = await session.call_tool("shell", {"command": "echo start; sleep 3; echo done"})
        assert time.monotonic() - began < 2.5, time.monotonic() - began
        assert not moved.is_error, text(moved)
        assert moved.structured_content["moved_to_background"] is True, moved.structured_content
        assert moved.structured_content["task_id"] == "bash_1", moved.structured_content
        assert text(moved).startswith("Still running after 1.0s: moved to the background as bash_1 (pid "), text(moved)
        assert "Last lines:\nstart" in text(moved), text(moved)
        await session.subscribe_resource("task://bash_1")

        fast = await session.call_tool("shell", {"command": "echo hi"})
        assert text(fast) == "hi\n\nExit code: 0", text(fast)
        assert fast.structured_content == {"exit_code": 0, "text": "hi\n\nExit code: 0"}, fast.structured_content

        with anyio.fail_after(WAIT):
            await updated.wait()
        told = await session.call_tool("list_tasks", {})
        assert text(told).startswith("<task-notification>\n<task-id>bash_1</task-id>"), text(told)
        # Once, and the command that ended in time never.
        assert text(told).count("<task-notification>") == 1, text(told)
        again = await session.call_tool("list_tasks", {})
        assert "<task-notification>" not in text(again), text(again)
        log = await session.call_tool("read_file", {"path": moved.structured_content["output_path"]})
        assert text(log).startswith("     1\tstart\n     2\tdone"), text(log)
        return [moved.structured_content["pid"]]


# Whether zidane sweeps orphans as it starts: the test's choice, passed on to a server
# started with the SDK's default environment, which would drop it.
SWEEP_VAR = "ZIDANE_SWEEP_ORPHANS"


def passed_on(*names: str) -> dict[str, str]:
    """Those of `names` this process has, for a server's environment."""
    return {name: os.environ[name] for name in names if name in os.environ}


async def main() -> None:
    mode = sys.argv[1]
    if mode == "stdio":
        binary, user_dir = sys.argv[2], sys.argv[3]
        params = StdioServerParameters(
            command=binary, args=["mcp", "--user-dir", user_dir], env=passed_on(SWEEP_VAR)
        )
        async with stdio_client(params) as streams:
            pids = await exercise(streams[0], streams[1])
    elif mode == "http":
        # The token as a user passes it: read from the file the server printed.
        url = sys.argv[2]
        with open(sys.argv[3]) as file:
            token = file.read().strip()
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        async with create_mcp_http_client() as anonymous:
            refused = await anonymous.post(url, json=ping)
            assert refused.status_code == 401, refused.status_code
        foreign = {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
        async with create_mcp_http_client(headers=foreign) as page:
            refused = await page.post(url, json=ping)
            assert refused.status_code == 403, refused.status_code
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as client:
            async with streamable_http_client(url, http_client=client) as streams:
                pids = await exercise(streams[0], streams[1])
    elif mode == "env":
        binary, user_dir = sys.argv[2], sys.argv[3]
        # The SDK passes a server only a few variables of its own unless given them all.
        params = StdioServerParameters(
            command=binary,
            args=["mcp", "--user-dir", user_dir, "--env-set", "FROM_FLAG=flag-value"],
            env={**os.environ, **SECRETS},
        )
        async with stdio_client(params) as streams:
            pids = await exercise_env(streams[0], streams[1])
    elif mode == "move":
        binary, user_dir = sys.argv[2], sys.argv[3]
        params = StdioServerParameters(
            command=binary,
            args=["mcp", "--user-dir", user_dir, "--move-after-secs", "1"],
            env=passed_on(SWEEP_VAR),
        )
        async with stdio_client(params) as streams:
            pids = await exercise_move(streams[0], streams[1])
    else:
        raise SystemExit(f"unknown mode {mode!r}")

    deadline = time.monotonic() + WAIT
    while any(alive(pid) for pid in pids):
        assert time.monotonic() < deadline, [pid for pid in pids if alive(pid)]
        await anyio.sleep(0.02)
    print("ok", json.dumps(pids))


if __name__ == "__main__":
    anyio.run(main)
