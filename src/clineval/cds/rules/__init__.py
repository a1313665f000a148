"""Tier 3: guideline rules."""
