"""Secrets never reach a commit unnoticed: write verbs, hand edits and plain `git commit` refuse text
that holds a likely secret (detect-secrets), read verbs never print one already stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from click.testing import Result

from gitmem import redaction
from gitmem.secrets.mask import hide_all, hide_secrets
from gitmem.secrets.scan import added_lines, find_secrets
from gitmem.store.store import Store
from support import Cli, commit_count, git

# The kinds people paste by mistake, each as it appears in a note. Built from pieces so that no
# scanner flags this file itself.
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
AWS = "AKIA" + "QWERTYUIOPASDFGH"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Zq3\n-----END RSA " + "PRIVATE KEY-----"
OPENAI = "sk-proj-" + "Xo9fA8k2Lq7Zr4Tn1Wc6" + "T3BlbkFJ" + "Vb3Ym5Pd0Se2Hu8Jg1Kf"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
POSTGRES_PASSWORD = "pw"
POSTGRES = f"postgres://admin:{POSTGRES_PASSWORD}@db.internal:5432/app"
TOKEN = "tok-5c1e9a77f0"

KINDS = {
    "GitHub Token": (f"CI pushes with {GITHUB} on main", GITHUB),
    "AWS Access Key": (f"The backup job uses {AWS}", AWS),
    "Private Key": (f"Deploy key:\n{PEM}", "MIIEowIBAAKCAQEA7Zq3"),
    "OpenAI Token": (f"Summaries call the API with {OPENAI}", OPENAI),
    "Slack Token": (f"The alert bot posts with {SLACK}", SLACK),
    "Basic Auth Credentials": (f"Staging DB: {POSTGRES}", f"admin:{POSTGRES_PASSWORD}@"),
}
ORDINARY = [
    "The staging database listens on port 5433; deploys go out at noon.",
    "Fixed by commit 3f2c1d0e9b8a7f6e5d4c3b2a1f0e9d8c7b6a5f4e (short 3f2c1d0).",
    "Request 123e4567-e89b-12d3-a456-426614174000 failed with a 502 at 2026-11-30T10:00Z.",
    "Rotate the API key monthly; the password is in the team vault, never in a note.",
    "Our public endpoint is https://api.example.com/v2/items?page=2 on 203.0.113.50.",
    "Entry global-sem-0042 supersedes global-sem-0007; see docs/decisions/0003-sync-and-merge.md.",
    "Install with `pip install -e '.[test]'` and run `pytest -q -k sync`.",
    "The token bucket refills 40 requests per second; secret sauce is caching.",
]


def assert_refused(result: Result, kind: str, secret: str, root: Path, commits: int) -> None:
    stderr = result.stderr
    assert result.exit_code == 2, stderr
    assert f"({kind})" in stderr and "line " in stderr and "--allow-secret" in stderr
    assert secret not in stderr and secret not in result.stdout
    assert len(stderr.strip().splitlines()) == 1
    assert commit_count(root) == commits and git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_remember_refuses_each_kind_and_never_shows_it(gm: Cli, kind: str) -> None:
    text, secret = KINDS[kind]
    before = commit_count(gm.root)
    assert_refused(gm("remember", text, "--layer", "semantic"), kind, secret, gm.root, before)


def test_the_store_git_token_is_refused_verbatim(gm: Cli) -> None:
    before = commit_count(gm.root)
    result = gm("remember", f"The remote wants {TOKEN} as password", "--layer", "semantic",
                env={"GITMEM_GIT_TOKEN": TOKEN})
    assert_refused(result, "the git token of this store", TOKEN, gm.root, before)


def test_every_write_verb_that_takes_text_refuses(gm: Cli) -> None:
    before = commit_count(gm.root)
    line2 = f"first line\nsecond line has {GITHUB}"
    for args in (("decision", "Use the bot account", "--rationale", line2),
                 ("decision", f"Token {GITHUB}", "--rationale", "it works"),
                 ("state", "CI", line2, "--workspace", "proj"),
                 ("working", "--section", "Task", "--content", line2, "--workspace", "proj"),
                 ("working", "--activity", f"pushed with {GITHUB}", "--workspace", "proj"),
                 ("codebase", "ci", line2, "--workspace", "proj"),
                 ("remember", "A safe body", "--layer", "semantic", "--title", f"Token {AWS}"),
                 ("remember", "A safe body", "--layer", "semantic", "--source", POSTGRES)):
        result = gm(*args)
        assert result.exit_code == 2 and "(a likely secret)" not in result.stdout, args
        assert "holds a likely secret" in result.stderr, (args, result.stderr)
        assert GITHUB not in result.stderr and AWS not in result.stderr
    assert "line 2" in gm("state", "CI", line2, "--workspace", "proj").stderr
    assert commit_count(gm.root) == before


def test_allow_secret_lets_one_write_through(gm: Cli) -> None:
    text, _secret = KINDS["AWS Access Key"]
    allowed = gm("remember", text, "--layer", "semantic", "--allow-secret")
    assert allowed.exit_code == 0, allowed.stderr
    assert AWS in (gm.root / "global/semantic/general.md").read_text()
    again = gm("remember", text + " (again)", "--layer", "semantic")
    assert again.exit_code == 2  # the flag was for that one write


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_notes_pass(gm: Cli, text: str) -> None:
    result = gm("remember", text, "--layer", "semantic")
    assert result.exit_code == 0, result.stderr


def test_findings_name_kind_and_line_only() -> None:
    found = find_secrets(f"one\ntwo {GITHUB}\nthree\n{PEM}")
    assert [(f.kind, f.line) for f in found] == [("GitHub Token", 2), ("Private Key", 4)]
    assert all(GITHUB not in str(f) for f in found)
    assert [n for n, _ in added_lines("a\nb\n", "a\nnew\nb\n")] == [2]


# -- hand edits and plain git ---------------------------------------------------------------------
def test_a_hand_edit_holding_a_secret_is_not_committed_by_the_next_write(gm: Cli) -> None:
    assert gm("remember", "Seed", "--layer", "semantic", "--topic", "ci").exit_code == 0
    topic = gm.root / "global/semantic/ci.md"
    with open(topic, "a", encoding="utf-8") as handle:
        handle.write(f"\n## CI token\nPushes use {GITHUB}\n")
    before = commit_count(gm.root)
    result = gm("remember", "Another fact", "--layer", "semantic")
    assert result.exit_code == 2 and "global/semantic/ci.md:" in result.stderr
    assert "GITMEM_ALLOW_SECRET=1" in result.stderr and GITHUB not in result.stderr
    assert commit_count(gm.root) == before and GITHUB in topic.read_text()  # the edit stays
    allowed = gm("remember", "Another fact", "--layer", "semantic", env={"GITMEM_ALLOW_SECRET": "1"})
    assert allowed.exit_code == 0 and commit_count(gm.root) == before + 2


def test_plain_git_commit_of_a_secret_is_refused_by_the_hook(store: Store, gm: Cli) -> None:
    assert gm("remember", "Seed", "--layer", "semantic", "--topic", "ci").exit_code == 0
    assert gm("hooks", "install").exit_code == 0
    topic = store.root / "global/semantic/ci.md"
    with open(topic, "a", encoding="utf-8") as handle:
        handle.write(f"\n## Bot\nThe alert bot posts with {SLACK}\n")
    done = subprocess.run(["git", "commit", "-qam", "bot token"], cwd=store.root, capture_output=True,
                          text=True)
    assert done.returncode != 0
    assert "global/semantic/ci.md:" in done.stderr and "(Slack Token)" in done.stderr
    assert SLACK not in done.stderr and "GITMEM_ALLOW_SECRET=1" in done.stderr
    forced = subprocess.run(["git", "commit", "-qam", "bot token, knowingly"], cwd=store.root,
                            capture_output=True, text=True, env={**os.environ, "GITMEM_ALLOW_SECRET": "1"})
    assert forced.returncode == 0, forced.stderr
    # A secret already committed does not block later commits of the same file.
    with open(topic, "a", encoding="utf-8") as handle:
        handle.write("\n## Later\nAn ordinary note.\n")
    later = subprocess.run(["git", "commit", "-qam", "later"], cwd=store.root, capture_output=True, text=True)
    assert later.returncode == 0, later.stderr


def test_a_commit_message_holding_a_secret_is_refused_by_the_hook(store: Store, gm: Cli) -> None:
    """The commit-msg hook: a token in the message of a plain `git commit` is refused (the kind
    and the line, never the token), HEAD does not move and the edit stays in the file; so is a
    token in a `#` line (git keeps those in a message given with -m or -F); an ordinary message,
    and GITMEM_ALLOW_SECRET=1, pass."""
    assert gm("remember", "Seed", "--layer", "semantic", "--topic", "ci").exit_code == 0
    assert gm("hooks", "install").exit_code == 0
    topic = store.root / "global/semantic/ci.md"

    def commit(message: str, **env: str) -> subprocess.CompletedProcess[str]:
        with open(topic, "a", encoding="utf-8") as handle:
            handle.write(f"\n## Note {len(message)}\nAn ordinary note.\n")
        return subprocess.run(["git", "commit", "-qa", "-F", "-"], cwd=store.root, input=message,
                              capture_output=True, text=True, env={**os.environ, **env})

    before = git(store.root, "rev-parse", "HEAD")
    refused = commit(f"Rotate the bot\n\nThe old one was {SLACK}\n")
    assert refused.returncode != 0
    assert "commit message line 3" in refused.stderr and "(Slack Token)" in refused.stderr
    assert SLACK not in refused.stderr and "GITMEM_ALLOW_SECRET=1" in refused.stderr
    assert git(store.root, "rev-parse", "HEAD") == before
    assert "global/semantic/ci.md" in git(store.root, "diff", "HEAD", "--name-only")
    assert commit(f"Rotate the bot\n# the old one was {SLACK}\n").returncode != 0
    assert commit("Rotate the bot\n").returncode == 0
    assert SLACK not in git(store.root, "log", "--format=%B")
    forced = commit(f"Rotate the bot, knowingly: {SLACK}\n", GITMEM_ALLOW_SECRET="1")
    assert forced.returncode == 0, forced.stderr


def test_a_store_whose_hooks_predate_commit_msg_gets_it_at_its_next_commit(store: Store,
                                                                           gm: Cli) -> None:
    """Hooks installed by a gitmem without the commit-msg hook (no hook list in state/hooks.json):
    the next plain commit's pre-commit adds it, and it refuses that very commit's token. A hook
    a person removed after an install that listed it is not put back."""
    assert gm("remember", "Seed", "--layer", "semantic", "--topic", "ci").exit_code == 0
    assert gm("hooks", "install").exit_code == 0
    hooks = Path(git(store.root, "rev-parse", "--git-path", "hooks").strip())
    hooks = hooks if hooks.is_absolute() else store.root / hooks
    state_file = store.root / "state/hooks.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    assert "commit-msg" in state["hooks"]
    (hooks / "commit-msg").unlink()  # as an earlier gitmem left it
    state_file.write_text(json.dumps({k: v for k, v in state.items() if k != "hooks"}), encoding="utf-8")
    topic = store.root / "global/semantic/ci.md"

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        with open(topic, "a", encoding="utf-8") as handle:
            handle.write(f"\n## Note {len(message)}\nAn ordinary note.\n")
        return subprocess.run(["git", "commit", "-qa", "-F", "-"], cwd=store.root, input=message,
                              capture_output=True, text=True)

    before = git(store.root, "rev-parse", "HEAD")
    refused = commit(f"Rotate the bot\n\nThe old one was {SLACK}\n")
    assert refused.returncode != 0 and "installed gitmem's commit-msg hook" in refused.stderr
    assert "(Slack Token)" in refused.stderr and SLACK not in refused.stderr
    assert git(store.root, "rev-parse", "HEAD") == before
    assert (hooks / "commit-msg").is_file()
    assert "missing" not in gm("hooks", "status").output
    assert "commit-msg" in json.loads(state_file.read_text(encoding="utf-8"))["hooks"]
    (hooks / "commit-msg").unlink()  # removed on purpose now: left so
    done = commit("An ordinary message\n")
    assert done.returncode == 0, done.stderr
    assert not (hooks / "commit-msg").exists() and "installed gitmem" not in done.stderr


# -- read verbs never print a stored secret, and never load the detector ---------------------------
def test_search_and_context_hide_secrets_already_stored(gm: Cli) -> None:
    stored = [KINDS[k] for k in ("GitHub Token", "AWS Access Key", "OpenAI Token", "Slack Token",
                                 "Basic Auth Credentials", "Private Key")]
    for text, _secret in stored:
        result = gm("remember", text, "--layer", "semantic", "--importance", "critical", "--allow-secret")
        assert result.exit_code == 0, result.stderr
    result = gm("remember", f"Remote password {TOKEN} for the mirror", "--layer", "semantic",
                "--importance", "critical", "--allow-secret", env={"GITMEM_GIT_TOKEN": TOKEN})
    assert result.exit_code == 0
    outputs = []
    for query in ("CI pushes", "backup job", "summaries API", "alert bot", "staging DB", "deploy key",
                  "mirror"):
        hits = gm("search", query, "--json")
        assert hits.exit_code == 0, (query, hits.stderr)
        outputs += [hits.stdout, gm("search", query).stdout]
    outputs += [gm("context").stdout, gm("context", "--json").stdout]
    everything = "\n".join(outputs)
    for secret in (GITHUB, AWS, OPENAI, SLACK, f"admin:{POSTGRES_PASSWORD}@", "MIIEowIBAAKCAQEA7Zq3"):
        assert secret not in everything, secret
    assert "***" in everything and "CI pushes with" in everything
    assert TOKEN not in gm("search", "mirror", env={"GITMEM_GIT_TOKEN": TOKEN}).stdout


@pytest.mark.parametrize("text", ORDINARY)
def test_hiding_leaves_ordinary_text_alone(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gitmem.redaction._SECRETS", set())  # tokens other tests registered
    assert hide_secrets(text) == text


def test_masking_many_texts_at_once_masks_each_as_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gitmem.redaction._SECRETS", set())
    secretive = [text for text, _secret in KINDS.values()]
    # A private key's BEGIN line in one text and no END: alone it is hidden to its text's end.
    begin_only = "key: -----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA7Zq3"
    for texts in (ORDINARY, [*ORDINARY[:3], secretive[0], *ORDINARY[3:]], secretive,
                  [begin_only, *ORDINARY], [ORDINARY[0], f"mirror {TOKEN}", ""], []):
        assert hide_all(texts, [TOKEN]) == [hide_secrets(text, [TOKEN]) for text in texts]
    assert hide_all(ORDINARY) == ORDINARY


def test_a_text_masked_before_is_masked_again_once_a_token_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    """Masked texts are remembered under the secrets in force: a token registered (or passed, or
    set in the caller's environment) after a text was shown clean hides it from then on."""
    monkeypatch.setattr("gitmem.redaction._SECRETS", set())
    late = "plainword" + "Q7x9Lm2Rt5Vw8Kp3"
    text = f"the mirror answers to {late} now"
    assert hide_all([text, ORDINARY[0]]) == [text, ORDINARY[0]]
    assert hide_all([text], [late]) == ["the mirror answers to *** now"]
    monkeypatch.setenv("GITMEM_GIT_TOKEN", late)
    assert hide_all([text]) == ["the mirror answers to *** now"]
    monkeypatch.delenv("GITMEM_GIT_TOKEN")
    assert hide_all([text]) == [text]
    redaction.register_secret(late)
    assert hide_all([text, ORDINARY[0]]) == ["the mirror answers to *** now", ORDINARY[0]]


def test_help_and_read_verbs_never_load_the_detector(store: Store, gm: Cli) -> None:
    assert gm("remember", "Deploys go out at noon", "--layer", "semantic").exit_code == 0
    code = (
        "import sys\nfrom gitmem.cli import cli\n"
        "for argv in (['--help'], ['remember', '--help'], {reads}):\n"
        "    try:\n        cli(['--root', {root!r}, *argv])\n    except SystemExit:\n        pass\n"
        "print('detect_secrets' in sys.modules, 'requests' in sys.modules)\n"
    ).format(root=str(store.root), reads=", ".join(repr(a) for a in (
        ["search", "deploys"], ["context"], ["show", "global-sem-0001"], ["list"], ["status"],
        ["conflicts"])))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "False False", done.stderr


def test_runtime_items_and_documents_refuse_secrets_too(gm: Cli, tmp_path: Path) -> None:
    before = commit_count(gm.root)
    document = tmp_path / "runbook.md"
    document.write_text(f"# Runbook\n\nStep 1.\nThe bot posts with {SLACK}\n", encoding="utf-8")
    for args in (("runtime", "add", f"CI pushes with {GITHUB}"),
                 ("doc", "add", str(document), "--title", "Runbook", "--scope", "global")):
        result = gm(*args)
        assert result.exit_code == 2 and "holds a likely secret" in result.stderr, (args, result.output)
        assert GITHUB not in result.stderr and SLACK not in result.stderr
    assert commit_count(gm.root) == before
    assert gm("runtime", "add", "The CI runner is ubuntu-24.04").exit_code == 0
    assert gm("runtime", "replace", "ubuntu", f"runner token {GITHUB}").exit_code == 2
    assert gm("runtime", "replace", "ubuntu", f"runner token {GITHUB}", "--allow-secret").exit_code == 0
    added = gm("doc", "add", str(document), "--title", "Runbook", "--scope", "global", "--allow-secret")
    assert added.exit_code == 0, added.output


def test_a_snippet_cut_never_shows_part_of_a_secret(gm: Cli) -> None:
    """A search snippet is cut from text masked beyond its edges: a token the cut would split
    (its head, which names its kind, left out) is masked before the cut, wherever it sits."""
    from gitmem.search.analysis import highlight_words
    from gitmem.search.query import understand
    from gitmem.search.rank import snippet

    filler = "notes on the release train and its checklist "
    bodies = [f"{filler * 2} {GITHUB} {'y' * gap} zebracorn and the rest {filler * 4}"
              for gap in range(0, 60, 3)]
    for body in bodies:
        assert gm("remember", body, "--layer", "semantic", "--topic", "release", "--allow-secret").exit_code == 0
    words = highlight_words(understand("zebracorn", date.today()).groups)
    pieces = {GITHUB[i:i + 12] for i in range(len(GITHUB) - 11)}
    cut_first = [hide_secrets(snippet(body, words)) for body in bodies]
    assert any(piece in text for text in cut_first for piece in pieces)  # masking the cut leaks
    hits = gm("search", "zebracorn", "--json", "--limit", "50")
    assert hits.exit_code == 0, hits.stderr
    found = json.loads(hits.stdout)
    assert len(found) == len(bodies) and all("zebracorn" in hit["snippet"] for hit in found)
    for piece in pieces:
        assert piece not in hits.stdout, piece


def test_texts_cut_for_a_message_or_the_card_are_masked_before_the_cut(gm: Cli) -> None:
    """The siblings of the snippet: a runtime item named in a refusal (its first 60 characters)
    and a workspace state line on the card (its first 300) are masked whole, then cut."""
    pieces = {GITHUB[i:i + 12] for i in range(len(GITHUB) - 11)}
    for lead in range(40, 60, 4):  # the cut at 60 falls inside the token
        added = gm("runtime", "add", f"{'w' * lead} {GITHUB} deploy step {lead}", "--allow-secret")
        assert added.exit_code == 0, added.output
    refused = gm("runtime", "remove", "deploy step")
    assert refused.exit_code != 0 and "candidates:" in refused.stderr
    for piece in pieces:
        assert piece not in refused.output, piece
    assert gm("state", "Release", f"{'r' * 280} {GITHUB} and then the tag", "--allow-secret",
              workspace="shop").exit_code == 0
    card = gm("context", workspace="shop")
    assert card.exit_code == 0 and "Release" in card.stdout
    for piece in pieces:
        assert piece not in card.stdout, piece


def test_a_whole_output_printed_again_is_masked_as_the_first_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """hide_output keeps what an output became (a warm server prints the same card again and
    again) under the secrets in force: a token registered since is masked the next time; an
    output too big to keep is masked each time."""
    from gitmem.secrets import mask

    monkeypatch.setattr("gitmem.redaction._SECRETS", set())
    card = f"## card\n- The backup job uses {AWS}\n- Remote password plainpass-0042-xyz for the mirror\n"
    first = mask.hide_output(card)
    assert AWS not in first and "plainpass-0042-xyz" in first
    assert mask.hide_output(card) == first
    redaction.register_secret("plainpass-0042-xyz")
    assert "plainpass-0042-xyz" not in mask.hide_output(card)
    big = card * (mask.KEPT_CHARS // len(card) + 1)
    assert len(big) > mask.KEPT_CHARS and AWS not in mask.hide_output(big)
    assert all(key[0] != big for key in mask._SEEN)


def test_the_kept_masks_stay_within_their_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept masks are bounded in texts and in characters: a long-lived server printing many
    large answers keeps at most SEEN_CHARS of them."""
    from gitmem.secrets import mask

    monkeypatch.setattr(mask, "_SEEN", {})
    monkeypatch.setattr(mask, "_seen_chars", 0)
    monkeypatch.setattr(mask, "SEEN_CHARS", 50_000)
    for n in range(40):
        mask.hide_output(f"answer {n} " + "lorem ipsum dolor " * 300)
        assert sum(len(text) for text, _key in mask._SEEN) <= 50_000
    assert mask._SEEN  # the latest are kept
    before = dict(mask._SEEN)
    many = [f"line {n} of a long export" for n in range(mask.SEEN_LIMIT)]
    assert mask.hide_all(many) == many  # masked, and not kept: it would push out the rest
    assert before == mask._SEEN


def test_clip_masks_before_it_cuts() -> None:
    """clip (what a report line, a model's reply or a rejected line shows) never leaves the tail
    of a secret the cut would have split; redaction before a log's cut does the same for URLs."""
    from gitmem.git.locks import GitProcess
    from gitmem.secrets.mask import clip

    text = f"{'r' * 70} {GITHUB} the rest"
    assert GITHUB[4:20] in hide_secrets(text[:100])  # cut first, the tail escapes the mask
    shown = clip(text, 100)
    assert len(shown) <= 100 and all(GITHUB[i:i + 12] not in shown for i in range(len(GITHUB) - 11))
    url = "https://ci:" + "s3cr3t-" + "t0k3n-value-1234567890123456789012@git.example.com/acme/shop.git"
    argv = ("git", "push", "--force-with-lease", "--quiet", url, "main")
    assert "s3cr3t" in hide_secrets(" ".join(argv)[:80])  # cut before the @: no URL left to see
    assert "s3cr3t" not in hide_secrets(GitProcess(4242, argv, None).describe())
