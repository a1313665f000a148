"""Differential diagnosis."""
