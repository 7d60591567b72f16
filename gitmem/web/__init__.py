"""The local web page: see, search, fix and settle the memory in a browser."""
