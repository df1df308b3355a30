"""Retrieval methods behind one interface, ``method.answer(question) -> Answer``: one module each,
registered by name (docs/methods.md)."""
