"""A command outside the sandbox, asked of a person through MCP elicitation, with the
official Python MCP SDK.

    python sandbox_approval.py <case> <zidane binary> <home> <workspace> <user dir> <outside dir>

The test (sandbox_approval.rs) makes a home, a workspace and an outside dir, none under
`/tmp`, so the sandbox forbids writing the outside dir. This client starts `zidane mcp`
with default settings (the sandbox on) and asks, as a model would, to write a file there
with `outside_sandbox: true`. The case says what its person does:

- `accept`: the client declares elicitation and approves: the file is written.
- `decline`: it declares elicitation and declines: nothing runs.
- `refuse`: it declares elicitation and accepts the form with `approve: false`: nothing runs.
- `timeout`: it declares elicitation and never answers; the server waits
  `ZIDANE_APPROVAL_TIMEOUT_MS` (set short here): nothing runs.
- `no-elicitation`: it declares no elicitation: the call is refused, naming the settings
  the user changes, and nothing runs.

Prints `ok` and exits 0 when the case held; any other exit is a failure, with the reason.
"""

import os
import sys
import warnings

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from sdk_common import text, run_main

warnings.simplefilter("ignore")

# How long the server waits for an answer in the `timeout` case, in milliseconds.
TIMEOUT_MS = 1500
# What this client passes on to the server from its own environment.
PASSED_ON = ("ZIDANE_SWEEP_ORPHANS", "ZIDANE_PROCESS_PATH", "ZIDANE_BWRAP", "PATH", "LANG")
JUSTIFICATION = "the release script writes its stamp beside the workspace"


async def main() -> None:
    case, binary, home, workspace, user_dir, outside = sys.argv[1:7]
    target = os.path.join(outside, "stamp")
    asked: list[types.ElicitRequestFormParams] = []

    async def person(context, params):
        asked.append(params)
        if case == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        if case == "refuse":
            return types.ElicitResult(action="accept", content={"approve": False})
        if case == "decline":
            return types.ElicitResult(action="decline")
        await anyio.sleep(3600)  # `timeout`: the person never answers
        raise AssertionError("unreachable")

    env = {name: os.environ[name] for name in PASSED_ON if name in os.environ}
    env["HOME"] = home
    env["ZIDANE_APPROVAL_TIMEOUT_MS"] = str(TIMEOUT_MS)
    params = StdioServerParameters(command=binary, args=["mcp", "--user-dir", user_dir], env=env, cwd=workspace)
    callback = None if case == "no-elicitation" else person
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=callback) as session:
            await session.initialize()
            shell = next(tool for tool in (await session.list_tools()).tools if tool.name == "shell")
            assert "Sandbox: workspace-write." in shell.description, shell.description
            properties = shell.input_schema["properties"]
            assert "outside_sandbox" in properties and "justification" in properties, properties

            # Inside the sandbox the outside dir cannot be written.
            inside = await session.call_tool("shell", {"command": f"echo inside > {target}"})
            assert not os.path.exists(target), "the sandbox let a command write outside"
            assert "Exit code: 0" not in text(inside), text(inside)

            command = f"echo approved > {target}"
            result = await session.call_tool(
                "shell", {"command": command, "outside_sandbox": True, "justification": JUSTIFICATION}
            )
            said = text(result)
            if case == "accept":
                assert not result.is_error, said
                with open(target) as file:
                    assert file.read() == "approved\n"
            else:
                assert result.is_error, said
                assert "nothing was run" in said.lower(), said
                assert not os.path.exists(target), f"{case}: the command ran"
            if case == "decline" or case == "refuse":
                assert "declined" in said, said
            if case == "timeout":
                assert "nobody answered" in said, said
            if case == "no-elicitation":
                assert not asked
                assert "did not declare elicitation" in said, said
                assert "--sandbox off" in said and "--writable DIR" in said and "[sandbox]" in said, said
            else:
                assert len(asked) == 1, asked
                assert command in asked[0].message and JUSTIFICATION in asked[0].message, asked[0].message
                schema = asked[0].requested_schema
                assert schema["properties"]["approve"]["type"] == "boolean", schema
                assert schema["required"] == ["approve"], schema

            # The session goes on: a plain command still runs, in the sandbox.
            after = await session.call_tool("shell", {"command": "echo still here"})
            assert not after.is_error and "still here" in text(after), text(after)
    print("ok")


if __name__ == "__main__":
    run_main(main)
