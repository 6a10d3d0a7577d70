"""Every command option declared once (type, range, default, help), and what is derived from
the declarations: the typer options, the Python API's signatures and docstrings, the checks."""
