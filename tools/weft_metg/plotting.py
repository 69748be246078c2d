"""Efficiency vs task granularity figures (one panel per summary)."""

from __future__ import annotations

import math
import sys
import textwrap


class PlotUnavailable(RuntimeError):
    pass


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailable("matplotlib is not installed in %s: run scripts/setup.sh and use "
                              ".venv/bin/python, or pass --no-plot" % sys.executable) from None
    matplotlib.use("Agg")   # no display; must precede pyplot
    import matplotlib.pyplot as plt
    return plt


MARKERS = ["o", "s", "^", "D", "v", "P", "*", "h", "<", ">"]


def _log_ticks(ax) -> None:
    """Plain numbers on the log axis (1, 10, 100; and 2, 5, 20, 50 when the
    range is under two decades), no overlapping minor labels."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    fmt = FuncFormatter(lambda v, _pos: "%g" % v)
    ax.xaxis.set_major_formatter(fmt)
    lo, hi = ax.get_xlim()
    if lo > 0 and hi / lo < 100:
        ax.xaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0)))
        ax.xaxis.set_minor_formatter(fmt)
    else:
        ax.xaxis.set_minor_formatter(NullFormatter())


def draw_panel(ax, summary: dict, label: str | None = None) -> None:
    thr = summary.get("threshold", 0.5)
    ymax = 1.05
    any_point = False
    for i, name in enumerate(summary["impls"]):
        r = summary["results"][name]
        pts = [p for p in r["points"]
               if p["granularity_us"] > 0 and math.isfinite(p["efficiency"])]
        if not pts:
            ax.plot([], [], marker=MARKERS[i % len(MARKERS)], label="%s (no data)" % name)
            continue
        any_point = True
        pts.sort(key=lambda p: p["granularity_us"])
        x = [p["granularity_us"] for p in pts]
        y = [p["efficiency"] for p in pts]
        xerr = [[max(0.0, p["granularity_us"] - p["granularity_min_us"]) for p in pts],
                [max(0.0, p["granularity_max_us"] - p["granularity_us"]) for p in pts]]
        yerr = [[max(0.0, p["efficiency"] - p["efficiency_min"]) for p in pts],
                [max(0.0, p["efficiency_max"] - p["efficiency"]) for p in pts]]
        ymax = max(ymax, max(p["efficiency_max"] for p in pts) * 1.05)
        m = r["metg"]
        st = m["status"]
        if st in ("interpolated", "exact"):
            txt = "METG %.3g µs" % m["value_us"]
        elif st == "below_smallest":
            txt = "METG ≤ %.3g µs" % m["value_us"]
        elif st == "not_reached":
            txt = "METG not reached"
        else:
            txt = "no data"
        rt = r.get("ratio_vs_baseline", {}).get("text")
        if rt and name != summary.get("baseline") and rt != "n/a":
            txt += ", %s× %s" % (rt, summary.get("baseline"))
        line = ax.errorbar(x, y, xerr=xerr, yerr=yerr, marker=MARKERS[i % len(MARKERS)],
                           markersize=5, linewidth=1.5, elinewidth=0.8, capsize=2,
                           label="%s: %s" % (name, txt))
        color = line[0].get_color()
        if st in ("interpolated", "exact", "below_smallest"):
            ax.plot([m["value_us"]], [thr], marker="X" if st != "below_smallest" else "<",
                    markersize=11, color=color, markeredgecolor="black", zorder=5)
            ax.axvline(m["value_us"], color=color, linestyle=":", linewidth=1)
    ax.axhline(thr, color="gray", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    if not any_point:
        ax.set_xlim(1, 1000)
        msg = "no data" + ("\n" + textwrap.fill(summary["error"], 50) if summary.get("error") else "")
        ax.text(0.5, 0.6, msg, transform=ax.transAxes, ha="center", va="center", fontsize=8)
    _log_ticks(ax)
    ax.set_ylim(0, ymax)
    ax.set_xlabel("task granularity (µs) = elapsed × cores / tasks")
    ax.set_ylabel("efficiency (FLOP/s / peak)")
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", alpha=0.1)
    title = []
    if label or summary.get("label"):
        title.append(label or summary.get("label"))
    if summary.get("graph"):
        title.append(summary["graph"])
    peak = summary.get("peak", {})
    how = {"sweep-best": "best run", "peak-cmd": "--peak-cmd", "given": "given"}
    title.append("%d cores, peak %.3g FLOP/s (%s)" % (summary.get("cores", 0),
                                                    peak.get("flops_per_s", 0.0),
                                                    how.get(peak.get("source"), "?")))
    ax.set_title("\n".join(title), fontsize=9)
    if any_point or summary["impls"]:
        # below the axes: curves can sit anywhere in the panel
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2,
                  frameon=False)


def plot(panels: list, out_path: str, title: str | None = None, dpi: int = 130) -> None:
    """panels: [(label or None, summary dict)]. Writes out_path (format from
    its extension: png, pdf, svg)."""
    plt = _pyplot()
    n = max(1, len(panels))
    ncols = min(n, 3)
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.4 * ncols, 4.8 * nrows), squeeze=False)
    for k, (label, summary) in enumerate(panels):
        draw_panel(axes[k // ncols][k % ncols], summary, label)
    for k in range(len(panels), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_path, dpi=dpi)
    plt.close(fig)
