"""Git hooks of the store: install/uninstall/status, the hook entry points, the merge driver."""

# The hooks `gitmem hooks install` writes (hooks/ holds their scripts); a constant here, so a
# hook's process finds its name without importing the installer.
HOOK_NAMES = ("pre-commit", "commit-msg", "post-commit", "post-merge", "post-checkout", "post-rewrite")
