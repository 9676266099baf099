"""Small classic tables bundled with fasttree, read by :mod:`fasttree.datasets` (CSV, a header
row, an empty cell for a missing value, the target in the last column).

- ``weather.csv``, ``weather_numeric.csv``: 14 rows, target ``play``; the weather data as
  printed in Quinlan's *C4.5: Programs for Machine Learning* (1993), all categorical, and with
  numeric temperature and humidity.
- ``heart_disease.csv`` (303 rows, 6 missing cells), ``titanic.csv`` (2201 rows),
  ``housing.csv`` (506 rows, regression target ``MEDV``), ``ionosphere.csv`` (351 rows): UCI
  machine learning repository datasets as distributed with the Orange data-mining toolkit,
  converted from Orange's tab format to CSV.
"""
