"""The gallery's examples as modules for the tests: their imports and functions, without the
demonstration code (the docs build runs each whole script)."""

import ast
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def example_functions(name):
    """Namespace of ``examples/<name>.py`` after running only its imports and function
    definitions."""
    path = EXAMPLES / f"{name}.py"
    module = ast.parse(path.read_text())
    module.body = [node for node in module.body
                   if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef))]
    namespace = {}
    exec(compile(module, str(path), "exec"), namespace)
    return namespace
