"""Retrieval methods behind one interface: ``method.answer(question) -> Answer``.

Each method is one module of this package, registered by name with ``registry.register``
(docs/methods.md).
"""
