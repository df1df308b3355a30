"""Entities and relationships out of text units: LLM (record replies) and LLM-free."""
