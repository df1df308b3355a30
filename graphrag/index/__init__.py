"""Indexing: documents → text_units → entities/relationships → graph → communities → reports."""
