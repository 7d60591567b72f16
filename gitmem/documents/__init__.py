"""Project documents: `<scope>/documents/index.json` and managed Markdown copies under active/ and
archived/ (hot and cold). `model` (records, copies), `sources` (sourcePaths), `access` (last read,
machine-local), `shelf` (the scope's files and the active cap), `verbs` (what the CLI calls)."""
