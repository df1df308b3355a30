"""What a reader sees: report folders, tables, the reading, plots, the graph page."""
