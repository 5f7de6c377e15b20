"""The MCP server (``dreamd mcp``): its tools, their schemas and the stdio server."""
