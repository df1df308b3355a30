"""Entities and relationships out of text units: LLM (JSON or records) and LLM-free."""
