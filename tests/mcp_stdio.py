"""An MCP client on stdio, the official Python SDK's, for tests/it/mcp_stdio.rs.

Usage: mcp_stdio.py CALLS STATUS -- COMMAND [ARG...]

Starts COMMAND as the SDK starts a stdio server (through /bin/sh, which
writes COMMAND's exit status to the file STATUS once it ends), initializes,
lists the tools, calls each tool of CALLS (a JSON list of [name, arguments]),
retrying a call while the first scan runs, then closes the session as the
SDK does (stdin closed, a grace period, then the process tree killed).
Prints one JSON object: {"tools": [names, sorted], "results": [{"isError",
"structuredContent", "text"}], "exit": the status, or null when COMMAND did
not end by itself within the grace period}.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

NOT_READY = "The initial scan is still running; retry shortly"


async def main(calls, status, command):
    params = StdioServerParameters(
        command="/bin/sh",
        args=["-c", '"$0" "$@"; echo $? > "$DUPCHECK_TEST_STATUS"', *command],
        env={"DUPCHECK_TEST_STATUS": status},
    )
    out = {"results": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            out["tools"] = sorted(tool.name for tool in tools.tools)
            for name, arguments in calls:
                for _ in range(600):
                    result = await session.call_tool(name, arguments)
                    text = "".join(c.text for c in result.content if c.type == "text")
                    if not (result.is_error and text == NOT_READY):
                        break
                    await anyio.sleep(0.05)
                out["results"].append(
                    {
                        "isError": result.is_error,
                        "structuredContent": result.structured_content,
                        "text": text,
                    }
                )
    try:
        with open(status) as f:
            out["exit"] = int(f.read().strip())
    except (OSError, ValueError):
        out["exit"] = None
    print(json.dumps(out))


if __name__ == "__main__":
    calls, status, dashes, *command = sys.argv[1:]
    assert dashes == "--", __doc__
    if os.path.exists(status):
        os.remove(status)
    anyio.run(main, json.loads(calls), status, command)
