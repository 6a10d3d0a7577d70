"""The ``attnspec`` command line: one module per command group, each a thin layer."""
