"""The report formats."""
