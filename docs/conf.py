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
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
myst_enable_extensions = ["dollarmath"]
autosummary_generate = True
numpydoc_show_class_members = False
exclude_patterns = ["_build", "*.py"]
html_static_path = ["_static"]
html_theme = "pydata_sphinx_theme"
html_title = "fasttree"

# The gallery: every examples/plot_*.py runs at build time (small data, seconds each); an example
# that raises fails the build.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": "/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "image_scrapers": ("matplotlib",),
}
