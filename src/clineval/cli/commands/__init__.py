"""The command groups."""
