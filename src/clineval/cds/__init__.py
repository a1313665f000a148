"""The four-tier clinical decision-support evaluation."""
