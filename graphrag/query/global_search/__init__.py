"""Global search: map over community reports, reduce into one answer."""
