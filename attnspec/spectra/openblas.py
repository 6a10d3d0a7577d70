"""LAPACK and BLAS routines of the OpenBLAS that SciPy ships, called through ctypes on a thread pool.

Why: the engine's CPU paths factorise many independent matrices; ctypes releases the GIL, so one
matrix per thread with one BLAS thread each parallelises perfectly, where one factorisation of
n = 512 parallelises poorly inside BLAS. Used by :mod:`attnspec.spectra.engine` and
:mod:`attnspec.spectra.gram32`.
"""

from __future__ import annotations

import ctypes
import glob
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

_INT, _CHAR, _PTR = ctypes.c_int, ctypes.c_char, ctypes.c_void_p
#: LAPACKE signatures used here (row-major layout, jobz = "N": values only).
_SIGNATURES: dict[str, list[Any]] = {
    # lapack_int LAPACKE_?gesdd(int layout, char jobz, lapack_int m, lapack_int n, T* a, lapack_int lda,
    #                           T* s, T* u, lapack_int ldu, T* vt, lapack_int ldvt)
    "sgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    "dgesdd": [_INT, _CHAR, _INT, _INT, _PTR, _INT, _PTR, _PTR, _INT, _PTR, _INT],
    # lapack_int LAPACKE_dsyevd_2stage(int layout, char jobz, char uplo, lapack_int n, double* a,
    #                                  lapack_int lda, double* w)
    "dsyevd_2stage": [_INT, _CHAR, _CHAR, _INT, _PTR, _INT, _PTR],
    # lapack_int LAPACKE_dsyevd(int layout, char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w)
    "dsyevd": [_INT, _CHAR, _CHAR, _INT, _PTR, _INT, _PTR],
    # lapack_int LAPACKE_ssyevd_2stage(int layout, char jobz, char uplo, lapack_int n, float* a, lapack_int lda, float* w)
    "ssyevd_2stage": [_INT, _CHAR, _CHAR, _INT, _PTR, _INT, _PTR],
    # void cblas_ssyrk(order, uplo, trans, blasint n, blasint k, float alpha, float* a, blasint lda, float beta,
    #                  float* c, blasint ldc): C = alpha A Aᵀ + beta C on the ``uplo`` triangle
    "cblas_ssyrk": [_INT, _INT, _INT, _INT, _INT, ctypes.c_float, _PTR, _INT, ctypes.c_float, _PTR, _INT],
}
_ROW_MAJOR = 101


@cache
def _lapack(routine: str) -> Any | None:
    """``LAPACKE_<routine>`` (or, for a ``cblas_*`` name, that BLAS routine) from the OpenBLAS that
    SciPy ships (32-bit ints), or None when absent.

    SciPy's wheels bundle ``libscipy_openblas`` with its symbols prefixed ``scipy_``;
    calling it through ctypes releases the GIL, so independent problems run in parallel
    on a thread pool.
    """
    try:
        import scipy
    except ImportError:  # pragma: no cover - scipy is a dependency
        return None
    base = Path(scipy.__file__).parent
    patterns = [
        str(base.parent / "scipy.libs" / "libscipy_openblas*.so*"),
        str(base / ".dylibs" / "libscipy_openblas*.dylib"),
    ]
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            blas = routine.startswith("cblas_")
            names = (f"scipy_{routine}", routine) if blas else (f"scipy_LAPACKE_{routine}", f"LAPACKE_{routine}")
            for name in names:
                fn = getattr(lib, name, None)
                if fn is not None:
                    fn.restype = None if blas else ctypes.c_int
                    fn.argtypes = _SIGNATURES[routine]
                    return fn
    return None


def _run_pool(call: Any, m: int, workers: int, what: str) -> None:
    """Run ``call(i)`` for i < m on ``workers`` threads, one BLAS thread each.

    At n = 512 one factorisation parallelises poorly inside BLAS; independent ones
    parallelise perfectly across threads.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if workers > 1 and m > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                infos = list(pool.map(call, range(m)))
        else:
            infos = [call(i) for i in range(m)]
    bad = [i for i, info in enumerate(infos) if info != 0]
    if bad:
        raise np.linalg.LinAlgError(f"{what} failed on matrices {bad[:5]} (info {infos[bad[0]]})")
