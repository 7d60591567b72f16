"""Git hooks of the store: install/uninstall/status, the hook entry points, the merge driver."""
