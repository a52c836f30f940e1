"""Ways in from outside Python code: the command line, the MCP server, the graph page, shared replies."""
