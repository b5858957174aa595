"""Facts about one module: its summary (and kernels, memory, collectives as they land)."""
