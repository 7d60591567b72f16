"""The git layer: the repository over pygit2, credentials, and the git binary (the only user of pygit2)."""
