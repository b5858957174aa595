"""Files on disk: reading module files, the parse cache, dump directories, pass-by-pass dumps."""
