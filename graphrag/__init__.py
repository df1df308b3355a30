"""GraphRAG research workbench: index documents into a knowledge graph, query it with GraphRAG
and baseline retrieval methods, and evaluate them reproducibly, offline by default."""

__version__ = "0.1.0"

from graphrag.query.base import Answer
from graphrag.settings import Settings, load_settings
from graphrag.workbench import Workbench

__all__ = ["Answer", "Settings", "Workbench", "load_settings"]
