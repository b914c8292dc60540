"""The client's MCP roots become the session's workspace roots, with the official Python
MCP SDK.

    python mcp_roots.py <case> <zidane binary> <home> <workspace> <user dir> <root one> <root two> <other>

The test (mcp_roots.rs) makes every dir, none under `/tmp` nor under the workspace, so
the sandbox forbids writing them unless they are roots. This client starts `zidane mcp`
with default settings (the sandbox on, `workspace-write`) in the workspace. The case
says what the client does:

- `roots`: it declares roots and lists `root one` (as a percent-encoded `file://` URI),
  an `https://` URI, a relative `file:` one and one on another host: a command writes
  `root one`, not `other`. Then it lists `root two` alone and says so
  (`roots/list_changed`): a command writes `root two`, and still `root one` (roots only
  add).
- `no-roots`: it declares no roots: a command writes neither.
- `silent`: it declares roots and never answers `roots/list`: every call is answered
  at once all the same, and a command writes no root.

Prints `ok` and exits 0 when the case held; any other exit is a failure, with the reason.
"""

import os
import pathlib
import sys
import time
import warnings

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sdk_common import text, run_main

# The roots capability is deprecated for 2026-07-28 servers; zidane speaks 2025-11-25.
warnings.simplefilter("ignore")

# Longest a step waits for something that should happen.
WAIT = 10.0
# What this client passes on to the server from its own environment.
PASSED_ON = ("ZIDANE_SWEEP_ORPHANS", "ZIDANE_PROCESS_PATH", "ZIDANE_BWRAP", "PATH", "LANG")


async def write(session: ClientSession, directory: str) -> bool:
    """Whether a sandboxed command writes a stamp into `directory` (checked on disk)."""
    stamp = os.path.join(directory, "stamp")
    result = await session.call_tool("shell", {"command": f"echo stamped > '{stamp}'"})
    written = os.path.exists(stamp)
    assert written == text(result).endswith("Exit code: 0"), f"{stamp}: {text(result)}"
    if written:
        os.remove(stamp)
    return written


async def writes_soon(session: ClientSession, directory: str) -> None:
    """A command writes `directory` within WAIT: the server adds a root once the
    client's answer reaches it, a moment after the client sends it."""
    deadline = time.monotonic() + WAIT
    while not await write(session, directory):
        assert time.monotonic() < deadline, f"not writable within {WAIT}s: {directory}"
        await anyio.sleep(0.1)


async def main() -> None:
    case, binary, home, workspace, user_dir, root_one, root_two, other = sys.argv[1:9]
    listed: list[list[types.Root]] = [
        [
            types.Root(uri=pathlib.Path(root_one).as_uri(), name="root one"),
            # What the SDK would refuse to list, as a careless client lists it.
            types.Root.model_construct(uri="https://example.com/project"),
            types.Root.model_construct(uri="file:relative/dir"),
            types.Root(uri="file://server/share"),
        ],
        [types.Root(uri=pathlib.Path(root_two).as_uri())],
    ]
    asked = anyio.Event()
    answered: list[int] = []

    async def roots(context) -> types.ListRootsResult:
        asked.set()
        if case == "silent":
            await anyio.sleep(3600)  # never answers
        answered.append(1)
        return types.ListRootsResult(roots=listed[min(len(answered), len(listed)) - 1])

    env = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    env["HOME"] = home
    params = StdioServerParameters(command=binary, args=["mcp", "--user-dir", user_dir], env=env, cwd=workspace)
    callback = None if case == "no-roots" else roots
    async with stdio_client(params) as (read, write_stream):
        async with ClientSession(read, write_stream, list_roots_callback=callback) as session:
            with anyio.fail_after(WAIT):
                await session.initialize()
            # The workspace itself is writable whatever the client's roots.
            assert await write(session, workspace), "the workspace is not writable"
            if case == "roots":
                with anyio.fail_after(WAIT):
                    await asked.wait()
                await writes_soon(session, root_one)
                assert not await write(session, other), "a dir that is no root was written"
                assert not await write(session, root_two), "a root not yet listed was written"
                # The roots change: root two is added, root one stays.
                await session.send_roots_list_changed()
                deadline = time.monotonic() + WAIT
                while len(answered) < 2:
                    assert time.monotonic() < deadline, "roots/list was not asked again"
                    await anyio.sleep(0.02)
                await writes_soon(session, root_two)
                assert await write(session, root_one), "a removed root stopped being writable"
                assert not await write(session, other), "a dir that is no root was written"
            elif case == "no-roots":
                assert not asked.is_set()
                for directory in (root_one, root_two, other):
                    assert not await write(session, directory), f"{directory} was written"
            elif case == "silent":
                with anyio.fail_after(WAIT):
                    await asked.wait()
                # Nothing waits for the answer that never comes.
                with anyio.fail_after(5):
                    for directory in (root_one, other):
                        assert not await write(session, directory), f"{directory} was written"
                    listed_tools = await session.list_tools()
                    assert any(tool.name == "shell" for tool in listed_tools.tools)
            else:
                raise AssertionError(f"unknown case {case}")
    print("ok")


if __name__ == "__main__":
    run_main(main)
