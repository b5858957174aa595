"""Reports of a diff: rich text for the terminal, and HTML."""
