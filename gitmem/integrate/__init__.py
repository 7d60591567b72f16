"""Agents wired to gitmem in one command: hooks for Claude Code, MCP entries for Claude Code,
Codex and any MCP client, and the hook commands themselves."""
