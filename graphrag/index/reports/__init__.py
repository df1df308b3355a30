"""Community reports: written by the LLM, stopped early, or lazily on first read."""
