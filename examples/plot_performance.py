"""
The performance chart
=====================

How long one exact tree takes to fit (B1-B5) and to predict (B6) with fasttree, scikit-learn,
XGBoost (``tree_method="exact"``, one tree) and LightGBM (histograms, one tree), on a 2-core
machine.  The benchmarks take minutes and need XGBoost and LightGBM, so they do not run here:
this example reads the figures that ``asv_bench/compare.py`` measured, from the results table of
:doc:`/performance`, and draws them with that script's own ``chart`` function (the one that drew
``docs/_static/performance.png``).
"""

import sys
import tempfile
from pathlib import Path

# %%
# The measured figures
# --------------------
#
# The gallery runs each example in its own folder, ``examples/``, next to ``docs/`` and
# ``asv_bench/``.  Each row of the results table (nine columns; the page's other tables have
# fewer) is ``| case | what | fasttree | scikit-learn | XGBoost exact | LightGBM | result |
# target | met |`` with times such as ``1.188 s`` (an empty cell: not run).

root = Path.cwd().parent
table = (root / "docs" / "performance.md").read_text()
libraries = ["fasttree", "sklearn", "xgboost", "lightgbm"]
rows = []
for line in table.splitlines():
    cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
    if len(cells) == 9 and cells[0] in ("B1", "B2", "B3", "B4", "B5", "B6"):
        times = {library: float(cell.removesuffix(" s"))
                 for library, cell in zip(libraries, cells[2:6]) if cell}
        rows.append((cells[0], cells[1], times))
if [row[0] for row in rows] != ["B1", "B2", "B3", "B4", "B5", "B6"]:
    raise ValueError("docs/performance.md: the results table of B1-B6 was not found")

for case, what, times in rows:
    ratios = ", ".join(f"{library} {seconds / times['fasttree']:.1f}x"
                       for library, seconds in times.items() if library != "fasttree")
    print(f"{case}: fasttree {times['fasttree']:.3f} s ({ratios} fasttree's time) -- {what}")

# %%
# The chart
# ---------
#
# ``chart(rows, path)`` draws the figure and saves it; here the file is thrown away and the
# gallery shows the figure itself.

sys.path.insert(0, str(root / "asv_bench"))
from compare import chart  # noqa: E402

with tempfile.TemporaryDirectory() as folder:
    chart(rows, Path(folder) / "performance.png")
