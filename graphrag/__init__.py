"""GraphRAG core: index documents into a knowledge graph and query it with GraphRAG and baseline
retrieval methods, offline by default. The research workbench over it (the ``Workbench`` front
door, project folders, evaluation, reports, the ``graphrag`` command and the MCP server) is the
package ``workbench`` of the same distribution: ``from workbench import Workbench``."""

__version__ = "0.1.0"

# Importing graphrag registers every retrieval method and its [query.<method>] settings (as
# importing the Workbench did when this package exported it): load_settings reads them.
import graphrag.query.registry  # noqa: F401
from graphrag.query.base import Answer
from graphrag.settings import Settings, load_settings

__all__ = ["Answer", "Settings", "load_settings"]
