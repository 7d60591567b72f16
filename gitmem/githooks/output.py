"""What a hook says: one line on stderr, git's way of talking to the person committing."""

from __future__ import annotations

import sys


def say(message: str) -> None:
    """One line on stderr, a likely secret in it masked (a note may quote an imported line)."""
    from gitmem.secrets.mask import hide_secrets

    print(f"gitmem: {hide_secrets(message)}", file=sys.stderr)


def tell(problem: object) -> None:
    """A `path:line: reason` line on stderr, masked as `say` masks (a path may be a token)."""
    from gitmem.secrets.mask import hide_secrets

    print(hide_secrets(str(problem)), file=sys.stderr)
