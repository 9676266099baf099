"""numba's disk cache tells the kernels a factory makes apart.

numba keys a cached function by its module, qualified name, first line, bytecode and the values
it closes over, but not by its globals.  A kernel factory (:func:`fasttree._jit.specialized`)
that handed two kinds different scans under one cache identity would let a later process load
one kind's code for the other: a multi-class fit scanned with the two-class scan, say, growing a
wrong tree without any error.  Processes compiling at once (dask workers, ``fasttree compile``)
must not mix up the overloads they write either.  Nothing here compiles: it reads what the cache
would key by, and writes cache files of made-up entries.
"""

import itertools
import os
import subprocess
import sys

import pytest

from fasttree._dtypes import (
    CRITERION_ABSOLUTE_ERROR,
    CRITERION_ENTROPY,
    CRITERION_GINI,
    CRITERION_GRADIENT,
    CRITERION_POISSON,
    CRITERION_SQUARED_ERROR,
)
from fasttree._jit import _KeyedCacheFile, cache_identity, with_globals
from fasttree.kernels import absolute_error, histogram, multi_output, sparse, split_search

FLAGS = (True, False)
MULTI_OUTPUT_CRITERIA = (CRITERION_GINI, CRITERION_ENTROPY, CRITERION_SQUARED_ERROR,
                         CRITERION_POISSON, CRITERION_ABSOLUTE_ERROR)
#: every kernel factory with every key it can be called with
FACTORIES = [
    (split_search._make_item_search,
     [("classes", *flags) for flags in itertools.product(*[FLAGS] * 6)] + [
         ("sums", unit, criterion, *flags)
         for unit in FLAGS
         for criterion in (CRITERION_SQUARED_ERROR, CRITERION_POISSON, CRITERION_GRADIENT)
         for flags in itertools.product(*[FLAGS] * 3)]),
    (sparse._make_sparse_search,
     [("classes", *flags) for flags in itertools.product(*[FLAGS] * 2)]
     + [("sums",), ("several",), ("absolute_error",)]),
    (multi_output._make_pair_hook, [(criterion,) for criterion in MULTI_OUTPUT_CRITERIA]),
    (multi_output._make_search, [(criterion,) for criterion in MULTI_OUTPUT_CRITERIA]),
    (absolute_error._make_search, [()]),
    (histogram._make_hist_search, list(itertools.product(FLAGS, FLAGS))),
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
        # a dispatcher pickles with a random id: closed over, it would change numba's cache key
        # in every process, and the kernel would never load from the cache (with_globals)
        cells = [cell.cell_contents for cell in kernel.py_func.__closure__ or ()]
        assert not any(hasattr(value, "py_func") for value in cells), (factory.__name__, key)
        identity = cache_identity(kernel)
        seen = first_of.setdefault(identity, (key, globals_read(kernel)))
        other_key, other_globals = seen
        mine = globals_read(kernel)
        # a global made per key (a kind's hooks) is the same code when its own cache identity
        # is: with_globals names a copy after its globals, so this check recurses
        differing = sorted(name for name in mine if mine[name] is not other_globals.get(name)
                           and cache_identity(mine[name]) != cache_identity(
                               other_globals.get(name)))
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


class _Interleaved:
    """Two processes saving different overloads of one function at once, in the order that
    defeats numba's numbering: A writes its index entry, B (whose index was read before A's
    write) writes its entry and its data, then A writes its data."""

    def __init__(self, cache_file_class, folder):
        self.make = lambda: cache_file_class(cache_path=str(folder), filename_base="f",
                                             source_stamp=(1.0, 10))

    def run(self, key_a, key_b):
        a, b = self.make(), self.make()
        pending = []
        a._save_data = lambda name, data: pending.append((name, data))
        stale = b._load_index()  # B's view, taken before A's write
        b._load_index = lambda: dict(stale)
        a.save(key_a, "code of A")
        b.save(key_b, "code of B")
        for name, data in pending:
            type(a)._save_data(a, name, data)
        return self.make()  # a third process reading what they left


KEY_A, KEY_B = (("int64",), "machine", ("code", "cells A")), (("int64",), "machine",
                                                              ("code", "cells B"))


def test_numba_cache_files_mix_up_concurrent_overloads(tmp_path):
    """The failure the keyed files prevent, shown on numba's own class."""
    from numba.core.caching import IndexDataCacheFile

    reader = _Interleaved(IndexDataCacheFile, tmp_path).run(KEY_A, KEY_B)
    assert reader.load(KEY_B) == "code of A"


def test_keyed_cache_files_never_load_another_overloads_code(tmp_path):
    reader = _Interleaved(_KeyedCacheFile, tmp_path).run(KEY_A, KEY_B)
    assert reader.load(KEY_B) == "code of B"
    assert reader.load(KEY_A) is None  # B's index write dropped A's entry: compiled again
    reader.save(KEY_A, "code of A")
    assert reader.load(KEY_A) == "code of A" and reader.load(KEY_B) == "code of B"


def test_keyed_cache_files_refuse_a_file_holding_another_key(tmp_path):
    keyed = _Interleaved(_KeyedCacheFile, tmp_path).make()
    keyed.save(KEY_A, "code of A")
    keyed._save_data(keyed._keyed_name(KEY_A), (repr(KEY_B), "code of B"))
    assert keyed.load(KEY_A) is None


def test_kernels_are_cached_in_keyed_files():
    kernel = split_search._class_scan(True, True, True, False)
    assert isinstance(kernel._cache._cache_file, _KeyedCacheFile)


def test_a_factorys_kernels_are_named_after_what_they_close_over():
    names = {flags: split_search._class_scan(*flags).py_func.__qualname__
             for flags in itertools.product(*[FLAGS] * 5)}
    assert len(set(names.values())) == len(names)
    again = split_search._make_class_scan(True, False, True, False, True)
    assert again.py_func.__qualname__ == names[True, False, True, False, True]


#: a callee made per variant by a factory, too large for LLVM to inline, called by two kernels
VARIANTS_MODULE = '''
import sys
import numpy as np
from fasttree._jit import njit

def make(k):
    @njit(cache=True)
    def callee(x, out):
        for i in range(x.shape[0]):
            v = x[i]
            for j in range(8):
                if v > j:
                    v = np.sin(v) * 3.0 + k + np.cos(v * j)
                elif v < -j:
                    v = np.exp(-abs(v)) - k + np.tanh(v + j)
                else:
                    v = np.sqrt(abs(v) + k) + np.arctan(v * j)
            out[i] = v + k
        return out[0]
    return callee

callee_1, callee_2 = make(1), make(2)

@njit(cache=True)
def kernel_1(x):
    out = np.empty_like(x)
    return callee_1(x, out) + callee_1(x[::-1].copy(), out)

@njit(cache=True)
def kernel_2(x):
    out = np.empty_like(x)
    return callee_2(x, out) + callee_2(x[::-1].copy(), out)

x = np.linspace(-3, 3, 7)
for name in sys.argv[1:]:
    kernel = globals()[name]
    print(name, kernel(x) == kernel.py_func(x), sum(kernel.stats.cache_hits.values()))
'''


def test_variants_compiled_in_different_processes_keep_their_own_code(tmp_path):
    """Each process compiles one variant (the same count of functions before it, so numba's
    numbering alone would give both callees one name); a third loads both kernels from the
    cache and must run each one's own callee."""
    (tmp_path / "variants.py").write_text(VARIANTS_MODULE)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run(*names):
        done = subprocess.run([sys.executable, str(tmp_path / "variants.py"), *names],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert run("kernel_1") == ["kernel_1", "True", "0"]
    assert run("kernel_2") == ["kernel_2", "True", "0"]
    assert run("kernel_1", "kernel_2") == ["kernel_1", "True", "1", "kernel_2", "True", "1"]
