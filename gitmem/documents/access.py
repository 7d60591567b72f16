"""When each document was last read on this machine (`state/documents-access.json`).

Machine-local and never committed: reading a document or finding it in a search must not create
a commit or a merge conflict. On a fresh clone the file is absent and `updatedAt` stands in.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from gitmem import caller
from gitmem.fsio import load_json_object, write_json_atomic

ACCESS_FILE = "state/documents-access.json"


def load_access(root: Path) -> dict[str, str]:
    return {str(k): str(v) for k, v in load_json_object(root / ACCESS_FILE).items()}


def access_stamp(moment: datetime) -> str:
    """ISO 8601 UTC with microseconds: reads within one second still come in order."""
    return caller.as_local(moment).astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def record_access(root: Path, doc_ids: Iterable[str], moment: str) -> None:
    """Note that these documents were read at `moment` (see access_stamp)."""
    ids = [i for i in dict.fromkeys(doc_ids) if i]
    if not ids:
        return
    data = load_access(root)
    if all(data.get(i) == moment for i in ids):
        return
    data.update({i: moment for i in ids})
    write_json_atomic(root / ACCESS_FILE, data, durable=False)
