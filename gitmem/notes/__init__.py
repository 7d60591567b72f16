"""Markdown notes and other tools' files read as notes: the readers `gitmem import` and the
Markdown-folder spaces share (pure reading: nothing here writes a store)."""
