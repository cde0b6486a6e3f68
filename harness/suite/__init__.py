"""Suites: many experiment files in one run, with axes added to every experiment's matrix.

- model.py     the suite file (typed, errors naming file and key), its globs and axes
- plan.py      each experiment's cells with the suite's axes; impossible cells left out
- estimate.py  a cell's planned wall time
- runner.py    run every experiment into one suite folder; one summary, JUnit, exit code
- history.py   results/history.parquet: every suite run's cell figures, appended
- compare.py   two run or suite folders side by side: verdict flips, figure changes

This package's __init__ loads nothing: `compare` must not pull in the run side.
"""
