"""The rules an agent is given with the tools: the server's instructions and the lines every
write tool's description carries. Worded for a model reading a tool list."""

from __future__ import annotations

INSTRUCTIONS = """\
gitmem is this user's long-term memory: Markdown entries in a git repository, shared across \
sessions and machines.

- Start of a session: read the context card (tool `context`, resource gitmem://context or the \
prompt `start-of-session`); it holds the runtime memory, the workspace state, decisions in force \
and critical facts. What it leaves out still exists: `search` finds it.
- Search before you write: a fact already recorded is verified (`verify`) or superseded \
(`remember` with `supersedes`), never recorded twice.
- Write only what a later session needs and could not read from the code or the git log: a \
decision and why, a lesson learned the hard way, a convention, where work stands. Writing nothing \
is a correct outcome; never write to fill a gap.
- The rest of the loop needs no shell: `consolidate` turns captured digests into entries (what \
it was unsure of waits in `review_list` for the user to accept or reject), `refresh` re-judges \
stale ones, `sync` shares, `conflicts` lists what a sync left and `resolve` settles it; \
`workspaces` / `associate` say which project a folder is.
- A subagent never writes memory: it reads and searches freely and reports what it learned to \
its caller, whose job recording is. Under GITMEM_SUBAGENT=1 (or a server started with \
--subagent) every write tool refuses.
- An error is one line starting `gitmem: error:`; it says what to change."""

WRITE_RULES = (
    " Search first; writing nothing is a correct outcome. Subagents must not call this tool "
    "(it refuses under GITMEM_SUBAGENT=1): report to your caller instead."
)

ENTRY_ID = ("Entry id as search prints it, <scope>-<layer>-<number>: e.g. global-sem-0007, or "
            "shop-dec-0012 in workspace shop (SPACE/ID for an entry of a mounted space).")
DOC_ID = ("Document id as doc_search prints it, <scope>-doc-<number>: e.g. global-doc-0003, or "
          "shop-doc-0001 in workspace shop.")
SPACE = "A mounted space to use instead of this store ('home': the store itself)."
ALLOW_SECRET = ("Record the text although it looks like it holds a secret. Only when the user "
                "asked for it: secrets are refused on purpose.")
SCOPE = "global (every workspace) or workspace (only the current project)."
