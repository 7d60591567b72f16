"""The store's own history: where an entry came from, its versions, the store as it was, and
whether the code an entry describes changed since it was verified."""
