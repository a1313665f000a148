"""The parts of a report."""
