"""numba's ``njit`` for fasttree's kernels: cached on disk when there is a place for it.

numba caches compiled kernels in the package's ``__pycache__`` folders, or when those are
read-only in its user-wide cache (``$NUMBA_CACHE_DIR``, else ``~/.cache`` or the platform's
equivalent).  When no location is writable (a read-only container running as a user without a
home), ``numba.njit(cache=True)`` refuses to define the function; fasttree then compiles in
memory instead, every process again, and says so once with a :class:`RuntimeWarning`.
numba's own configuration is never changed.
"""

import warnings

import numba

_warned = []


def njit(*, cache=False, **options):
    """``numba.njit(cache=cache, **options)``, falling back to ``cache=False`` (with one warning
    per process) when numba has no writable cache location."""
    def decorate(func):
        if cache:
            try:
                return numba.njit(cache=True, **options)(func)
            except RuntimeError as exc:
                if "no locator available" not in str(exc):
                    raise
                _warn_once(exc)
        return numba.njit(**options)(func)

    return decorate


def _warn_once(exc):
    if _warned:
        return
    _warned.append(True)
    warnings.warn(
        "fasttree: numba has no writable cache location, so the kernels are compiled in memory "
        "in every new process (tens of seconds on first use); set NUMBA_CACHE_DIR to a writable "
        f"folder to cache them ({exc})", RuntimeWarning, stacklevel=4)
