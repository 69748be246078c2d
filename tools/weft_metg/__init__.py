"""weft METG tool: sweeps Task Bench implementations over task granularity
and reports the minimum effective task granularity (METG) of each.

Modules:
  parse     reading Task Bench reports and logs
  analysis  aggregation over repetitions, peak FLOP/s, METG interpolation
  runner    the interleaved sweep (subprocesses with timeouts, progress bar)
  results   metg.csv / metg.json, text tables
  plotting  efficiency-vs-granularity figures (matplotlib, Agg)
  cli       the `metg` command line
"""

__version__ = "1.0"
