"""Every token shape of the corpus, in prose, JSON, a URL and an environment line, is refused by
the gate and masked by the output, and ordinary notes pass both untouched."""

from __future__ import annotations

import json

import pytest

from fixtures.tokens import ORDINARY, SHAPES, Shape
from gitmem.secrets.mask import hide_secrets
from gitmem.secrets.scan import find_secrets
from support import Cli, commit_count, git

FORMS = ("prose", "json", "url", "env")
CASES = [(shape, form) for shape in SHAPES for form in FORMS]


def test_the_corpus_covers_at_least_forty_distinct_shapes() -> None:
    assert len({shape.name for shape in SHAPES}) == len(SHAPES) >= 40
    assert len({shape.secret for shape in SHAPES}) == len(SHAPES)


@pytest.mark.parametrize(("shape", "form"), CASES, ids=[f"{s.name}-{f}" for s, f in CASES])
def test_the_gate_refuses_and_the_mask_hides_each_shape_in_each_form(shape: Shape, form: str) -> None:
    text = shape.forms()[form]
    found = find_secrets(text)
    assert found, text
    assert all(shape.secret not in str(finding) for finding in found)
    masked = hide_secrets(text)
    assert shape.secret not in masked and "***" in masked


BARE = [shape for shape in SHAPES if shape.bare]


@pytest.mark.parametrize("shape", BARE, ids=[s.name for s in BARE])
def test_a_token_alone_in_a_sentence_is_refused_and_masked_to_its_end(shape: Shape) -> None:
    """With no word beside it that marks it, a recognisable token is still refused, and the
    mask runs to the token's last character: a pattern that matches only the start of a token
    (a JWT's header and payload, a GitLab token before its dotted suffix) leaves no tail."""
    text = f"Pasted by mistake: {shape.value} (remove it)"
    assert find_secrets(text), shape.name
    masked = hide_secrets(text)
    assert shape.secret not in masked
    if not any(c in shape.value for c in " \n;:@"):  # one token, not a URL or a block
        assert masked == "Pasted by mistake: *** (remove it)", masked


SINGLE = [shape for shape in BARE if not any(c in shape.value for c in " \n;:@")]
WRAPS = ("_{v}_", "__{v}__", "*{v}*", "**{v}**", "`{v}`", "({v})", "\"{v}\"", "<{v}>", "[{v}](#x)")


@pytest.mark.parametrize("shape", SINGLE, ids=[s.name for s in SINGLE])
def test_a_token_in_markdown_emphasis_or_a_json_string_is_refused_and_masked(shape: Shape) -> None:
    """What touches a token's edges does not hide it: Markdown's emphasis and links, quotes, and
    a JSON string's escapes (a line break written `\\n` just before it, its first character
    written `\\u....`), as pasted from an editor, a log or an API answer."""
    for wrap in WRAPS:
        text = "Pasted: " + wrap.format(v=shape.value) + " here"
        assert find_secrets(text), (shape.name, wrap)
        assert shape.secret not in hide_secrets(text), (shape.name, wrap)
    after_break = json.dumps({"note": "the key:\n" + shape.value})
    assert find_secrets(after_break) and shape.secret not in hide_secrets(after_break), shape.name
    first = f"\\u{ord(shape.value[0]):04x}"
    escaped = '{"note": "' + first + shape.value[1:].replace("/", "\\/") + '"}'
    assert json.loads(escaped)["note"] == shape.value
    assert find_secrets(escaped), shape.name


def _hidden_forms(value: str) -> dict[str, str]:
    from urllib.parse import quote

    first = value[0]
    return {
        "percent-escaped after a name": f"GET /cb?key%3D{quote(value, safe='')}&x=1",
        "a whole encoded URL": "redirect=" + quote(f"https://api.example.com/?token={value}", safe=""),
        "colour codes around it": f"TOKEN=\x1b[01;31m\x1b[K{value}\x1b[m\x1b[K",
        "a character reference": f"token &#{ord(first)};{value[1:]} here",
        "a hex character reference": f"token &#x{ord(first):x};{value[1:]} here",
        "a zero-width space inside": f"token {value[:6]}\u200b{value[6:]} here",
        "a soft hyphen inside": f"token {value[:6]}\u00ad{value[6:]} here",
        "full-width letters": "token " + "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value),
    }


@pytest.mark.parametrize("shape", SINGLE, ids=[s.name for s in SINGLE])
def test_a_token_hidden_by_escapes_colour_codes_or_look_alikes_is_refused_and_masked(shape: Shape) -> None:
    """Percent-escapes, a terminal's colour codes, HTML character references, invisible or
    full-width characters: the gate reads the line as it reads once they are undone, and the
    mask hides the whole line (its token cannot be cut out where it is written)."""
    for form, text in _hidden_forms(shape.value).items():
        assert find_secrets(text), (shape.name, form)
        assert shape.secret not in hide_secrets(text) and "***" in hide_secrets(text), (shape.name, form)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_notes_are_neither_refused_nor_masked(text: str) -> None:
    assert find_secrets(text) == []
    assert hide_secrets(text) == text


@pytest.mark.parametrize("index", range(len(SHAPES)), ids=[s.name for s in SHAPES])
def test_remember_refuses_every_shape_and_never_prints_it(gm: Cli, index: int) -> None:
    shape = SHAPES[index]
    form = FORMS[index % len(FORMS)]  # each form goes through the CLI for a quarter of the shapes
    before = commit_count(gm.root)
    result = gm("remember", shape.forms()[form], "--layer", "semantic")
    assert result.exit_code == 2, (shape.name, form, result.output)
    assert "holds a likely secret" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert shape.secret not in result.stderr and shape.secret not in result.stdout
    assert commit_count(gm.root) == before and git(gm.root, "status", "--porcelain") == ""


def test_a_line_the_gate_refuses_is_always_changed_by_the_mask() -> None:
    """The reader hides at least what the writer refuses: mixed with ordinary lines, each
    refused line comes out of the mask changed, each ordinary line as it was."""
    lines = [form for shape in SHAPES for form in shape.forms().values() if "\n" not in form]
    text = "\n".join(line for pair in zip(lines, ORDINARY * len(lines), strict=False) for line in pair)
    refused = {finding.line for finding in find_secrets(text)}
    before, after = text.split("\n"), hide_secrets(text).split("\n")
    assert len(before) == len(after)
    for number, (old, new) in enumerate(zip(before, after, strict=True), 1):
        assert (old != new) == (number in refused), old


def test_masking_what_is_masked_changes_nothing() -> None:
    """mask.hide_all keeps a masked text as its own masked form (an adapter masks a verb's output
    once more): that holds only because masking is idempotent, on every shape and form."""
    for text in [form for shape in SHAPES for form in shape.forms().values()] + list(ORDINARY):
        masked = hide_secrets(text)
        assert hide_secrets(masked) == masked, text


def test_printed_data_is_masked_in_its_values_and_its_keys() -> None:
    from pathlib import Path

    from gitmem.secrets.mask import masked_data

    shape = SHAPES[0]
    secret_text = shape.forms()["prose"]
    data = {"hits": [{"title": secret_text, "path": Path("global/semantic/x.md"), "n": 3}],
            secret_text: "a key that holds one", "plain": "nothing to hide"}
    shown = masked_data(data)
    spelled = str(shown)
    assert shape.secret not in spelled and "***" in spelled
    assert shown["plain"] == "nothing to hide" and shown["hits"][0]["path"] == "global/semantic/x.md"
    assert shown["hits"][0]["n"] == 3
