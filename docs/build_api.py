"""Build the HTML API reference of attnspec with pdoc: ``python docs/build_api.py [-o docs/api]``.

The reference documents every public module of the library: ``attnspec`` (the API of
``attnspec.__all__``) and each module and package below it whose name has no leading
underscore, except ``attnspec.cli`` (a command is documented by its ``--help`` and by
docs/<command>.md). Docstrings are read as numpydoc (``Parameters``, ``Returns``,
``Raises`` sections).

pdoc is called through its library functions rather than its command line for two reasons:

* A package with ``__all__`` limits pdoc's walk to the submodules it lists, and
  ``attnspec.__all__`` lists the API, not the packages; the modules are listed here instead.
* ``attnspec``, ``attnspec.theorem`` and ``attnspec.theory.osa`` import their API on first attribute access
  (PEP 562), so their ``__dict__`` holds none of it and pdoc would report every name of
  ``__all__`` as unresolved; the names are resolved before pdoc reads the modules.

Any warning pdoc raises (a module that fails to import, a name it cannot resolve) fails the
build: the reference would otherwise be silently incomplete.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

ROOT = "attnspec"
#: Modules under these prefixes are left out of the reference (the CLI documents itself).
EXCLUDED = ("attnspec.cli",)
DEFAULT_OUT = Path(__file__).resolve().parent / "api"


def public_modules() -> list[str]:
    """The names of the modules the reference documents, parents before children.

    Returns
    -------
    list of str
        ``"attnspec"`` then every module below it, found by walking the package, whose
        dotted name has no component starting with ``_`` and is not under `EXCLUDED`.
    """
    root = importlib.import_module(ROOT)
    names = [ROOT]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{ROOT}."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or info.name.startswith(EXCLUDED):
            continue
        names.append(info.name)
    return names


def resolve_lazy_names(module_name: str) -> None:
    """Make a module readable by pdoc: its lazy ``__all__`` names resolved, its NamedTuples' own.

    Parameters
    ----------
    module_name : str
        Dotted name of an importable module. Names of its ``__all__`` that are missing
        from its ``__dict__`` are fetched with ``getattr`` (which runs the module's
        ``__getattr__``) and stored, so that pdoc, which reads ``__dict__``, finds them.
    """
    module = importlib.import_module(module_name)
    for name in getattr(module, "__all__", ()):
        if name not in vars(module):
            setattr(module, name, getattr(module, name))
    for value in list(vars(module).values()):
        # A NamedTuple's constructor is generated in a namespace of its own (its __module__
        # is "namedtuple_<Name>"), where pdoc cannot evaluate annotations that name the
        # defining module's aliases; it belongs to the class's module.
        if (
            isinstance(value, type)
            and issubclass(value, tuple)
            and hasattr(value, "_fields")
            and value.__module__ == module_name
        ):
            value.__new__.__module__ = module_name


def load_docs(names: list[str] | None = None) -> dict:
    """Read the modules into pdoc's documentation objects.

    Parameters
    ----------
    names : list of str, optional
        Dotted module names; default `public_modules()`.

    Returns
    -------
    dict of str to pdoc.doc.Module
        The modules by name, in the order given.
    """
    import pdoc.doc
    import pdoc.render

    pdoc.render.configure(docformat="numpy", show_source=True)
    names = public_modules() if names is None else names
    for name in names:
        resolve_lazy_names(name)
    return {name: pdoc.doc.Module.from_name(name) for name in names}


def build(out: Path) -> list[str]:
    """Write the HTML reference and return the warnings pdoc raised while building it.

    Parameters
    ----------
    out : pathlib.Path
        Output folder, created if missing: one HTML page per module (``attnspec/api.html``
        and so on), ``index.html`` and ``search.js``.

    Returns
    -------
    list of str
        One line per warning pdoc raised (import failures, unresolved names or
        annotations); empty when the reference is complete.
    """
    import pdoc.render

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        modules = load_docs()
        for module in modules.values():
            page = out / f"{module.fullname.replace('.', '/')}.html"
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(pdoc.render.html_module(module, modules), encoding="utf-8")
        (out / "index.html").write_text(pdoc.render.html_index(modules), encoding="utf-8")
        (out / "search.js").write_text(pdoc.render.search_index(modules), encoding="utf-8")
    return [f"{w.category.__name__}: {w.message}" for w in caught if _from_pdoc(w.filename)]


def _from_pdoc(filename: str) -> bool:
    # Libraries the modules import (torch, transformers) warn about their own deprecations;
    # only pdoc's warnings say something about the reference.
    return "/pdoc/" in filename.replace("\\", "/")


def main(argv: list[str] | None = None) -> int:
    """Command line: build the reference, print pdoc's warnings, exit 1 if there were any.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``): ``-o/--out FOLDER`` (default docs/api).

    Returns
    -------
    int
        The exit status: 0 when the reference built without a warning, 1 otherwise.
    """
    parser = argparse.ArgumentParser(description="Build attnspec's HTML API reference with pdoc.")
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: docs/api)")
    args = parser.parse_args(argv)
    problems = build(args.out)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"API reference: {args.out / 'index.html'}" + (f" ({len(problems)} warnings)" if problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
