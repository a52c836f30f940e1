"""``build_server`` at the path docs/mcp.md imports it from: the MCP server over one RippleMem handle.

A public path kept after the move to ``ripplemem.interfaces.mcp_server`` (issue 20).
"""

from ripplemem.interfaces.mcp_server import build_server

__all__ = ["build_server"]
