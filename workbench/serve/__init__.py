"""Serving a project to other programs: ``graphrag mcp`` (the Model Context Protocol, over
stdio or streamable HTTP). ``project_view`` answers each request from a :class:`Workbench`
as plain JSON-ready data; ``mcp_server`` puts those answers on the protocol (docs/mcp.md)."""
