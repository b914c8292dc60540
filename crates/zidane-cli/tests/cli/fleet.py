"""Tasks on a fleet of `zidane-worker`s through `zidane mcp --restate`, driven by the
official Python MCP SDK.

    python fleet.py <case> <zidane binary> <workspace> <user dir> <ingress> <admin> <fleet dir>

The test (fleet.rs) runs a Restate server and workers `w1` and `w2`, whose disks are
`<fleet dir>/worker-w1` and `<fleet dir>/worker-w2`. Each case starts one `zidane mcp`
session on that fleet and checks what the model sees. Prints `ok` and exits 0 when
everything held.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from contextlib import asynccontextmanager

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sdk_common import alive, run_main, server_pid, text

warnings.simplefilter("ignore")

# Longest a step waits for something that should happen.
WAIT = 20.0
PASSED_ON = ("PATH", "LANG", "HOME")
NOTIFICATION = re.compile(r"<task-notification>\n<task-id>(bash_\d+)</task-id>")


BLOCK = re.compile(r"<task-notification>\n<task-id>(bash_\d+)</task-id>.*?</task-notification>", re.DOTALL)

# Each task's `<task-notification>` block as the model last read it.
BLOCKS: dict[str, str] = {}


def told(result: types.CallToolResult) -> list[str]:
    """The task ids whose `<task-notification>` this result carries (their blocks kept in
    BLOCKS)."""
    for block in BLOCK.finditer(text(result)):
        BLOCKS[block.group(1)] = block.group(0)
    return NOTIFICATION.findall(text(result))


@asynccontextmanager
async def session(binary: str, workspace: str, user_dir: str, flags: list[str], logged: list | None = None):
    """A session of `zidane mcp` with `flags`; the data of its log messages appended to
    `logged` when given (the client then asks for them)."""
    params = StdioServerParameters(
        command=binary,
        args=["mcp", "--user-dir", user_dir, *flags],
        env={name: os.environ[name] for name in PASSED_ON if name in os.environ},
        cwd=workspace,
    )

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if logged is not None:
            logged.append(params.data)

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, logging_callback=on_log) as client:
            await client.initialize()
            if logged is not None:
                await client.set_logging_level("info")
            yield client


# The ends told in the results of `start` and `told_count`'s calls, in order: an end that
# comes quickly may be told in the result of the next start, or of its own. A case runs
# its sessions one after another, and each task id is told in one session only.
TOLD: list[str] = []


async def start(client: ClientSession, command: str) -> dict:
    started = await client.call_tool("shell", {"command": command, "run_in_background": True})
    assert not started.is_error, text(started)
    TOLD.extend(told(started))
    return started.structured_content


def worker_of(output_path: str, fleet: str) -> str:
    """Which worker's disk holds `output_path`."""
    for worker in ("w1", "w2"):
        if output_path.startswith(os.path.join(fleet, f"worker-{worker}") + os.sep):
            return worker
    raise AssertionError(f"{output_path} is on no worker's disk under {fleet}")


async def runs_there(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    logged: list = []
    async with session(binary, workspace, user_dir, ["--restate", ingress, "--restate-admin", admin], logged) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        offered = tools["shell"].input_schema["properties"]
        for local_only in ("detach", "tty", "stdin"):
            assert local_only not in offered, f"{local_only} offered on a fleet: {sorted(offered)}"
        assert "labels" in offered, sorted(offered)

        started = await start(client, "echo fleet-$((6*7)); sleep 0.5; exit 3")
        task_id = started["task_id"]
        worker = worker_of(started["output_path"], fleet)
        listed = await client.call_tool("list_tasks", {})
        [entry] = [t for t in listed.structured_content["tasks"] if t["task_id"] == task_id]
        assert entry["runs_on"] == worker, entry
        assert f"on {worker}" in text(listed), text(listed)
        assert not os.path.exists(os.path.join(workspace, os.path.basename(started["output_path"])))

        # Nobody calls anything: the session's sweep finds the end on its worker and
        # pushes it to the client.
        deadline = time.monotonic() + WAIT
        while not any(isinstance(data, dict) and data.get("event") == "task_exit" for data in logged):
            assert time.monotonic() < deadline, f"{task_id}'s end was never pushed: {logged}"
            await anyio.sleep(0.05)
        [pushed] = [data for data in logged if isinstance(data, dict) and data.get("event") == "task_exit"]
        assert pushed["exit"]["task_id"] == task_id and pushed["exit"]["exit_code"] == 3, pushed

        # The model is told at its next result, once.
        deadline = time.monotonic() + WAIT
        times_told = 0
        while times_told == 0:
            assert time.monotonic() < deadline, f"{task_id}'s end was never told"
            await anyio.sleep(0.2)
            times_told += told(await client.call_tool("list_tasks", {})).count(task_id)
        assert times_told == 1, times_told
        # Sweeps go on (every half second): the end is not told again.
        for _ in range(8):
            await anyio.sleep(0.25)
            again = await client.call_tool("list_tasks", {})
            assert task_id not in told(again), text(again)

        waited = await client.call_tool("wait_task", {"task_id": task_id, "timeout_ms": 1000})
        assert waited.structured_content["exit"]["exit_code"] == 3, waited.structured_content
        # The log is on the worker's disk, read back through the worker.
        read = await client.call_tool("read_file", {"path": started["output_path"]})
        assert "fleet-42" in text(read), text(read)


async def named_workers(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    async with session(binary, workspace, user_dir, ["--restate", ingress, "--workers", "w1,w2"]) as client:
        first = await start(client, "sleep 0.2")
        second = await start(client, "sleep 0.2")
        ran_on = {worker_of(first["output_path"], fleet), worker_of(second["output_path"], fleet)}
        assert ran_on == {"w1", "w2"}, ran_on
        for started in (first, second):
            waited = await client.call_tool("wait_task", {"task_id": started["task_id"], "timeout_ms": int(WAIT * 1000)})
            assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content


async def labels(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    async with session(binary, workspace, user_dir, ["--restate", ingress, "--workers", "w1,w2"]) as client:
        for _ in range(2):
            gpu = await client.call_tool("shell", {"command": "sleep 0.2", "run_in_background": True, "labels": ["gpu"]})
            assert not gpu.is_error, text(gpu)
            assert worker_of(gpu.structured_content["output_path"], fleet) == "w2", gpu.structured_content
        refused = await client.call_tool("shell", {"command": "echo never", "run_in_background": True, "labels": ["tpu"]})
        assert refused.is_error, text(refused)
        for part in ("tpu", "w1: linux", "w2: gpu, linux"):
            assert part in text(refused), text(refused)
        listed = await client.call_tool("list_tasks", {})
        assert "echo never" not in text(listed), text(listed)
        bad = await client.call_tool("shell", {"command": "true", "run_in_background": True, "labels": ["two words"]})
        assert bad.is_error and "two words" in text(bad), text(bad)


# Longest a session waits to be told an end whose starting session died: that session
# counts as gone once it has been silent for ten seconds.
LEASE_WAIT = 40.0


async def until(what: str, check, wait: float = WAIT) -> None:
    """Polls `check` until it holds, for at most `wait`."""
    deadline = time.monotonic() + wait
    while not check():
        assert time.monotonic() < deadline, f"not within {wait}s: {what}"
        await anyio.sleep(0.05)


async def told_count(client: ClientSession, task_id: str, wait: float) -> int:
    """Calls `list_tasks` until `task_id`'s end was told in some result of this session
    (at most `wait`), then a few more times; how many results told it."""
    deadline = time.monotonic() + wait
    while task_id not in TOLD:
        assert time.monotonic() < deadline, f"{task_id}'s end was never told"
        TOLD.extend(told(await client.call_tool("list_tasks", {})))
        await anyio.sleep(0.2)
    for _ in range(6):
        await anyio.sleep(0.25)
        TOLD.extend(told(await client.call_tool("list_tasks", {})))
    return TOLD.count(task_id)


async def re_adopted(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    """`zidane mcp` SIGKILLed mid-task: its tasks run on; the next session in the same
    workspace lists them, is told once the end that came while nobody was connected,
    waits for the other; a session after that is told nothing again."""
    flags = ["--restate", ingress, "--workers", "w1,w2"]
    gates = {name: os.path.join(fleet, f"go-{name}") for name in ("later", "waited")}
    # Written in the task's own directory on its worker: its sandbox lets it write
    # nowhere else there.
    ended = "ended-later"
    async with session(binary, workspace, user_dir, flags) as first:
        later = await start(first, f"while [ ! -e {gates['later']} ]; do sleep 0.05; done; touch {ended}; exit 4")
        ended = os.path.join(os.path.dirname(os.path.dirname(later["output_path"])), ended)
        waited = await start(first, f"while [ ! -e {gates['waited']} ]; do sleep 0.05; done; exit 5")
        pid = server_pid()
        os.kill(pid, signal.SIGKILL)
        await until("zidane mcp ends", lambda: not alive(pid))
    # An end while no session is connected.
    open(gates["later"], "w").close()
    await until("the task ends on its worker", lambda: os.path.exists(ended))

    async with session(binary, workspace, user_dir, flags) as second:
        listed = (await second.call_tool("list_tasks", {})).structured_content
        by_id = {task["task_id"]: task for task in listed["tasks"]}
        assert by_id[waited["task_id"]]["status"] == "running", listed
        assert later["task_id"] in by_id, f"the next session does not list it: {listed}"
        assert await told_count(second, later["task_id"], LEASE_WAIT) == 1
        open(gates["waited"], "w").close()
        result = await second.call_tool("wait_task", {"task_id": waited["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert result.structured_content["exit"]["exit_code"] == 5, result.structured_content
        for _ in range(4):
            again = await second.call_tool("list_tasks", {})
            assert told(again) == [], text(again)
            await anyio.sleep(0.25)
        # A new task is numbered past the earlier session's.
        fresh = await start(second, "true")
        assert fresh["task_id"] not in (later["task_id"], waited["task_id"]), fresh

    # Past the second session's lease too: had it not recorded what it told, the third
    # would claim those ends now.
    async with session(binary, workspace, user_dir, flags) as third:
        deadline = time.monotonic() + 12.0
        while time.monotonic() < deadline:
            result = await third.call_tool("list_tasks", {})
            assert told(result) in ([], [fresh["task_id"]]), f"told again in a later session:\n{text(result)}"
            await anyio.sleep(0.5)
        listed = (await third.call_tool("list_tasks", {})).structured_content
        assert {later["task_id"], waited["task_id"]} <= {task["task_id"] for task in listed["tasks"]}, listed


async def two_sessions(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    """Two sessions of one workspace at once: their tasks never share a number, and an
    end is told to the session that started it, not to the other."""
    flags = ["--restate", ingress, "--workers", "w1,w2"]
    async with session(binary, workspace, user_dir, flags) as one, session(binary, workspace, user_dir, flags) as other:
        started = [await start(client, "sleep 0.3; exit 6") for client in (one, other, one, other)]
        ids = [task["task_id"] for task in started]
        assert len(set(ids)) == len(ids), f"two tasks share a number: {ids}"
        mine = started[0]["task_id"]
        assert await told_count(one, mine, WAIT) == 1
        for _ in range(4):
            result = await other.call_tool("list_tasks", {})
            assert mine not in told(result), f"told to the session that did not start it:\n{text(result)}"
            await anyio.sleep(0.25)


def person(binary: str, workspace: str, user_dir: str, fleet: str, *args: str, config: bool = False) -> subprocess.CompletedProcess:
    """`zidane ARGS` run by a person in the workspace, with the same user dir; the fleet
    named by the config file's `[fleet]` table when `config`, else by the arguments."""
    env = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    env["ZIDANE_USER_DIR"] = user_dir
    home = os.path.join(fleet, "config-home")
    env["XDG_CONFIG_HOME"] = home
    if config:
        os.makedirs(os.path.join(home, "zidane"), exist_ok=True)
        with open(os.path.join(home, "zidane", "config.toml"), "w") as file:
            file.write(CONFIG)
    return subprocess.run([binary, *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=WAIT * 3)


# Set by the case from its arguments: the `[fleet]` table of the config file.
CONFIG = ""


async def persons_commands(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    """`zidane ps / logs / wait / kill` with --restate reach the tasks the sessions of the
    workspace started on the fleet; the config file's [fleet] table does as the flags; a
    person's looking claims no end the session is to tell."""
    global CONFIG
    CONFIG = f'[fleet]\nrestate = "{ingress}"\nrestate_admin = "{admin}"\n'
    flags = ["--restate", ingress, "--workers", "w1,w2"]
    gate = os.path.join(fleet, "go-person")
    async with session(binary, workspace, user_dir, flags) as client:
        gated = await start(client, f"echo waiting; while [ ! -e {gate} ]; do sleep 0.05; done; exit 9")
        killed = await start(client, "echo to-be-killed; sleep 300")
        # Last: no later result of this session's could tell its end before it is counted.
        lines = await start(client, "for i in 1 2 3; do echo line-$i; done; exit 2")

        listed = person(binary, workspace, user_dir, fleet, "ps", "--json", *flags)
        assert listed.returncode == 0, listed.stderr
        rows = {row["id"]: row for row in json.loads(listed.stdout)}
        for task in (gated, killed):
            row = rows[task["task_id"]]
            assert row["kind"] == "fleet" and row["state"] == "running", row
            assert row["host"] == f"worker {worker_of(task['output_path'], fleet)}", row
        table = person(binary, workspace, user_dir, fleet, "ps", config=True)
        assert table.returncode == 0 and killed["task_id"] in table.stdout, (table.stdout, table.stderr)

        waited = person(binary, workspace, user_dir, fleet, "wait", lines["task_id"], *flags)
        assert waited.returncode == 2, (waited.returncode, waited.stdout, waited.stderr)
        logs = person(binary, workspace, user_dir, fleet, "logs", lines["task_id"], config=True)
        assert logs.returncode == 0 and logs.stdout.splitlines() == ["line-1", "line-2", "line-3"], (logs.stdout, logs.stderr)
        tail = person(binary, workspace, user_dir, fleet, "logs", "-n", "1", lines["task_id"], *flags)
        assert tail.stdout.splitlines() == ["line-3"], (tail.stdout, tail.stderr)

        # -f follows until the end: the gate opens while it follows.
        follow = subprocess.Popen(
            [binary, "logs", "-f", gated["task_id"], *flags], cwd=workspace, stdout=subprocess.PIPE, text=True,
            env={**{name: os.environ[name] for name in PASSED_ON if name in os.environ}, "ZIDANE_USER_DIR": user_dir},
        )
        await anyio.sleep(1.0)
        open(gate, "w").close()
        out, _ = follow.communicate(timeout=WAIT)
        assert follow.returncode == 0 and out.splitlines() == ["waiting"], (follow.returncode, out)

        ended = person(binary, workspace, user_dir, fleet, "kill", killed["task_id"], *flags)
        assert ended.returncode == 0 and "killed" in ended.stdout, (ended.stdout, ended.stderr)
        unknown = person(binary, workspace, user_dir, fleet, "wait", "bash_99", *flags)
        assert unknown.returncode != 0 and "bash_99" in unknown.stderr, (unknown.stdout, unknown.stderr)

        # The session is still told each end once: the person's looks claimed none.
        for task in (lines, gated, killed):
            assert await told_count(client, task["task_id"], WAIT) == 1, task


async def terminal_host(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    """`zidane -p … --wait` (the demo model) with the config file's [fleet] table: its
    task runs on a worker, its end is told; a later `zidane mcp` session in the same
    workspace lists that task and is not told it again."""
    global CONFIG
    CONFIG = f'[fleet]\nrestate = "{ingress}"\nworkers = ["w1", "w2"]\n'
    printed = person(binary, workspace, user_dir, fleet, "--demo", "-p", "build it", "--wait", config=True)
    assert printed.returncode == 0, (printed.stdout, printed.stderr)
    assert "<task-notification>" in printed.stdout or "exited" in printed.stdout, printed.stdout
    paths = re.findall(r"Output: (\S+\.log)", printed.stdout)
    assert paths, printed.stdout
    worker_of(paths[0], fleet)
    async with session(binary, workspace, user_dir, ["--restate", ingress, "--workers", "w1,w2"]) as client:
        first = await client.call_tool("list_tasks", {})
        assert first.structured_content["tasks"], text(first)
        assert told(first) == [], f"told again:\n{text(first)}"


def worker_pid(fleet: str, worker: str) -> int:
    """The pid of `zidane-worker --worker-id WORKER` whose disk is under `fleet`."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                args = file.read().split(b"\0")
        except OSError:
            continue
        if b"--worker-id" in args and worker.encode() in args and any(fleet.encode() in arg for arg in args):
            if alive(int(pid)):
                return int(pid)
    raise AssertionError(f"worker {worker} is not running")


def relaunch(args: list[bytes], labels: str) -> subprocess.Popen:
    """Starts a worker again with the command line `args` a stopped one had (its labels,
    given by a variable to the first one, as a flag), holding the orphan sweep's lock the
    Rust tests share while it starts; returns once it says it is ready."""
    import fcntl
    with open(os.environ["ZIDANE_TEST_SWEEP_LOCK"], "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        env = {name: value for name, value in os.environ.items()
               if name not in ("ZIDANE_WORKER_IDENTITY_KEYS", "ZIDANE_TEST_SWEEP_LOCK")}
        worker = subprocess.Popen(
            [arg.decode() for arg in args if arg] + ["--label", labels],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
        )
        line = worker.stdout.readline()
        assert line.startswith("ready "), f"the relaunched worker said {line!r}"
    return worker


async def worker_stops(binary: str, workspace: str, user_dir: str, ingress: str, admin: str, fleet: str) -> None:
    """A worker SIGTERMed drains: a start that only it could take is refused, another
    lands on the other worker, its running task ends and is told once, as it ended, and
    the worker exits by itself. A worker SIGKILLed: its task is told lost, once, when a
    worker with its id is back."""
    flags = ["--restate", ingress, "--workers", "w1,w2"]
    relaunched: list[subprocess.Popen] = []
    try:
        async with session(binary, workspace, user_dir, flags) as client:
            draining = await client.call_tool(
                "shell", {"command": "sleep 2; exit 7", "run_in_background": True, "labels": ["gpu"]})
            assert not draining.is_error, text(draining)
            task = draining.structured_content
            assert worker_of(task["output_path"], fleet) == "w2", task
            pid = worker_pid(fleet, "w2")
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                args = file.read().split(b"\0")
            os.kill(pid, signal.SIGTERM)
            await anyio.sleep(0.3)
            refused = await client.call_tool(
                "shell", {"command": "echo never", "run_in_background": True, "labels": ["gpu"]})
            assert refused.is_error and "gpu" in text(refused), text(refused)
            elsewhere = await start(client, "true")
            assert worker_of(elsewhere["output_path"], fleet) == "w1", elsewhere
            # The drained worker serves its tables until the connected session was told
            # the end, as it ended (exited 7, not lost), then leaves by itself.
            assert await told_count(client, task["task_id"], WAIT) == 1
            assert "<exit-code>7</exit-code>" in BLOCKS[task["task_id"]], BLOCKS[task["task_id"]]
            await until("the drained worker exits by itself once its end was told", lambda: not alive(pid))
            relaunched.append(relaunch(args, "gpu,linux"))

            # Killed outright with a task running on it.
            doomed = await client.call_tool(
                "shell", {"command": "sleep 300", "run_in_background": True, "labels": ["gpu"]})
            assert not doomed.is_error, text(doomed)
            doomed = doomed.structured_content
            assert worker_of(doomed["output_path"], fleet) == "w2", doomed
            relaunched[-1].kill()
            relaunched[-1].wait()
            relaunched.append(relaunch(args, "gpu,linux"))
            assert await told_count(client, doomed["task_id"], WAIT) == 1
            listed = (await client.call_tool("list_tasks", {})).structured_content
            [entry] = [t for t in listed["tasks"] if t["task_id"] == doomed["task_id"]]
            assert entry["status"] == "lost", entry
    finally:
        for worker in relaunched:
            worker.kill()
            worker.wait()


CASES = {
    "worker-stops": worker_stops,
    "persons-commands": persons_commands,
    "terminal-host": terminal_host,
    "re-adopted": re_adopted,
    "two-sessions": two_sessions,
    "labels": labels,
    "runs-there": runs_there,
    "named-workers": named_workers,
}


async def main() -> None:
    case, binary, workspace, user_dir, ingress, admin, fleet = sys.argv[1:8]
    await CASES[case](binary, workspace, user_dir, ingress, admin, fleet)
    print("ok")


if __name__ == "__main__":
    run_main(main)
