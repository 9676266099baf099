"""numba's disk cache tells the kernels a factory makes apart.

numba keys a cached function by its module, qualified name, first line, bytecode and the values
it closes over, but not by its globals.  A kernel factory (:func:`fasttree._jit.specialized`)
that handed two kinds different scans under one cache identity would let a later process load
one kind's code for the other: a multi-class fit scanned with the two-class scan, say, growing a
wrong tree without any error.  Nothing here compiles: it reads what the cache would key by.
"""

import itertools

import pytest

from fasttree._dtypes import (
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)
from fasttree._jit import cache_identity, with_globals
from fasttree.kernels import sparse, split_search

FLAGS = (True, False)
#: every kernel factory with every key it can be called with
FACTORIES = [
    (split_search._classification_search, list(itertools.product(*[FLAGS] * 5))),
    (split_search._regression_search, [
        (unit, criterion, *flags)
        for unit in FLAGS
        for criterion in (CRITERION_SQUARED_ERROR, CRITERION_POISSON, CRITERION_GRADIENT)
        for flags in itertools.product(*[FLAGS] * 3)]),
    (sparse._sparse_classification_search, list(itertools.product(*[FLAGS] * 2))),
]


def globals_read(kernel):
    """The globals a kernel's code reads, as the objects it would compile against."""
    func = kernel.py_func
    return {name: func.__globals__[name] for name in func.__code__.co_names
            if name in func.__globals__}


@pytest.mark.parametrize("factory, keys", FACTORIES, ids=lambda f: getattr(f, "__name__", ""))
def test_kernels_with_one_cache_identity_compile_the_same_code(factory, keys):
    first_of = {}
    for key in keys:
        kernel = factory(*key)
        identity = cache_identity(kernel)
        seen = first_of.setdefault(identity, (key, globals_read(kernel)))
        other_key, other_globals = seen
        mine = globals_read(kernel)
        differing = sorted(name for name in mine if mine[name] is not other_globals.get(name))
        assert not differing, (
            f"{factory.__name__}{key} and {factory.__name__}{other_key} share numba's cache "
            f"identity but read different {differing}")


def test_with_globals_names_the_copy_after_what_it_is_given():
    def kernel():
        return helper()  # noqa: F821 (given by with_globals)

    one = with_globals(kernel, helper=split_search._class_scan(True, True, False, False))
    same = with_globals(kernel, helper=split_search._class_scan(True, True, False, False))
    other = with_globals(kernel, helper=split_search._class_scan(True, False, False, False))
    assert one.__qualname__ == same.__qualname__
    assert one.__qualname__ != other.__qualname__
    assert one.__qualname__.startswith(kernel.__qualname__ + "_")
