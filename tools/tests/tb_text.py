"""Task Bench report text in the printed format, for the tests."""


def graph_block(n, steps, width, dtype, kernel, iters, imbalance=0.0, period=0):
    return f"""    Task Graph {n}:
      Time Steps: {steps}
      Max Width: {width}
      Dependence Type: {dtype}
      Radix: 3
      Period: {period}
      Fraction Connected: 0.250000
      Kernel:
        Type: {kernel}
        Iterations: {iters}
        Samples: 16
        Imbalance: {imbalance:f}
      Output Bytes: 16
      Scratch Bytes: 0
"""


def report(tasks, deps, flops, elapsed, nodes=None):
    dep_lines = ("  Unable to estimate local/nonlocal dependencies\n" if nodes is None else
                 f"  Local Dependencies 10 (estimated)\n  Nonlocal Dependencies 2 (estimated)\n"
                 f"  Number of Nodes (used for estimate) {nodes}\n")
    xfer = ("  Unable to estimate local/nonlocal transfer\n" if nodes is None else
            "  Local Bytes 160\n  Nonlocal Bytes 32\n  Local Bandwidth 1.000000e+03 B/s\n"
            "  Nonlocal Bandwidth 2.000000e+02 B/s\n")
    return (f"Total Tasks {tasks}\nTotal Dependencies {deps}\n{dep_lines}"
            f"Total FLOPs {flops}\nTotal Bytes 0\nElapsed Time {elapsed:e} seconds\n"
            f"FLOP/s {flops / elapsed:e}\nB/s 0.000000e+00\nTransfer (estimated):\n{xfer}")


def one_run(iters=1024, elapsed=0.5, steps=1000, width=2, kernel="compute_bound", nodes=None):
    tasks = steps * width
    flops = (128 * iters + 64) * tasks
    return ("Running Task Benchmark\n  Configuration:\n"
            + graph_block(1, steps, width, "stencil_1d", kernel, iters)
            + report(tasks, 3 * width * (steps - 1), flops, elapsed, nodes))
