"""Tier 4: the scoped LLM judge."""
