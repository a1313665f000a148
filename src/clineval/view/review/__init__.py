"""Clinician review."""
