"""Atomic writes: where their temp files go, the modes files get, links never written through,
the store lock taken in arrival order."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitmem import fsio
from gitmem.errors import UnsafePathError
from gitmem.store.lock import QUEUE_DIR, store_lock
from gitmem.store.store import Store


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_write_in_a_store_puts_its_temp_file_in_state_tmp(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real_open = os.open

    def spy(path: str, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & os.O_CREAT and str(path).endswith(fsio.TEMP_SUFFIX):
            seen.append(os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else str(path))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", spy)
    fsio.write_text_atomic(store.root / "global" / "semantic" / "x.md", "hello\n")
    assert seen == [str(store.root / "state" / "tmp")]
    assert (store.root / "global" / "semantic" / "x.md").read_text() == "hello\n"
    assert list((store.root / "state" / "tmp").iterdir()) == []


def test_outside_a_store_the_temp_file_is_hidden_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "plain" / "file.txt"
    fsio.write_text_atomic(target, "a")
    assert target.read_text() == "a" and sorted(p.name for p in target.parent.iterdir()) == ["file.txt"]


def test_new_files_follow_the_umask_and_replaced_files_keep_their_mode(store: Store) -> None:
    target = store.root / "global" / "semantic" / "modes.md"
    old = os.umask(0o002)
    try:
        fsio.write_text_atomic(target, "one\n")
        assert _mode(target) == 0o664
        os.umask(0o077)
        os.chmod(target, 0o640)
        fsio.write_text_atomic(target, "two\n")
        assert _mode(target) == 0o640
        fsio.write_text_atomic(store.root / "state" / "secret", "s", mode=0o600)
        assert _mode(store.root / "state" / "secret") == 0o600
    finally:
        os.umask(old)


def test_the_cli_respects_the_umask_and_the_token_file_stays_private(tmp_path: Path) -> None:
    root = tmp_path / "store"
    env = {**os.environ, "GITMEM_ROOT": str(root)}

    def gitmem(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "gitmem", *args], env=env, check=True, capture_output=True,
                       preexec_fn=lambda: os.umask(0o022))

    gitmem("init")
    gitmem("remember", "the umask decides", "--layer", "semantic")
    for name in ("memory.json", "SYSTEM.md", ".gitignore", "global/semantic/general.md", "global/INDEX.md"):
        assert _mode(root / name) == 0o644, name
    from gitmem.sync.remote import save_token

    assert _mode(save_token(root, "tok")) == 0o600


@pytest.mark.parametrize("link_at", ["global/semantic/db.md", "global/semantic", "global"])
def test_no_write_goes_through_a_symbolic_link(store: Store, tmp_path: Path, link_at: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "db.md").write_text("outside\n")
    link = store.root / link_at
    if link.exists():
        import shutil

        shutil.rmtree(link) if link.is_dir() else link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "db.md" if link_at.endswith(".md") else outside)
    with pytest.raises(UnsafePathError) as caught:
        fsio.write_text_atomic(store.root / "global" / "semantic" / "db.md", "inside\n")
    assert str(caught.value).startswith(f"{link_at} is a symbolic link")
    assert (outside / "db.md").read_text() == "outside\n"
    assert sorted(p.name for p in outside.iterdir()) == ["db.md"]


def test_leftover_temp_files_of_dead_writers_are_swept(store: Store) -> None:
    folder = store.root / "state" / "tmp"
    folder.mkdir(exist_ok=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    (folder / f"{dead}-abcd-x.md.tmp").write_text("half")
    (folder / f"{os.getpid()}-abcd-y.md.tmp").write_text("in flight")
    assert fsio.leftover_temp_files(store.root) == [f"state/tmp/{dead}-abcd-x.md.tmp"]
    assert fsio.sweep_temp(store.root) == [f"state/tmp/{dead}-abcd-x.md.tmp"]
    assert sorted(p.name for p in folder.iterdir()) == [f"{os.getpid()}-abcd-y.md.tmp"]


def test_the_store_lock_goes_to_waiters_in_the_order_they_came(store: Store, tmp_path: Path) -> None:
    order = tmp_path / "order"
    code = (
        "import sys, time; from pathlib import Path; from gitmem.store.lock import store_lock\n"
        "with store_lock(Path(sys.argv[1])):\n"
        "    open(sys.argv[2], 'a').write(sys.argv[3] + '\\n'); time.sleep(0.05)\n"
    )
    with store_lock(store.root):
        waiters = []
        for name in ("first", "second", "third", "fourth"):
            waiters.append(subprocess.Popen([sys.executable, "-c", code, str(store.root), str(order), name]))
            deadline = time.monotonic() + 10
            while len(os.listdir(store.root / QUEUE_DIR)) < len(waiters) and time.monotonic() < deadline:
                time.sleep(0.01)
    for waiter in waiters:
        assert waiter.wait(timeout=30) == 0
    assert order.read_text().split() == ["first", "second", "third", "fourth"]
