"""What the Python MCP SDK clients beside this file share: a tool result's text, whether a
process lives, the `zidane mcp` a client started, and running a client's `main` so that a failure is told briefly.

A script's own directory is on `sys.path` when Python runs it, so each imports this with
`from sdk_common import ...`.
"""

import os
import sys
import traceback
from collections.abc import Awaitable, Callable

import anyio
import mcp.types as types


def text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def server_pid() -> int:
    """The `zidane mcp` this client started last: its youngest live child named zidane."""
    me = os.getpid()
    found = []
    for tid in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{tid}/children") as file:
            for pid in file.read().split():
                with open(f"/proc/{pid}/comm") as comm:
                    if comm.read().strip() == "zidane" and alive(int(pid)):
                        found.append(int(pid))
    assert found, "zidane mcp is not a child of this client"
    return max(found)


def leaves(error: BaseException) -> list[BaseException]:
    """The errors an exception group (the SDK's task groups nest them) holds."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def run_main(main: Callable[[], Awaitable[None]]) -> None:
    """Runs `main`; on any failure prints, for each error it holds, the last three frames
    of `main`'s own script and the error, and exits 1."""
    script = main.__code__.co_filename
    try:
        anyio.run(main)
    except BaseException as error:  # noqa: BLE001 - told as the failure, briefly
        for leaf in leaves(error):
            frames = traceback.extract_tb(leaf.__traceback__)
            ours = [frame for frame in frames if frame.filename == script][-3:]
            print("".join(traceback.format_list(ours)), file=sys.stderr)
            print(f"{type(leaf).__name__}: {leaf}", file=sys.stderr)
        sys.exit(1)
