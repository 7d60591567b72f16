"""The search index: files in, ranked hits out (the only user of whoosh; knows nothing of the store)."""
