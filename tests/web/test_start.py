"""What `gitmem web` does before its first answer: it announces the address as soon as its
sockets listen (before the web stack is loaded), and loads only the views the first page needs;
a request sent right after the address is answered once the page is up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from webpage import start_web, stop_web

ANNOUNCE = """
import sys
from pathlib import Path
from gitmem.web.serve import serve

def announce(address):
    print(address.startswith("http://127.0.0.1:"), "starlette" in sys.modules,
          "gitmem.web.app" in sys.modules)
    raise SystemExit(0)

serve(Path(sys.argv[1]), port=0, workspace=None, cwd=Path(sys.argv[1]), announce=announce)
"""

LATER_VIEWS = ("entry_view", "conflict_view", "hot_view", "review_view", "settings_view")


def test_the_address_is_announced_before_the_web_stack_loads(web_store: Path) -> None:
    done = subprocess.run([sys.executable, "-c", ANNOUNCE, str(web_store)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "False", "False"]


def test_the_app_loads_the_other_views_on_their_first_request(web_store: Path) -> None:
    probe = ("import sys, gitmem.web.app; print(' '.join(m for m in sys.modules "
             "if m.startswith('gitmem.web.')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.split()
    assert "gitmem.web.views" in loaded
    assert not [name for name in LATER_VIEWS if f"gitmem.web.{name}" in loaded]
    page = start_web(web_store)  # the request waits in the listen queue until the page is up
    try:
        page.sign_in()
        for path in ("/", "/hot", "/settings", "/review", "/conflicts"):
            assert page.get(path).status == 200, path
    finally:
        stop_web(page)
