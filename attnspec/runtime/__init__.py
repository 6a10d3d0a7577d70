"""Process-level concerns every command shares: signals, progress on stderr, torch threads."""
