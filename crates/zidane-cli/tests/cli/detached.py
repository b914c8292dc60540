"""Detached tasks through `zidane mcp`, driven by the official Python MCP SDK.

    python detached.py <case> <zidane binary> <workspace> <user dir>

The test (detached.rs) gives this client a private runtime directory of its own
(`XDG_RUNTIME_DIR`), so the supervisor it starts is its own; `ZIDANE_PROCESS_PATH` and
the sweep setting pass on to every server. Each case starts `zidane mcp` sessions in
the workspace one after another, as a host restarted by a person would, and checks
what the model sees in each. Prints `ok` and exits 0 when everything held.
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
WAIT = 15.0
PASSED_ON = ("ZIDANE_SWEEP_ORPHANS", "ZIDANE_PROCESS_PATH", "ZIDANE_BWRAP", "PATH", "LANG", "HOME", "XDG_RUNTIME_DIR")
NOTIFICATION = re.compile(r"<task-notification>\n<task-id>(bash_d?\d+)</task-id>")


async def until(what: str, check, wait: float = WAIT) -> None:
    """Polls `check` until it holds, for at most `wait`."""
    deadline = time.monotonic() + wait
    while not check():
        assert time.monotonic() < deadline, f"not within {wait}s: {what}"
        await anyio.sleep(0.02)


def supervisor_pids(user_dir: str) -> list[int]:
    """The supervisors of `user_dir` running: `zidane supervisor serve --user-dir DIR`."""
    return processes_with_args("supervisor", "serve", user_dir)


def processes_with_args(*args: str) -> list[int]:
    """The live processes with every one of `args` among their arguments."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as file:
                argv = file.read().split(b"\0")
        except OSError:
            continue
        if all(arg.encode() in argv for arg in args) and alive(int(entry)):
            found.append(int(entry))
    return found


def told(result: types.CallToolResult) -> list[str]:
    """The task ids whose `<task-notification>` this result carries."""
    return NOTIFICATION.findall(text(result))


class Host:
    """What starts sessions: the binary, the workspace, the user dir."""

    def __init__(
        self,
        binary: str,
        workspace: str,
        user_dir: str,
        flags: list[str] | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.binary = binary
        self.workspace = workspace
        self.user_dir = user_dir
        self.flags = flags or []
        self.extra_env = extra_env or {}

    def env(self) -> dict[str, str]:
        return {**{name: os.environ[name] for name in PASSED_ON if name in os.environ}, **self.extra_env}

    @asynccontextmanager
    async def session(self):
        params = StdioServerParameters(
            command=self.binary,
            args=["mcp", "--user-dir", self.user_dir, *self.flags],
            env=self.env(),
            cwd=self.workspace,
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session

    def zidane(self, *args: str) -> subprocess.CompletedProcess:
        """A person's command (`zidane ps`, ...), with the same user dir."""
        return subprocess.run(
            [self.binary, *args],
            env={**self.env(), "ZIDANE_USER_DIR": self.user_dir},
            capture_output=True,
            text=True,
            timeout=WAIT * 2,
        )

    def ps(self) -> list[dict]:
        listed = self.zidane("ps", "--all", "--json")
        assert listed.returncode == 0, listed.stderr
        return json.loads(listed.stdout)


async def start_detached(session: ClientSession, command: str) -> dict:
    started = await session.call_tool("shell", {"command": command, "detach": True})
    assert not started.is_error, text(started)
    content = started.structured_content
    assert content["task_id"].startswith("bash_d"), content
    return content


async def list_tasks(session: ClientSession) -> tuple[dict[str, dict], types.CallToolResult]:
    listed = await session.call_tool("list_tasks", {})
    assert not listed.is_error, text(listed)
    return {task["task_id"]: task for task in listed.structured_content["tasks"]}, listed


def gate(workspace: str, name: str) -> tuple[str, str]:
    """A command that waits for `name` in the workspace, then ends with 3; and the file."""
    path = os.path.join(workspace, name)
    return f"echo started; while [ ! -e {path} ]; do sleep 0.05; done; echo finishing; exit 3", path


async def outlives(host: Host, how: str) -> None:
    """A detached task outlives its host's end (`how`: stdin EOF, SIGTERM, SIGKILL) while a
    plain background task of the same session ends; the next session lists it, waits for
    it and is told its end once; the session after that is not told again."""
    command, go = gate(host.workspace, f"go-{how}")
    async with host.session() as first:
        detached = await start_detached(first, command)
        plain = await first.call_tool("shell", {"command": "sleep 300", "run_in_background": True})
        plain_pid = plain.structured_content["pid"]
        listed, _ = await list_tasks(first)
        assert listed[detached["task_id"]].get("detached") is True, listed
        pid = server_pid()
        if how == "sigterm":
            os.kill(pid, signal.SIGTERM)
        elif how == "sigkill":
            os.kill(pid, signal.SIGKILL)
        if how != "eof":
            await until("zidane mcp ends", lambda: not alive(pid))
    await until("the plain task ends with its session", lambda: not alive(plain_pid))
    assert alive(detached["pid"]), f"the detached task died with its host ({how})"
    rows = {row["id"]: row for row in host.ps()}
    assert rows[detached["task_id"]]["state"] == "running", rows
    async with host.session() as second:
        listed, _ = await list_tasks(second)
        assert detached["task_id"] in listed, f"the next session does not list it: {listed}"
        assert listed[detached["task_id"]]["status"] == "running", listed
        log = await second.call_tool("read_file", {"path": detached["output_path"]})
        assert "started" in text(log), text(log)
        open(go, "w").close()
        waited = await second.call_tool("wait_task", {"task_id": detached["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 3, waited.structured_content
        after, result = await list_tasks(second)
        assert detached["task_id"] not in told(result), text(result)
    async with host.session() as third:
        _, result = await list_tasks(third)
        assert told(result) == [], f"told again in a later session:\n{text(result)}"
        again, _ = await list_tasks(third)
        assert detached["task_id"] in again, again


async def told_once_later(host: Host) -> None:
    """An end that came while no session was connected is told once, at the first result
    of the next session of the workspace, and never again."""
    command, go = gate(host.workspace, "go-later")
    async with host.session() as first:
        detached = await start_detached(first, command)
        os.kill(server_pid(), signal.SIGKILL)
    open(go, "w").close()
    ended = host.zidane("wait", detached["task_id"])
    assert ended.returncode == 3, (ended.returncode, ended.stdout, ended.stderr)
    async with host.session() as second:
        _, first_result = await list_tasks(second)
        assert told(first_result) == [detached["task_id"]], f"not told at the first result:\n{text(first_result)}"
        _, next_result = await list_tasks(second)
        assert told(next_result) == [], text(next_result)
    async with host.session() as third:
        _, result = await list_tasks(third)
        assert told(result) == [], f"told again:\n{text(result)}"


async def supervisor_killed(host: Host) -> None:
    """The supervisor SIGKILLed mid-task: the task runs on, its exit code is recorded, and
    the next supervisor re-adopts it."""
    command, go = gate(host.workspace, "go-supervisor")
    async with host.session() as first:
        detached = await start_detached(first, command)
        supervisors = supervisor_pids(host.user_dir)
        assert len(supervisors) == 1, supervisors
        os.kill(supervisors[0], signal.SIGKILL)
        await until("the supervisor is gone", lambda: not alive(supervisors[0]))
        assert alive(detached["pid"]), "the task died with its supervisor"
        # The monitor it kept ready for the next task (its number given, its directory
        # made, its socket bound) sees its supervisor gone and leaves nothing behind.
        tasks = os.path.join(host.user_dir, "detached", "tasks")
        mine = os.path.basename(os.path.dirname(detached["output_path"]))
        await until("the ready monitor's directory is removed", lambda: os.listdir(tasks) == [mine])
        run = os.path.join(os.environ["XDG_RUNTIME_DIR"], "zidane")
        await until(
            "the ready monitor's socket is removed",
            lambda: [name for name in os.listdir(run) if "-task-" in name] == [f"{os.path.basename(socket_path(host))[:-5]}-task-{mine}.sock"],
        )
        open(go, "w").close()
        await until("the task ends", lambda: not alive(detached["pid"]))
        # A new supervisor, started by the next detached start, re-adopts it.
        other = await start_detached(first, "sleep 0.2")
        restarted = supervisor_pids(host.user_dir)
        assert len(restarted) == 1 and restarted != supervisors, restarted
        waited = await first.call_tool("wait_task", {"task_id": detached["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 3, waited.structured_content
        await first.call_tool("wait_task", {"task_id": other["task_id"], "timeout_ms": int(WAIT * 1000)})


def socket_path(host: Host) -> str:
    """The supervisor's socket, as the test made the runtime dir."""
    run = os.path.join(os.environ["XDG_RUNTIME_DIR"], "zidane")
    socks = [name for name in os.listdir(run) if name.endswith(".sock") and "-task-" not in name]
    assert len(socks) == 1, socks
    return os.path.join(run, socks[0])


def as_nobody(host: Host, *args: str) -> subprocess.CompletedProcess:
    """A person's command run by another user (`nobody`)."""
    return subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", host.binary, *args],
        env={**host.env(), "ZIDANE_USER_DIR": host.user_dir},
        capture_output=True,
        text=True,
        timeout=WAIT * 2,
    )


async def person(host: Host) -> None:
    """`zidane ps / logs / logs -f / wait / kill` on a real task: kill takes the whole
    tree, a `setsid` escapee included, and the connected session is told once; another
    user sees no task and kills none."""
    # The escapee is found by its own argument: inside the sandbox's pid namespace `$!`
    # is not the pid this side sees.
    nap = f"300.{os.getpid()}"
    command = f"setsid sleep {nap} & for i in 1 2 3 4 5; do echo line $i; done; sleep 300"
    async with host.session() as session:
        detached = await start_detached(session, command)
        task_id = detached["task_id"]
        await until("the escapee runs", lambda: processes_with_args(nap) != [])
        [escapee_pid] = processes_with_args(nap)
        await until("the lines are logged", lambda: "line 5" in open(detached["output_path"]).read())
        table = host.zidane("ps")
        assert table.returncode == 0 and task_id in table.stdout and "running" in table.stdout, table
        assert "\x1b[" not in table.stdout, "colour on a pipe"
        tail = host.zidane("logs", "-n", "2", task_id.removeprefix("bash_"))
        assert tail.stdout == "line 4\nline 5\n", repr(tail.stdout)
        follow = subprocess.Popen(
            [host.binary, "logs", "-f", task_id],
            env={**host.env(), "ZIDANE_USER_DIR": host.user_dir},
            stdout=subprocess.PIPE,
            text=True,
        )
        if os.geteuid() == 0:
            theirs = as_nobody(host, "ps", "--all", "--json")
            assert task_id not in theirs.stdout, f"another user sees the task:\n{theirs.stdout}"
            refused = as_nobody(host, "kill", task_id)
            assert refused.returncode != 0, refused
            assert alive(detached["pid"]), "another user killed the task"
        killed = host.zidane("kill", task_id)
        assert killed.returncode == 0, killed
        assert "killed" in killed.stdout, killed.stdout
        assert not alive(detached["pid"]), "the task outlived its kill"
        await until("the setsid escapee dies with its task", lambda: not alive(escapee_pid))
        followed, _ = follow.communicate(timeout=WAIT)
        assert follow.returncode == 0 and "line 1" in followed and "line 5" in followed, followed
        waited = host.zidane("wait", task_id)
        assert waited.returncode == 143, (waited.returncode, waited.stdout, waited.stderr)
        _, result = await list_tasks(session)
        assert told(result) == [task_id], f"the session is not told the kill:\n{text(result)}"
        assert "killed by the user (zidane kill)" in text(result), f"the kill is not the user's:\n{text(result)}"
        _, again = await list_tasks(session)
        assert told(again) == [], text(again)
    unknown = host.zidane("kill", "d999")
    assert unknown.returncode != 0 and "no detached task" in unknown.stderr, unknown


async def input_after_restart(host: Host) -> None:
    """Detached tasks waiting for input — one on a pipe, one in a terminal — outlive their
    host; the next session of the workspace types into them, reads the terminal's screen,
    and is told each end once. The kill of a plain detached task through the monitor's
    socket ends it as `shell_kill` does."""
    async with host.session() as first:
        piped = await first.call_tool(
            "shell", {"command": "read line; echo got $line; exit 4", "detach": True, "stdin": "pipe"}
        )
        assert not piped.is_error, text(piped)
        piped = piped.structured_content
        tty = await first.call_tool(
            "shell",
            {"command": "printf 'name? '; read name; echo hello $name; exit 5", "detach": True, "tty": True},
        )
        assert not tty.is_error, text(tty)
        tty = tty.structured_content
        os.kill(server_pid(), signal.SIGKILL)
    assert alive(piped["pid"]) and alive(tty["pid"]), "a detached task died with its host"
    async with host.session() as second:
        tasks, _ = await list_tasks(second)
        assert tasks[piped["task_id"]]["status"] == "running", tasks
        typed = await second.call_tool("shell_input", {"task_id": piped["task_id"], "text": "hello\n"})
        assert not typed.is_error, text(typed)
        waited = await second.call_tool("wait_task", {"task_id": piped["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 4, waited.structured_content
        assert "got hello" in open(piped["output_path"]).read()
        await until(
            "the prompt shows",
            lambda: "name?" in open(tty["output_path"], errors="replace").read(),
        )
        screen = await second.call_tool("shell_screen", {"task_id": tty["task_id"]})
        assert not screen.is_error and "name?" in text(screen), text(screen)
        typed = await second.call_tool("shell_input", {"task_id": tty["task_id"], "text": "bob", "keys": ["enter"]})
        assert not typed.is_error, text(typed)
        waited = await second.call_tool("wait_task", {"task_id": tty["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 5, waited.structured_content
        assert "hello bob" in open(tty["output_path"], errors="replace").read()
        # An ended task takes no input, and says so.
        late = await second.call_tool("shell_input", {"task_id": piped["task_id"], "text": "more\n"})
        assert late.is_error, text(late)
        _, result = await list_tasks(second)
        assert told(result) == [], f"told twice:\n{text(result)}"
    async with host.session() as third:
        _, result = await list_tasks(third)
        assert told(result) == [], f"told again:\n{text(result)}"


async def pid_reuse(host: Host) -> None:
    """A monitor whose pid now belongs to an unrelated process is never signalled: the
    supervisor records the task lost, and a kill ends nothing."""
    async with host.session() as session:
        detached = await start_detached(session, "sleep 300")
        task_id = detached["task_id"]
    for pid in supervisor_pids(host.user_dir):
        os.kill(pid, signal.SIGKILL)
        await until("the supervisor is gone", lambda: not alive(pid))
    stranger = subprocess.Popen(["sleep", "300"])
    try:
        number = task_id.removeprefix("bash_d")
        started_file = os.path.join(host.user_dir, "detached", "tasks", number, "started.json")
        with open(started_file) as file:
            started = json.load(file)
        real_monitor = started["monitor"]["pid"]
        with open(f"/proc/{stranger.pid}/stat") as stat:
            start_time = int(stat.read().rsplit(")", 1)[1].split()[19])
        # The stranger's pid, with a start time that is not its own: a recycled pid.
        started["monitor"] = {"pid": stranger.pid, "start_time": start_time + 1}
        with open(started_file, "w") as file:
            json.dump(started, file)
        os.kill(real_monitor, signal.SIGKILL)
        await until("the real monitor is gone", lambda: not alive(real_monitor))
        killed = host.zidane("kill", task_id)
        assert killed.returncode == 0, killed
        assert stranger.poll() is None, "an unrelated process with the monitor's pid was signalled"
        rows = {row["id"]: row for row in host.ps()}
        assert rows[task_id]["state"] in ("lost", "killed"), rows
    finally:
        stranger.kill()
        stranger.wait()


async def sandbox_socket(host: Host) -> None:
    """A sandboxed command, in the session or detached, cannot reach the supervisor's
    socket, so it cannot start a command outside its sandbox through it."""
    async with host.session() as session:
        await start_detached(session, "true")
        sock = socket_path(host)
        # The supervisor's socket, and the monitors' beside it (a detached task's own
        # among them: its input and kill go through it).
        monitors = " ".join(sock.removesuffix(".sock") + f"-task-{n}.sock" for n in range(1, 8))
        probe = (
            "for sock in " + sock + " " + monitors + "; do "
            "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"CONNECTED\", sys.argv[1])' "
            "$sock 2>/dev/null; done; ls -a $XDG_RUNTIME_DIR/zidane"
        )
        result = await session.call_tool("shell", {"command": probe})
        assert "CONNECTED" not in text(result), f"a sandboxed command reached the supervisor:\n{text(result)}"
        assert ".sock" not in text(result), text(result)
        detached = await start_detached(session, probe)
        waited = await session.call_tool("wait_task", {"task_id": detached["task_id"], "timeout_ms": int(WAIT * 1000)})
        log = open(detached["output_path"]).read()
        assert "CONNECTED" not in log and ".sock" not in log, f"a detached task reached the supervisor:\n{log}"
        assert waited.structured_content["exit"] is not None


async def clean(host: Host) -> None:
    """`zidane clean` removes ended detached tasks whose end was told, with their logs,
    and never a running task or one whose end no model was told yet."""
    command, go = gate(host.workspace, "go-clean")
    async with host.session() as session:
        done = await start_detached(session, "echo done")
        waited = await session.call_tool("wait_task", {"task_id": done["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content
        running = await start_detached(session, "sleep 300")
        untold = await start_detached(session, command)

        def told_in_ps() -> bool:
            return {row["id"]: row for row in host.ps()}[done["task_id"]]["told"]

        await until("the completed wait is recorded as told", told_in_ps)
        os.kill(server_pid(), signal.SIGKILL)
    # It ends while no session is connected: no model was told, none is yet.
    open(go, "w").close()
    assert host.zidane("wait", untold["task_id"]).returncode == 3
    young = host.zidane("clean", "--older-than", "1")
    assert done["task_id"] not in young.stdout, young.stdout
    dry = host.zidane("clean", "--dry-run")
    assert dry.returncode == 0, dry
    assert f"would remove detached task {done['task_id']}" in dry.stdout, dry.stdout
    assert os.path.exists(done["output_path"]), "a dry run removed a log"
    cleaned = host.zidane("clean")
    assert cleaned.returncode == 0, cleaned
    assert f"removed detached task {done['task_id']}" in cleaned.stdout, cleaned.stdout
    for kept in (untold, running):
        assert f"task {kept['task_id']} " not in cleaned.stdout, cleaned.stdout
        assert os.path.exists(kept["output_path"]), f"{kept['task_id']}'s log was removed"
    assert not os.path.exists(done["output_path"]), "the told task's log is still there"
    rows = {row["id"]: row for row in host.ps()}
    assert done["task_id"] not in rows and untold["task_id"] in rows and running["task_id"] in rows, rows


async def host_tasks(host: Host) -> None:
    """`zidane ps` shows a running host's own session tasks too (kind `session`, with
    CPU and memory); `zidane logs` reads one and `zidane kill` ends it through its host,
    whose model is told the user killed it."""
    async with host.session() as session:
        started = await session.call_tool(
            "shell", {"command": "echo host task; sleep 300", "run_in_background": True}
        )
        assert not started.is_error, text(started)
        task = started.structured_content
        person_id = f"{server_pid()}:{task['task_id']}"

        def listed() -> dict | None:
            return {row["id"]: row for row in host.ps()}.get(person_id)

        await until("the host's task is in zidane ps", lambda: listed() is not None)
        row = listed()
        assert row["kind"] == "session" and row["state"] == "running", row
        assert row["pid"] == task["pid"] and row["host"] == "zidane mcp", row
        assert row["rss_bytes"] and row["rss_bytes"] > 0 and row["cpu_ms"] is not None, row
        table = host.zidane("ps")
        assert person_id in table.stdout and "CPU" in table.stdout and "MEM" in table.stdout, table.stdout
        await until("the line is logged", lambda: "host task" in open(task["output_path"]).read())
        logs = host.zidane("logs", person_id)
        assert logs.stdout == "host task\n", repr(logs.stdout)
        refused = host.zidane("wait", person_id)
        assert refused.returncode != 0 and "waits for it" in refused.stderr, refused
        killed = host.zidane("kill", person_id)
        assert killed.returncode == 0, killed
        await until("the host's task ends", lambda: not alive(task["pid"]))
        await until("it leaves zidane ps", lambda: listed() is None)
        waited = await session.call_tool("wait_task", {"task_id": task["task_id"], "timeout_ms": int(WAIT * 1000)})
        assert waited.structured_content["exit"]["exit_code"] == 143, waited.structured_content
        # The host ended it itself, so its model is told who did.
        assert waited.structured_content["exit"].get("kill_reason") == {"kind": "user"}, waited.structured_content
    # The supervisor kept no task of its own: nothing of zidane's stays behind the host.
    await until("the supervisor leaves once it keeps nothing", lambda: supervisor_pids(host.user_dir) == [])


async def start_one(host: Host) -> None:
    """Starts one detached `sleep 300` in the workspace and ends the session abruptly,
    leaving the task for the test's next host (the terminal's picker)."""
    async with host.session() as session:
        detached = await start_detached(session, "sleep 300")
        assert detached["task_id"] == "bash_d1", detached
        os.kill(server_pid(), signal.SIGKILL)


async def environment(host: Host) -> None:
    """A detached task gets the environment of the session that starts it, under that
    session's policy: its variables and never its secrets, whichever session started
    the supervisor, and whichever session's policy the monitor kept ready prepared."""
    command = "echo who=$ZIDANE_TEST_WHO token=${DEPLOY_TOKEN:-none}"
    for who in ("first", "second"):
        session_host = Host(
            host.binary, host.workspace, host.user_dir, extra_env={"ZIDANE_TEST_WHO": who, "DEPLOY_TOKEN": "hunter2"}
        )
        async with session_host.session() as session:
            # The second start of a session runs in the context the monitor kept ready
            # built for the first's policy; the first of the next session's does not.
            for _ in range(2):
                detached = await start_detached(session, command)
                await session.call_tool("wait_task", {"task_id": detached["task_id"], "timeout_ms": int(WAIT * 1000)})
                log = open(detached["output_path"]).read()
                assert log == f"who={who} token=none\n", repr(log)


SYSTEMD_RUN = """#!/bin/sh
# A stand-in for systemd-run: records its arguments, then fails ({fails}) or runs the
# command after `--` in place, as `systemd-run --scope` does.
echo "$@" >> "$(dirname "$0")/calls"
[ {fails} = yes ] && exit 1
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""


async def systemd_scope(host: Host, fails: bool) -> None:
    """Where the user's systemd manager runs, the supervisor starts through
    `systemd-run --user --scope` (a stand-in here, which has no systemd); where that
    fails, it starts as it does elsewhere. Either way a detached task runs and ends."""
    bin_dir = os.path.join(host.workspace, "..", "fake-bin")
    os.makedirs(bin_dir, exist_ok=True)
    script = os.path.join(bin_dir, "systemd-run")
    with open(script, "w") as file:
        file.write(SYSTEMD_RUN.format(fails="yes" if fails else "no"))
    os.chmod(script, 0o755)
    manager = os.path.join(os.environ["XDG_RUNTIME_DIR"], "systemd")
    os.makedirs(manager, exist_ok=True)
    open(os.path.join(manager, "private"), "w").close()
    os.environ["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    try:
        async with host.session() as session:
            detached = await start_detached(session, "echo scoped")
            waited = await session.call_tool("wait_task", {"task_id": detached["task_id"], "timeout_ms": int(WAIT * 1000)})
            assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content
        calls = open(os.path.join(bin_dir, "calls")).read()
        assert "--user --scope" in calls and "--unit=zidane-supervisor-" in calls, calls
        assert f"supervisor serve --user-dir {host.user_dir}" in calls, calls
        [supervisor] = supervisor_pids(host.user_dir)
        with open(f"/proc/{supervisor}/comm") as comm:
            assert comm.read().strip() == "zidane", "the supervisor is not the scope's own process"
    finally:
        os.environ["PATH"] = os.environ["PATH"].split(":", 1)[1]
        os.remove(os.path.join(manager, "private"))


async def ready_monitor_killed(host: Host) -> None:
    """The supervisor keeps a monitor started ahead of its task; killed by hand, the
    next start starts one at once (the plain path) and runs; the one after is ready."""
    async with host.session() as session:
        first = await start_detached(session, "echo first")
        state = os.path.join(host.user_dir, "detached")

        def waiting() -> list[int]:
            busy = set()
            tasks = os.path.join(state, "tasks")
            for n in os.listdir(tasks):
                try:
                    with open(os.path.join(tasks, n, "started.json")) as file:
                        busy.add(json.load(file)["monitor"]["pid"])
                except OSError:
                    pass
            return [pid for pid in processes_with_args("supervisor", "monitor", state) if pid not in busy]

        await until("a monitor waits for the next task", lambda: len(waiting()) == 1)
        [ready] = waiting()
        os.kill(ready, signal.SIGKILL)
        await until("the ready monitor is gone", lambda: not alive(ready))
        for command in ("echo second", "echo third"):
            started = await start_detached(session, command)
            waited = await session.call_tool("wait_task", {"task_id": started["task_id"], "timeout_ms": int(WAIT * 1000)})
            assert waited.structured_content["exit"]["exit_code"] == 0, waited.structured_content
            assert open(started["output_path"]).read() == command.removeprefix("echo ") + "\n"
        await session.call_tool("wait_task", {"task_id": first["task_id"], "timeout_ms": int(WAIT * 1000)})


async def start_terminal(host: Host) -> None:
    """Starts one detached task in a terminal, asking a question, and ends the session
    abruptly, leaving the task for a person to attach to."""
    command = "printf 'name? '; read name; echo hello $name; stty size; printf 'again? '; read again; exit 5"
    async with host.session() as session:
        started = await session.call_tool("shell", {"command": command, "detach": True, "tty": True, "rows": 10, "cols": 50})
        assert not started.is_error, text(started)
        assert started.structured_content["task_id"] == "bash_d1", started.structured_content
        os.kill(server_pid(), signal.SIGKILL)


async def two_sessions(host: Host) -> None:
    """With two sessions of the workspace connected, the one that started the task is
    told its end, once; the other is never told it."""
    command, go = gate(host.workspace, "go-two")
    async with host.session() as starter, host.session() as other:
        detached = await start_detached(starter, command)
        listed, _ = await list_tasks(other)
        assert listed[detached["task_id"]]["status"] == "running", listed
        open(go, "w").close()
        await until("the task ends", lambda: not alive(detached["pid"]))
        await until(
            "its end is recorded",
            lambda: {row["id"]: row for row in host.ps()}[detached["task_id"]]["state"] != "running",
        )
        seen_by_other = []
        for _ in range(3):
            _, result = await list_tasks(other)
            seen_by_other += told(result)
        told_to_starter = []
        for _ in range(3):
            _, result = await list_tasks(starter)
            told_to_starter += told(result)
        assert seen_by_other == [], f"the other session was told: {seen_by_other}"
        assert told_to_starter == [detached["task_id"]], told_to_starter


CASES = {
    "outlives-eof": lambda host: outlives(host, "eof"),
    "outlives-sigterm": lambda host: outlives(host, "sigterm"),
    "outlives-sigkill": lambda host: outlives(host, "sigkill"),
    "told-once-later": told_once_later,
    "supervisor-killed": supervisor_killed,
    "person": person,
    "pid-reuse": pid_reuse,
    "sandbox-socket": sandbox_socket,
    # Tasks that do not get XDG_RUNTIME_DIR (nor does their monitor) still have the
    # supervisor's directory hidden.
    "sandbox-socket-core-env": lambda host: sandbox_socket(Host(host.binary, host.workspace, host.user_dir, ["--env-inherit", "core"])),
    "clean": clean,
    "host-tasks": host_tasks,
    "start-one": start_one,
    "input-after-restart": input_after_restart,
    "start-terminal": start_terminal,
    "environment": environment,
    "ready-monitor-killed": ready_monitor_killed,
    "systemd-scope": lambda host: systemd_scope(host, fails=False),
    "systemd-scope-fails": lambda host: systemd_scope(host, fails=True),
    "two-sessions": two_sessions,
}


async def main() -> None:
    case, binary, workspace, user_dir = sys.argv[1:5]
    host = Host(binary, workspace, user_dir)
    try:
        await CASES[case](host)
    finally:
        # Nothing outlives the test: every task still running is killed, then the
        # supervisor leaves; but a task started for the test's next host stays.
        for row in host.ps() if not case.startswith("start-") else []:
            if row["state"] == "running":
                host.zidane("kill", row["id"])
        for pid in supervisor_pids(host.user_dir) if not case.startswith("start-") else []:
            os.kill(pid, signal.SIGTERM)
    print("ok")


if __name__ == "__main__":
    run_main(main)
