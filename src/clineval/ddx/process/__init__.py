"""Process metrics of a multi-agent DDx discussion."""
