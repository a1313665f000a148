"""Tier 2: retrieval and citation."""
