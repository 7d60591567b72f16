"""The MCP server: gitmem as tools, a resource and a prompt for any MCP client."""
