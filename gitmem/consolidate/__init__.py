"""Model passes that turn material into entries: pending digests into attributed entries
(consolidation), and stale entries into kept, updated or forgotten ones (refresh). Replies are
read per line, so one bad line never sinks a batch; a JSON reply is read with escalating recovery."""
