"""Result directories on disk: how they are written (locked, atomic, link-safe) and read."""
