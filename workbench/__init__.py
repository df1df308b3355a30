"""The research workbench over the GraphRAG core (package ``graphrag``): the ``Workbench`` front
door (``session.py``), project folders, evaluation, reports, the command line and the MCP
server. The core never imports this package (``python -m graphrag`` aside, which runs its
command line)."""

from workbench.session import Workbench

__all__ = ["Workbench"]
