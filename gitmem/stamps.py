"""Has this file changed since? The one answer every cache of gitmem uses (the search manifest,
the card's summaries, the warm server's parse and probe caches).

A file's stamp is what lstat says of the file itself (a link is not followed): type and
permissions, device, inode, size, modification and change times. An edit that puts the
modification time back and keeps the size still moves the change time, which cannot be set by
hand; replacing a file (a temporary renamed over it) changes its inode. A stamp equal to the one
recorded proves the file unchanged only once the file has settled: while it was modified less
than SETTLE_NS before the stamp was recorded, a second edit within the same clock tick could
leave every field as it was (git's "racy" files, judged as git does by the modification time),
so such a file is read again every time.
"""

from __future__ import annotations

import os
import time

SETTLE_NS = 2_000_000_000

# (mode, device, inode, size, mtime_ns, ctime_ns)
Stamp = tuple[int, int, int, int, int, int]


def stamp_of(info: os.stat_result) -> Stamp:
    """The stamp of an lstat (or DirEntry.stat(follow_symlinks=False)) result."""
    return (info.st_mode, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns,
            info.st_ctime_ns)


def file_stamp(path: str | os.PathLike[str]) -> Stamp | None:
    """The stamp of the file at `path` (not following a link); None when there is none."""
    try:
        return stamp_of(os.lstat(path))
    except OSError:
        return None


def settled(stamp: Stamp, now_ns: int | None = None, window: int = SETTLE_NS) -> bool:
    """True when the file was modified `window` (SETTLE_NS) or more before `now_ns` (default:
    now): only then does an equal stamp prove it unchanged."""
    return (time.time_ns() if now_ns is None else now_ns) - stamp[4] >= window


def stamp_text(stamp: Stamp) -> str:
    """The stamp as text, for caches that store it in a column."""
    return ":".join(map(str, stamp))
