"""Clinical accuracy and reasoning quality."""
