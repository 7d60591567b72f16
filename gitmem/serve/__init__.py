"""The warm server: one long-lived process per store that answers CLI calls over a unix socket
and runs the scheduled sync, history ingest and consolidation (docs/decisions/0015-warm-server.md)."""
