"""Multiple-choice question answering."""
