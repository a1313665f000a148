"""Diagnosis names: terminology, normalisation, equivalence."""
