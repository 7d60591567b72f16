"""Several memories at once: other gitmem stores mounted as spaces, read together, written by
choice or by explicit routing rules, merged into one another, synced together."""
