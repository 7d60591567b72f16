"""What gitmem did, for the people who run it: counters (state/metrics.json), a bounded feed of
recent actions (state/activity.jsonl), and the one function that records an event in both and in
logs/memory.log. Imports only ground modules, so the store's transaction can call it."""
