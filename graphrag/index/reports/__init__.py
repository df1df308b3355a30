"""Community reports: written by the LLM, from templates, or lazily on first read."""
