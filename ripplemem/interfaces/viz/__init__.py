"""The graph page: the view of a user's graph (`data`) and the self-contained HTML file (`page`)."""
