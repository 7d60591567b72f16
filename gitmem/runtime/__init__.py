"""Hot runtime memory: `<scope>/runtime/memories.json` and its USER.md / MEMORY.md projections.

- `model`: records, the JSON file, content rules and the projections (pure).
- `edits`: matching items by text, and hand edits of a projection as add/remove/replace (pure).
- `base`: what a hand edit of a projection started from, told by the committed history (pure).
- `settle`: which version `ours` / `theirs` means when a record in conflict is settled (pure).
- `budget`: byte budgets and which items leave when an add overflows (pure).
- `tier`: reading and writing one scope's runtime files in the store, hand-edit import.
- `archive`: where items that leave the hot file go (long-term layers, USER.archive.md).
- `writes`: the frame of every runtime write (checked under the lock, one commit).
- `verbs`: add, replace, remove, show, resolve; the snapshot the context card shows.
- `similar`: near-duplicate items by lexical similarity (pure), for the maintenance pass.
- `regroup`: items replaced by others in one commit (a maintenance proposal accepted).
"""
