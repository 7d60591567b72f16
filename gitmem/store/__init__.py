"""The store: its root and layout, the write transaction, the catalog, memory.json, SYSTEM.md."""
