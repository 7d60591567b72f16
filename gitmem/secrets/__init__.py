"""Likely secrets in text about to be committed, found by a maintained detector (detect-secrets)
and refused before anything is written; see scan.py. Hiding what is already stored from output is
gitmem.redaction's job (cheap, no detector to load on read verbs)."""
