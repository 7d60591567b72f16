"""A Markdown folder's notes as gitmem topic files, in a rebuildable cache the folder never sees.

The folder (an Obsidian vault, a basic-memory project, a docs folder) is read-only to gitmem:
everything derived from it lives under the home store's `state/providers/<space>/`, a folder
shaped like a store — `global/<layer>/<note>.md` topic files, `state/catalog.sqlite`, `index/` —
so the catalog, the summaries and the search index read it as they read any store.

Each note is read with the import readers (gitmem/notes/): a plain or Obsidian note becomes one
entry per heading section, a basic-memory note one entry for the note and one per observation.
An entry's Id is derived from the note's path and its section's heading path
(`deploy.rollback-3f2a91c0`), so it is the same on every run and on every machine, and survives a
deleted cache. What changed is found by file stamps (gitmem/stamps.py) recorded per note in
`state/notes.json`: an unchanged note costs one stat; a note edited in another tool is read again
on the next read of the space. A note that cannot be read (not UTF-8, broken front matter, a link
that loops, not a regular file) is recorded with the reason and left out; it never fails a read.
Secrets in a note are masked in the cache (gitmem/secrets), so no read shows them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from gitmem.errors import InvalidInputError
from gitmem.format.entry import IMPORTANCE_RANK, Entry
from gitmem.format.layers import LAYERS, canonical_slug
from gitmem.format.markdown import new_topic_file, render_topic_file
from gitmem.format.safetext import safe_text
from gitmem.format.wording import guess_layer
from gitmem.fsio import read_regular_text, write_json_atomic, write_text_atomic
from gitmem.notes.basic_memory import read_note
from gitmem.notes.markdown import SUFFIXES, is_store_folder, markdown_files, read_note_file
from gitmem.notes.model import Note, ReadContext, SourceFile
from gitmem.secrets.mask import hide_secrets
from gitmem.stamps import Stamp, file_stamp, settled, stamp_of

FORMAT = 2  # 2: note bodies escaped as a write escapes them; a cache of 1 is read anew
MANIFEST = "state/notes.json"
FLAVOURS = ("markdown", "obsidian", "basic-memory")  # the providers that read a Markdown folder
_LAYERS = tuple(name for name, spec in LAYERS.items() if spec.shape == "topics" and spec.global_ok)


@dataclass
class NoteRecord:
    """What the cache knows of one note: its stamp when read, the topic files it became."""

    stamp: Stamp
    racy: bool  # read too soon after a change for an equal stamp to prove it unchanged since
    files: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class Synced:
    """What one pass found: the cache's topic files written or removed, the unreadable notes."""

    changed: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def note_id(relpath: str, anchor: str) -> str:
    """The stable Id of a note's section: its file stem, its heading, a hash of both."""
    stem = canonical_slug(PurePosixPath(relpath).stem)[:40].strip("-_") or "note"
    part = "" if anchor in ("_", "note") else canonical_slug(anchor.rsplit("/", 1)[-1])[:30].strip("-_")
    part = "" if part == stem[:30].strip("-_") else part  # the note's own title: the stem says it
    digest = hashlib.blake2b(f"{relpath}#{anchor}".encode(), digest_size=4).hexdigest()
    return f"{stem}.{part}-{digest}" if part else f"{stem}-{digest}"


def topic_path(relpath: str, layer: str) -> str:
    """The cache's topic file of a note's entries of one layer."""
    words = canonical_slug(relpath.rsplit(".", 1)[0].replace("/", " "))[:60].strip("-_") or "note"
    digest = hashlib.blake2b(relpath.encode(), digest_size=3).hexdigest()
    return f"global/{layer}/{words}-{digest}.md"


def scan(folder: Path) -> dict[str, Stamp]:
    """Every note below the folder (as gitmem/notes/markdown.py finds them: hidden folders and
    files and gitmem stores skipped, links to folders not followed) with the stamp of what it points at (of the
    link itself when that cannot be followed). Plain scandir: a read of the space pays for it."""
    found: dict[str, Stamp] = {}
    pending = [("", os.fspath(folder))]
    while pending:
        prefix, here = pending.pop()
        try:
            with os.scandir(here) as listing:
                items = list(listing)
        except OSError:
            continue
        for item in items:
            name = item.name
            if name.startswith("."):
                continue
            try:
                if item.is_dir(follow_symlinks=False):
                    if not is_store_folder(Path(item.path)):
                        pending.append((f"{prefix}{name}/", item.path))
                elif name.lower().endswith(SUFFIXES):
                    found[prefix + name] = _stamp(item)
            except OSError:
                continue  # gone while scanning
    return found


def _stamp(item: os.DirEntry[str]) -> Stamp:
    try:
        return stamp_of(item.stat())
    except OSError:
        return stamp_of(item.stat(follow_symlinks=False))


# The notes last loaded or saved per cache, with the manifest's stamp then: a process that reads
# the space again (a server, a benchmark) parses the manifest only when another process wrote it.
_LOADED: dict[Path, tuple[Stamp, dict[str, NoteRecord]]] = {}


def _load(cache: Path, folder: Path, flavour: str) -> dict[str, NoteRecord] | None:
    """The recorded notes, or None when the cache is missing, damaged or of another folder."""
    path = cache / MANIFEST
    stamp = file_stamp(path)
    known = _LOADED.pop(cache, None)
    if known is not None and stamp is not None and known[0] == stamp:
        return known[1]
    try:
        data = json.loads(read_regular_text(path))
        if (data.get("format"), data.get("folder"), data.get("flavour")) != (FORMAT, str(folder), flavour):
            return None
        return {str(k): NoteRecord(tuple(int(n) for n in v[0]), bool(v[1]),  # type: ignore[arg-type]
                                   [str(f) for f in v[2]], str(v[3]))
                for k, v in data["notes"].items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


def _save(cache: Path, folder: Path, flavour: str, notes: dict[str, NoteRecord]) -> None:
    path = cache / MANIFEST
    write_json_atomic(path, {
        "format": FORMAT, "folder": str(folder), "flavour": flavour,
        "notes": {k: [list(r.stamp), r.racy, r.files, r.error] for k, r in sorted(notes.items())},
    }, durable=False)
    _remember(cache, notes)


def _remember(cache: Path, notes: dict[str, NoteRecord]) -> None:
    stamp = file_stamp(cache / MANIFEST)
    if stamp is not None:
        _LOADED[cache] = (stamp, notes)


def sync(folder: Path, cache: Path, flavour: str) -> Synced:
    """Bring the cache's topic files in step with the folder's notes; returns what changed."""
    out = Synced()
    notes = _load(cache, folder, flavour)
    if notes is None:  # first pass, or a cache of something else: start over
        shutil.rmtree(cache / "global", ignore_errors=True)
        notes = {}
        out.changed.append("")  # the caller rebuilds its catalog from every file
    stamps = scan(folder)
    now_ns = time.time_ns()
    for relpath in [p for p in notes if p not in stamps]:
        out.changed += _remove(cache, notes.pop(relpath).files)
    for relpath, stamp in stamps.items():
        record = notes.get(relpath)
        if record is None or record.stamp != stamp or record.racy:
            notes[relpath] = _project(folder, cache, relpath, stamp, flavour, now_ns,
                                      record.files if record else [], out)
    for relpath, record in notes.items():
        if record.error:
            out.skipped[relpath] = record.error
    if out.changed:
        _save(cache, folder, flavour, notes)
    else:
        _remember(cache, notes)
    return out


def _remove(cache: Path, files: list[str]) -> list[str]:
    for relpath in files:
        (cache / relpath).unlink(missing_ok=True)
    return files


def _project(folder: Path, cache: Path, relpath: str, stamp: Stamp, flavour: str, now_ns: int,
             before: list[str], out: Synced) -> NoteRecord:
    """Read one note and write its topic files (the ones it no longer makes are removed)."""
    record = NoteRecord(stamp, not settled(stamp, now_ns))
    try:
        source = read_source(folder, relpath, stamp, flavour)
    except InvalidInputError as exc:
        record.error = unreadable_reason(str(exc), relpath)
        source = None
    except (OSError, ValueError, TypeError, AttributeError) as exc:  # a note no reader foresaw:
        record.error = f"{relpath}:1: cannot be read ({type(exc).__name__}: {exc})"  # left out,
        source = None  # as an unreadable one is; the other notes are read
    texts = render_note(relpath, source, stamp) if source is not None else {}
    for target, text in texts.items():
        write_text_atomic(cache / target, text, durable=False)
    record.files = sorted(texts)
    out.changed += sorted(set(before) | set(texts))
    _remove(cache, [f for f in before if f not in texts])
    return record


def read_source(folder: Path, relpath: str, stamp: Stamp, flavour: str) -> SourceFile:
    """The note's notes, by the reader of its flavour; InvalidInputError when unreadable."""
    if not stat.S_ISREG(stamp[0]):
        raise InvalidInputError(f"cannot import {relpath}:1: not a regular file (a link that loops or"
                                " points nowhere, a folder, a device); nothing was written")
    context = ReadContext(folder)
    if flavour == "basic-memory":
        return read_note(folder / relpath, folder, context)
    return read_note_file(folder / relpath, folder, context,
                          meta_fields={"tags": "Tags", "importance": "Importance"})


def unreadable_reason(message: str, relpath: str) -> str:
    """An import reader's one-line refusal as a skipped note's reason (`path:line: why`)."""
    text = message.removeprefix("cannot import ").removesuffix("; nothing was written")
    return text if text.startswith(relpath) else f"{relpath}:1: {text}"


def render_note(relpath: str, source: SourceFile, stamp: Stamp) -> dict[str, str]:
    """The topic files (cache path -> text) of one note's entries, one file per layer."""
    day = datetime.fromtimestamp(stamp[4] / 1e9, tz=UTC).date().isoformat()
    mask = hide_secrets if hide_secrets(source.text) != source.text else _as_is  # one look per note
    by_layer: dict[str, list[Entry]] = {}
    for note in source.notes:
        layer = _layer_of(note)
        by_layer.setdefault(layer, []).append(_entry(relpath, note, day, mask))
    texts = {}
    title = source.notes[0].title if source.notes else PurePosixPath(relpath).stem
    for layer, entries in by_layer.items():
        target = topic_path(relpath, layer)
        topic = new_topic_file({"topic": target.rsplit("/", 1)[-1][:-3], "layer": layer,
                                "scope": "global"}, mask(" ".join(title.split())))
        topic.entries = entries
        texts[target] = render_topic_file(topic)
    return texts


def _layer_of(note: Note) -> str:
    if note.layer in _LAYERS:
        return note.layer
    guessed = guess_layer(f"{note.title}\n{note.body}") if note.layer is None else "semantic"
    return guessed if guessed in _LAYERS else "semantic"


def _as_is(text: str) -> str:
    return text


def _entry(relpath: str, note: Note, day: str, mask: Callable[[str], str]) -> Entry:
    fields = {"Id": note_id(relpath, note.anchor), "Source": f"{relpath}:{note.line}",
              "Created": day, "Verified": day}
    fields.update({k: mask(v) for k, v in note.fields.items() if k not in fields})
    if fields.get("Importance", "normal").lower() not in IMPORTANCE_RANK:
        del fields["Importance"]  # a word gitmem does not grade by: left out, not guessed
    # A note's `**Id:**` or `**Forgotten:**` line is its text, not this entry's field: escaped
    # as a write escapes it (the Id is the one derived from the note's path and heading).
    body = safe_text(mask(note.body.strip())) or note.title
    return Entry(title=mask(" ".join(note.title.split())) or "note", body=body, fields=fields)


def detect_flavour(folder: Path, sample: int = 20) -> str | None:
    """The provider a folder of notes asks for: `obsidian` (a `.obsidian/` folder),
    `basic-memory` (notes with a front matter permalink), `markdown`; None without notes."""
    if (folder / ".obsidian").is_dir():
        return "obsidian"
    seen = 0
    for path in markdown_files(folder):
        seen += 1
        if _has_permalink(path):
            return "basic-memory"
        if seen >= sample:
            break
    return "markdown" if seen else None


def _has_permalink(path: Path) -> bool:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO named *.md is never opened
            return False
        with open(path, encoding="utf-8", errors="replace") as handle:
            head = handle.read(2048)
    except OSError:
        return False
    front = head.split("\n---", 1)[0] if head.startswith("---\n") else ""
    return any(line.startswith("permalink:") for line in front.split("\n"))

