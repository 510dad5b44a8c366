"""One subpackage per file format; each exposes sniff, read, write, validate."""
