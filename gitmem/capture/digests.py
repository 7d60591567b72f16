"""Digests in digests/ (local, never committed): what capture kept of a session, waiting for
consolidation. A bounded header (session, workspace key, branch, dates, status) and the file paths
touched, then dated bullet sections; never message bodies.

A digest is pending until a consolidation pass attributes something to it (an entry or a DONE
line); one never attributed is retried, and after the maximum number of attempts marked
needs-review for a person. Consolidated digests are pruned to the newest few; a pending one is
never removed, being the only copy of work not yet in the store."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gitmem.fsio import (
    file_lock,
    load_json_object,
    read_regular_text,
    remove_file,
    write_json_atomic,
    write_text_atomic,
)

DIGEST_DIR = "digests"
LOCK_FILE = "state/digests.lock"
LAST_PASS_FILE = "state/consolidation.json"
PENDING, CONSOLIDATED, NEEDS_REVIEW = "pending", "consolidated", "needs-review"
HEADER_KEYS = ("digest", "session", "format", "workspace", "branch", "first", "last", "captured",
               "summary", "status", "attempts", "consolidated")
KEEP_CONSOLIDATED = 50
_ID_SAFE = re.compile(r"[^a-z0-9]+")
_HEADER_LINE = re.compile(r"^([a-z][a-z-]*): ?(.*)$")


@dataclass
class Digest:
    """One digest file."""

    id: str
    header: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    sections: list[tuple[str, list[str]]] = field(default_factory=list)  # (day, bullets)

    @property
    def status(self) -> str:
        return self.header.get("status") or PENDING

    @property
    def attempts(self) -> int:
        try:
            return int(self.header.get("attempts") or 0)
        except ValueError:
            return 0

    @property
    def workspace(self) -> str:
        return self.header.get("workspace", "")

    def bullets(self) -> list[str]:
        return [b for _, items in self.sections for b in items]

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, **{k: self.header.get(k, "") for k in HEADER_KEYS if k != "digest"},
                "files": self.files, "bullets": len(self.bullets())}


def digest_dir(root: Path) -> Path:
    return root / DIGEST_DIR


@contextlib.contextmanager
def digests_lock(root: Path) -> Iterator[None]:
    """Capture and consolidation change digests under this lock (never the store lock)."""
    with file_lock(root / LOCK_FILE, 60.0, "the digests lock"):
        yield


def new_digest_id(root: Path, session: str, when: datetime) -> str:
    """`YYYYMMDD-HHMMSS-<session prefix>`, unique in digests/."""
    stem = _ID_SAFE.sub("", session.lower())[:8] or "session"
    base = f"{when:%Y%m%d-%H%M%S}-{stem}"
    candidate, n = base, 1
    while (digest_dir(root) / f"{candidate}.md").exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _one_line(value: str, limit: int = 200) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_digest(digest: Digest) -> str:
    header = {"digest": digest.id, **digest.header}
    lines = ["---", *(f"{key}: {_one_line(header.get(key, ''))}".rstrip() for key in HEADER_KEYS), "---",
             f"# Digest {digest.id}", ""]
    if digest.files:
        lines.append(f"Files touched ({len(digest.files)}):")
        lines += [f"- {_one_line(p)}" for p in digest.files]
        lines.append("")
    for day, bullets in digest.sections:
        lines += [f"## {day}", *(f"- {_one_line(b, 600)}" for b in bullets), ""]
    return "\n".join(lines)


def parse_digest(text: str, digest_id: str) -> Digest:
    """Read a digest back (tolerant: a person may have edited it)."""
    digest = Digest(digest_id)
    lines = text.splitlines()
    body_start = 0
    if lines and lines[0].strip() == "---":
        for index, line in enumerate(lines[1:], start=1):
            if line.strip() == "---":
                body_start = index + 1
                break
            match = _HEADER_LINE.match(line)
            if match and match.group(1) != "digest":
                digest.header[match.group(1)] = match.group(2).strip()
    in_files = False
    for line in lines[body_start:]:
        if line.startswith("Files touched"):
            in_files = True
        elif line.startswith("## "):
            in_files = False
            digest.sections.append((line[3:].strip(), []))
        elif line.startswith("- ") and in_files:
            digest.files.append(line[2:].strip())
        elif line.startswith("- ") and digest.sections:
            digest.sections[-1][1].append(line[2:].strip())
        elif not line.strip():
            in_files = False if digest.sections else in_files
    return digest


def write_digest(root: Path, digest: Digest) -> Path:
    path = digest_dir(root) / f"{digest.id}.md"
    write_text_atomic(path, render_digest(digest), durable=False)
    return path


def read_digest(root: Path, digest_id: str) -> Digest | None:
    try:
        return parse_digest(read_regular_text(digest_dir(root) / f"{digest_id}.md"), digest_id)
    except (OSError, UnicodeDecodeError):
        return None


def list_digests(root: Path, status: str | None = None) -> list[Digest]:
    """Every digest, oldest capture first (by the captured time, not the file's mtime)."""
    found = []
    folder = digest_dir(root)
    for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        try:
            digest = parse_digest(read_regular_text(path), path.stem)
        except (OSError, UnicodeDecodeError):
            continue
        if "captured" not in digest.header:
            continue  # not a digest (a note someone left in the folder)
        if status is None or digest.status == status:
            found.append(digest)
    return sorted(found, key=lambda d: (d.header.get("captured", ""), d.id))


def update_digest(root: Path, digest_id: str, **fields: str) -> Digest | None:
    """Change header fields of a digest (status, attempts, consolidated); the body is kept."""
    digest = read_digest(root, digest_id)
    if digest is None:
        return None
    digest.header.update(fields)
    write_digest(root, digest)
    return digest


def prune_digests(root: Path, keep: int = KEEP_CONSOLIDATED) -> list[str]:
    """Remove consolidated digests beyond the newest `keep`; pending and needs-review stay."""
    done = list_digests(root, CONSOLIDATED)
    removed = [d.id for d in done[: max(0, len(done) - keep)]]
    for digest_id in removed:
        remove_file(digest_dir(root) / f"{digest_id}.md")
    return removed


def save_last_pass(root: Path, summary: dict[str, Any]) -> None:
    write_json_atomic(root / LAST_PASS_FILE, summary, durable=False)


def load_last_pass(root: Path) -> dict[str, Any] | None:
    return load_json_object(root / LAST_PASS_FILE) or None
