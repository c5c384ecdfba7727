"""Source text: positions and line breaks, diagnostics with their spans, user text inside C."""
