"""Pure values and text: the entry format, layers, freshness and normalization rules (no I/O)."""
