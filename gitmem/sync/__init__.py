"""Sharing one memory across machines: sync, merging two commits, the remote, sync bookkeeping."""
