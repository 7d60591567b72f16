"""Every write path refuses a likely secret (a sample of the corpus through each), the override is
the write verb's own flag, and nothing that reads text prints what the gate refuses."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from fixtures.tokens import SHAPES, Shape
from support import Cli, commit_count, git

BY_NAME = {shape.name: shape for shape in SHAPES}
SAMPLE = [BY_NAME[name] for name in (
    "GitHub fine-grained token", "OpenAI project key", "Anthropic API key", "Google API key",
    "AWS secret access key (env)", "AWS secret access key (ini)", "password: assignment",
    "npm token", "Slack bot token", "RSA private key")]
IDS = [shape.name for shape in SAMPLE]


def refused(result: object, shape: Shape) -> bool:
    out = getattr(result, "stdout", "") + getattr(result, "stderr", "")
    assert shape.secret not in out, out
    return getattr(result, "exit_code", None) == 2 and "holds a likely secret" in out


def all_text(root: Path) -> str:
    """Every file of the store's working copy and .git/ objects aside, as one text."""
    parts = []
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(root).parts:
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


@pytest.mark.parametrize("shape", SAMPLE, ids=IDS)
def test_runtime_add_doc_add_and_every_text_verb_refuse(gm: Cli, tmp_path: Path, shape: Shape) -> None:
    text = shape.forms()["prose"]
    document = tmp_path / "runbook.md"
    document.write_text(f"# Runbook\n\nStep one.\n{text}\n", encoding="utf-8")
    before = commit_count(gm.root)
    for args in (("runtime", "add", text), ("runtime", "add", text, "--target", "user"),
                 ("doc", "add", str(document), "--title", "Runbook", "--scope", "global"),
                 ("decision", "Use the bot", "--rationale", text),
                 ("state", "CI", text, "--workspace", "proj"),
                 ("working", "--activity", text, "--workspace", "proj"),
                 ("codebase", "ci", text, "--workspace", "proj")):
        assert refused(gm(*args), shape), args
    assert commit_count(gm.root) == before and shape.secret not in all_text(gm.root)


def test_the_environment_variable_no_longer_lets_a_write_verb_through(gm: Cli, tmp_path: Path) -> None:
    shape = BY_NAME["npm token"]
    text = shape.forms()["env"]
    document = tmp_path / "notes.md"
    document.write_text(f"# Notes\n\n{text}\n", encoding="utf-8")
    allow = {"GITMEM_ALLOW_SECRET": "1"}
    before = commit_count(gm.root)
    for args in (("remember", text, "--layer", "semantic"), ("runtime", "add", text),
                 ("doc", "add", str(document), "--title", "Notes", "--scope", "global")):
        result = gm(*args, env=allow)
        assert refused(result, shape), args
        assert "--allow-secret" in result.stderr
    assert commit_count(gm.root) == before
    # The flag is the way to record it knowingly, one write at a time.
    assert gm("runtime", "add", text, "--allow-secret").exit_code == 0
    assert gm("doc", "add", str(document), "--title", "Notes", "--scope", "global",
              "--allow-secret").exit_code == 0
    assert commit_count(gm.root) == before + 2


def _hooked(gm: Cli, tmp_path: Path) -> str:
    """A store with the hooks, a topic file, runtime memory and a document; the document's path."""
    assert gm("remember", "Seed", "--layer", "semantic", "--topic", "ci").exit_code == 0
    assert gm("runtime", "add", "Run the tests with the venv").exit_code == 0
    source = tmp_path / "doc.md"
    source.write_text("# Doc\n\nHello.\n", encoding="utf-8")
    added = gm("doc", "add", str(source), "--title", "Doc", "--scope", "global", "--json")
    assert added.exit_code == 0, added.output
    assert gm("hooks", "install").exit_code == 0
    import json

    return str(json.loads(added.stdout)["path"])


@pytest.mark.parametrize("shape", SAMPLE[:5], ids=IDS[:5])
def test_plain_git_commit_of_hand_edits_is_refused_in_every_kind_of_file(
        gm: Cli, tmp_path: Path, shape: Shape) -> None:
    document = _hooked(gm, tmp_path)
    line = shape.forms()["env"]
    for relpath in ("global/semantic/ci.md", "global/runtime/MEMORY.md", document):
        before = commit_count(gm.root)
        path = gm.root / relpath
        original = path.read_text(encoding="utf-8")
        path.write_text(original + ("\n" if relpath.endswith("ci.md") else "") + line + "\n",
                        encoding="utf-8")
        done = subprocess.run(["git", "commit", "-qam", "hand edit"], cwd=gm.root,
                              capture_output=True, text=True)
        assert done.returncode != 0, (relpath, done.stderr)
        assert f"{relpath}:" in done.stderr and "holds a likely secret" in done.stderr
        assert shape.secret not in done.stderr + done.stdout
        assert commit_count(gm.root) == before
        path.write_text(original, encoding="utf-8")
        git(gm.root, "reset", "-q")


def test_the_environment_variable_still_lets_one_plain_commit_through(gm: Cli, tmp_path: Path) -> None:
    _hooked(gm, tmp_path)
    shape = BY_NAME["AWS secret access key (env)"]
    memory = gm.root / "global/runtime/MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + shape.forms()["prose"] + "\n", encoding="utf-8")
    done = subprocess.run(["git", "commit", "-qam", "knowingly"], cwd=gm.root, capture_output=True,
                          text=True, env={**os.environ, "GITMEM_ALLOW_SECRET": "1"})
    assert done.returncode == 0, done.stderr
    assert shape.secret not in done.stderr + done.stdout  # the import note quotes it masked


@pytest.mark.parametrize("shape", SAMPLE[:4], ids=IDS[:4])
def test_hand_edits_of_runtime_memory_and_documents_are_not_committed_by_the_next_write(
        gm: Cli, tmp_path: Path, shape: Shape) -> None:
    assert gm("runtime", "add", "Run the tests with the venv").exit_code == 0
    memory = gm.root / "global/runtime/MEMORY.md"
    memory.write_text(memory.read_text(encoding="utf-8") + shape.forms()["json"] + "\n", encoding="utf-8")
    before = commit_count(gm.root)
    result = gm("remember", "Another fact", "--layer", "semantic")
    assert refused(result, shape) and "global/runtime/MEMORY.md:" in result.stderr
    assert commit_count(gm.root) == before


# -- reading never prints what the gate refuses ------------------------------------------------------
def test_no_read_verb_prints_a_secret_stored_knowingly(gm: Cli) -> None:
    for shape in SAMPLE:
        text = f"{shape.name} note: " + shape.forms()["prose"]
        result = gm("remember", text, "--layer", "semantic", "--importance", "critical",
                    "--title", f"{shape.name} {shape.forms()['env']}"[:200] if "\n" not in shape.value
                    else shape.name, "--allow-secret")
        assert result.exit_code == 0, (shape.name, result.stderr)
    assert gm("runtime", "add", SAMPLE[0].forms()["prose"], "--allow-secret").exit_code == 0
    outputs = []
    for args in (("list",), ("list", "--json"), ("context",), ("context", "--json"),
                 ("search", "note"), ("search", "note", "--json"), ("status",), ("status", "--json"),
                 ("conflicts",), ("runtime", "show"), ("runtime", "show", "--json"),
                 ("show", "global-sem-0001"), ("show", "global-sem-0003", "--json"),
                 ("show", SAMPLE[0].value), ("search", SAMPLE[1].value, "--json")):
        result = gm(*args)
        outputs.append(result.stdout + result.stderr)
    for n in range(1, len(SAMPLE) + 1):
        outputs.append(gm("show", f"global-sem-{n:04d}").stdout)
    everything = "\n".join(outputs)
    for shape in SAMPLE:
        assert shape.secret not in everything, shape.name
    assert "***" in everything and "OpenAI project key note" in everything
    assert shape.secret in all_text(gm.root)  # stored as written: the mask is on output only


def test_an_error_message_never_prints_a_secret(gm: Cli) -> None:
    shape = BY_NAME["GitHub fine-grained token"]
    for args in (("show", shape.value), ("forget", shape.value), ("doc", "show", shape.value),
                 ("remember", "x", "--layer", shape.value)):
        result = gm(*args)
        assert result.exit_code != 0 and shape.secret not in result.stderr + result.stdout, args


NAMES = [BY_NAME[name] for name in ("GitHub classic token", "Slack bot token", "OpenRouter API key",
                                     "DigitalOcean token")]


@pytest.mark.parametrize("shape", NAMES, ids=[shape.name for shape in NAMES])
def test_a_name_that_becomes_a_path_or_a_heading_is_refused(gm: Cli, shape: Shape) -> None:
    """A topic (a file's name), a state section (a heading), an entry's Paths and a workspace
    key (a folder's name, and memory.json's) are not text the gate reads, yet each is committed:
    each refuses a likely secret, without an override, and nothing is written. Lowercase tokens
    fit a workspace key's alphabet and survive a topic's lowercasing, so they are tried too."""
    assert gm("remember", "Seed fact for the store", "--layer", "semantic").exit_code == 0
    before = commit_count(gm.root)
    token = shape.value
    for args in (["remember", "An ordinary fact", "--layer", "semantic", "--topic", token],
                 ["remember", "An ordinary fact", "--layer", "semantic", "--topic", f"ops/{token}"],
                 ["codebase", token, "An ordinary note on the code", "--workspace", "proj"],
                 ["mv-topic", "semantic/general", f"semantic/{token}"],
                 ["state", token, "Deploys go out at noon", "--workspace", "proj"],
                 ["remember", "An ordinary fact", "--layer", "semantic", "--paths", f"src/{token}.py"],
                 ["remember", "An ordinary fact", "--layer", "semantic", "--scope", "workspace",
                  "--workspace", token.lower()]):
        result = gm(*args)
        reasons = ("holds a likely secret", "invalid workspace key")  # no key has `_` or 65 letters
        assert result.exit_code == 2 and any(r in result.output for r in reasons), (args, result.output)
        assert token not in result.output and token.lower() not in result.output
    assert commit_count(gm.root) == before and git(gm.root, "status", "--porcelain") == ""
    assert token.lower() not in all_text(gm.root).lower()
    assert token.lower() not in git(gm.root, "ls-files").lower()


def test_a_commit_message_gitmem_writes_has_a_secret_masked(store: object) -> None:
    """Every gitmem commit goes through one place (Store's commit of a write): a likely secret
    in its message (a merge note quoting a title recorded with --allow-secret, say) is masked
    there, as printed text is; the write itself is not refused for it."""
    from gitmem.store.store import Store

    assert isinstance(store, Store)
    token = BY_NAME["GitHub classic token"].value
    with store.writing("remember") as txn:
        store.write_file(txn, "global/semantic/notes.md", "# notes\n")
        txn.message = f"remember: a note about {token}"
    message = git(store.root, "log", "-1", "--format=%B")
    assert message.startswith("remember: a note about ***"), message
    assert token not in git(store.root, "log", "--format=%B")


def test_a_space_description_keyword_or_route_holding_a_secret_is_refused(gm: Cli, tmp_path: Path) -> None:
    """A space's description and keywords go into its memory.json, a routing rule into this
    store's: both are committed, and a likely secret in them is refused, nothing written."""
    from gitmem.store.store import Store

    other = Store(tmp_path / "team", cwd=tmp_path)
    other.init()
    other.close()
    token = BY_NAME["GitHub classic token"].value
    assert gm("space", "add", "team", str(tmp_path / "team")).exit_code == 0
    before = (commit_count(gm.root), commit_count(tmp_path / "team"))
    for args in (["space", "describe", "team", "-d", f"notes of the team, token {token}"],
                 ["space", "describe", "team", "-k", token],
                 ["space", "route", "team", "-k", token],
                 ["space", "route", "team", "-t", f"{token}*"]):
        result = gm(*args)
        assert result.exit_code == 2 and "holds a likely secret" in result.output, (args, result.output)
        assert token not in result.output
    assert (commit_count(gm.root), commit_count(tmp_path / "team")) == before
    for root in (gm.root, tmp_path / "team"):
        assert token not in (root / "memory.json").read_text(encoding="utf-8")
        assert git(root, "status", "--porcelain") == ""
    assert gm("space", "route", "team", "-k", "deploys").exit_code == 0  # an ordinary rule lands
