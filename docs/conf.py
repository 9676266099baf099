"""Sphinx configuration for fasttree's documentation."""

import fasttree

project = "fasttree"
author = "the fasttree developers"
release = fasttree.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
autosummary_generate = True
numpydoc_show_class_members = False
exclude_patterns = ["_build"]
html_theme = "pydata_sphinx_theme"
html_title = "fasttree"
