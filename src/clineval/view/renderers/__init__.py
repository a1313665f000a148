"""Page renderers."""
