"""Run a test module of the installed scikit-learn against fasttree's estimators.

The module's source is read, fasttree's tree estimators and export functions are imported in
place of scikit-learn's just before an anchor line (after the module's own imports, before
anything uses the names), and the source is executed; its ``test_*`` functions are then
collected by pytest unchanged from the calling test module.  No test body is edited.
"""

import inspect
from pathlib import Path

REBIND = """
from fasttree import (  # fasttree in place of scikit-learn
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
    export_graphviz,
    export_text,
    plot_tree,
)
"""


def load_suite(package, filename, anchor, module_name, rebind=REBIND):
    """Execute ``filename`` of the imported test ``package`` with fasttree's names rebound
    (the imports ``rebind``) before the first line equal to ``anchor``, as module
    ``module_name`` (the collecting test module's, so that pytest reports the tests there);
    returns its namespace."""
    source_path = Path(package.__file__).parent / filename
    source = source_path.read_text()
    if anchor not in source:
        raise RuntimeError(f"{source_path} changed: {anchor!r} not found; update the rebinding.")
    source = source.replace(anchor, rebind + anchor, 1)
    namespace = {"__name__": module_name, "__file__": str(source_path)}
    exec(compile(source, str(source_path), "exec"), namespace)
    return namespace


def suite_tests(namespace, excluded=()):
    """The suite's test functions by name, minus the excluded ones."""
    return {name: obj for name, obj in namespace.items()
            if name.startswith("test_") and inspect.isfunction(obj) and name not in excluded}
