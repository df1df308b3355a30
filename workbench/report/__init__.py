"""What a reader sees: report folders, their tables and plots, the graph page."""
