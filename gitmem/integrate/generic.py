"""`gitmem integrate generic`: the MCP server entry and the rules, for any MCP client."""

from __future__ import annotations

import json
from typing import Any

from gitmem.integrate.files import SERVER_NAME

INSTRUCTIONS = """\
Add the block above to your MCP client's server list (most clients read an "mcpServers" object
like this one; some call it "servers" or "context_servers"). The server speaks MCP over stdio;
the workspace is resolved from the folder the client starts it in (`--cwd DIR` or
`--workspace KEY` after `mcp` fixes it). It offers the tools search, show, remember, forget,
verify, decision, codebase, context, state, working, status, sync, conflicts, history, capture,
runtime_add, runtime_replace, runtime_remove, runtime_show, doc_add, doc_show and doc_search, the
resource gitmem://context and the prompt start-of-session.

Tell the agent (in its system prompt or rules file):
- read the context card (tool `context`) at the start of a session;
- search before writing; writing nothing is a correct outcome;
- a subagent never writes memory: start a subagent's server with `--subagent` (or set
  GITMEM_SUBAGENT=1) and every write tool refuses."""


def config(gitmem: list[str]) -> dict[str, Any]:
    return {"mcpServers": {SERVER_NAME: {"command": gitmem[0], "args": [*gitmem[1:], "mcp"]}}}


def text(gitmem: list[str]) -> str:
    return json.dumps(config(gitmem), indent=2) + "\n\n" + INSTRUCTIONS
