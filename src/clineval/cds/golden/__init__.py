"""The golden set."""
