"""Deployment conditions (issue 11): fasttree starts and works where real deployments run it.

Each test runs a fresh interpreter, so that the condition holds from ``import fasttree`` on and a
crash is a failed test rather than a lost test run.
"""

import subprocess
import sys
import textwrap


def run_python(code, timeout=600):
    """Run ``code`` in a fresh interpreter; returns the completed process."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)


def test_import_and_kernels_work_without_a_writable_cache():
    """No cache location at all (numba's locators all refuse, as in a read-only container
    without a home): import works, one RuntimeWarning says the kernels compile in memory."""
    proc = run_python("""
        import warnings
        import numba.core.caching as caching
        caching.CacheImpl._locator_classes = []   # what numba finds in a read-only deployment
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import fasttree
            from fasttree.kernels import xlog2x_table
        messages = [str(w.message) for w in caught if w.category is RuntimeWarning]
        assert len(messages) == 1 and "no writable cache location" in messages[0], messages
        assert xlog2x_table(4)[4] == 8.0
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
