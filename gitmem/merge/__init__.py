"""Three-way merges of store files (pure: texts in, merged text and conflicts out)."""
