"""What the CLI, the MCP server and Python callers call: one function per verb."""
