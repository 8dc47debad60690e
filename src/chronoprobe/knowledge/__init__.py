"""Gold answers for time-sensitive facts: the fact catalogue, Wikidata retrieval and pinned snapshots."""
