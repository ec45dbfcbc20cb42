"""thinkgraph over HTTP: workspaces, documents, ask (with streamed trace events), retrieval, graph
browsing and curation, an OpenAI-compatible chat endpoint, a web page, and an MCP server."""
