"""Mentions merged into the entity graph, aliases, sentence edges, communities."""
