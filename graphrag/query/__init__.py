"""Retrieval methods behind one interface: ``method.answer(question) -> Answer``."""
