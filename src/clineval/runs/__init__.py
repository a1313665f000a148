"""A run's lifecycle."""
