"""Sessions become memory without storing transcripts: a transcript is read incrementally, reduced
by a deterministic relevance filter, summarized (or clipped without a model) into a digest in
digests/, which consolidation later turns into entries."""
