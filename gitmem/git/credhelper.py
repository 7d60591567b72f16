"""gitmem's git credential helper: hands git the store's HTTPS token. Git runs it; people do not.

The transport configures it, for one git command, as the only `credential.helper` when the store
has a token of its own. Git then runs `python -I -S credhelper.py get|store|erase` with the request
on stdin (`protocol=`, `host=`, `username=`, ...). For `get` it answers with the token from
$GITMEM_GIT_TOKEN, else from the file named in $GITMEM_CREDENTIAL_FILE (state/git-token), and only
for the protocol and host named in $GITMEM_CREDENTIAL_HOST (the remote's): a redirect to another
host never receives the token. `store` and `erase` do nothing: the token lives where the user put
it. The token never appears on a command line, in a URL or in git config.

Standalone on purpose: it imports the standard library only (git starts it with site-packages
skipped) and is run as a file, so it needs no installed gitmem and starts in ~20 ms.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TextIO

TOKEN_ENV = "GITMEM_GIT_TOKEN"
FILE_ENV = "GITMEM_CREDENTIAL_FILE"
HOST_ENV = "GITMEM_CREDENTIAL_HOST"
DEFAULT_USERNAME = "x-access-token"


def read_request(stream: TextIO) -> dict[str, str]:
    """The key=value lines git sends, up to the first blank line."""
    request: dict[str, str] = {}
    for line in stream:
        line = line.rstrip("\r\n")
        if not line:
            break
        key, sep, value = line.partition("=")
        if sep:
            request[key] = value
    return request


def find_token(environ: Mapping[str, str]) -> str | None:
    """The token from the environment, else from the private file the transport named."""
    token = environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    path = environ.get(FILE_ENV, "")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def answer(action: str, request: Mapping[str, str], environ: Mapping[str, str]) -> str:
    """The lines to print for one git request ('' = this helper has nothing to say)."""
    if action != "get" or request.get("protocol") not in ("http", "https"):
        return ""
    wanted = environ.get(HOST_ENV, "")
    if wanted and wanted.lower() != f"{request.get('protocol')}://{request.get('host', '')}".lower():
        return ""
    token = find_token(environ)
    if token is None:
        return ""
    username = request.get("username") or DEFAULT_USERNAME
    return f"username={username}\npassword={token}\n"


def main(argv: list[str]) -> int:
    action = argv[1] if len(argv) > 1 else ""
    request = read_request(sys.stdin)
    sys.stdout.write(answer(action, request, os.environ))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
