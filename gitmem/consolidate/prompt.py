"""The consolidation prompt: the protocol in plain words, then each digest introduced by a line
`### digest <id>` (the id the reply cites), bounded per digest and in total."""

from __future__ import annotations

from gitmem.capture.digests import Digest

INSTRUCTIONS = """\
You are consolidating digests of work sessions into a long-term memory store. Each digest below
starts with a line "### digest" followed by its id. For every fact in a digest that a later
session should know, write one line in exactly this form:

- [<digest> | <scope> | <layer> | <importance> | <confidence>] <topic> :: <text>

  <digest>      the id from the digest's "### digest" line
  <scope>       global, or workspace:<key> with the workspace key printed in the digest, for facts
                that belong to that repository
  <layer>       semantic (how things are), episodic (what happened and when), procedural (steps
                that work), learnings (mistakes not to repeat), decisions (a settled choice and
                why), codebase (what a file or subsystem does; the topic is its path)
  <importance>  critical, high, normal or low
  <confidence>  how sure you are that the digest states this fact and that it is durable, from
                0.0 (a guess) to 1.0 (stated plainly)
  <topic>       a short topic name; related facts share one
  <text>        the fact in one or two self-contained sentences, starting with the date
                (YYYY-MM-DD) when it holds only for a while

When a digest is finished, write the line DONE followed by its id.
A digest with nothing durable gets only its DONE line: writing nothing is a correct outcome.
Never invent a fact. Leave out tool activity, code, progress reports and pleasantries.
Reply with these lines only.
"""


def digest_block(digest: Digest, max_bytes: int) -> str:
    """One digest as the model sees it, cut to `max_bytes` (bullets from the end go first)."""
    first, last = digest.header.get("first", "")[:10], digest.header.get("last", "")[:10]
    dates = first if first == last else f"{first} to {last}"
    head = [f"### digest {digest.id}",
            f"workspace: {digest.workspace or 'none (use global)'}"
            f"   branch: {digest.header.get('branch') or '-'}   dates: {dates or '-'}"]
    if digest.files:
        head.append("files touched: " + ", ".join(digest.files))
    bullets = [f"- ({day}) {bullet}" for day, items in digest.sections for bullet in items]
    lines = head + bullets
    while len("\n".join(lines).encode("utf-8")) > max_bytes and len(lines) > len(head):
        lines.pop()
    cut = len(head) + len(bullets) - len(lines)
    if cut:
        lines.append(f"({cut} more bullets cut to fit)")
    return "\n".join(lines)


def consolidation_prompt(digests: list[Digest], max_prompt_bytes: int,
                         max_digest_bytes: int) -> tuple[str, list[Digest]]:
    """(the prompt, the digests it holds): as many as fit, at least one."""
    parts = [INSTRUCTIONS]
    size = len(INSTRUCTIONS.encode("utf-8"))
    included: list[Digest] = []
    for digest in digests:
        block = digest_block(digest, max_digest_bytes)
        block_size = len(block.encode("utf-8")) + 2
        if included and size + block_size > max_prompt_bytes:
            break
        parts.append(block)
        size += block_size
        included.append(digest)
    return "\n\n".join(parts) + "\n", included
