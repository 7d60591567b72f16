"""Commit history of a code repository in the workspace's history layer (one topic per day), and
the post-commit hook that records each new commit in the background."""
