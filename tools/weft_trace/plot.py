"""`trace plot`: one row per worker (grouped by rank), coloured by what ran,
gaps where the worker was idle."""

from __future__ import annotations

from collections import defaultdict

from .model import Trace, by_rank

COLOURS = {
    "task": "#4c72b0",
    "remote call": "#dd8452",
    "forked task": "#55a868",
    "stolen task": "#8172b3",
    "target kernel": "#c44e52",
    "collective": "#937860",
    "communication": "#da8bc3",
}


class PlotUnavailable(Exception):
    pass


def plot(trace: Trace, out: str, title: str = "") -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError as e:
        raise PlotUnavailable("plots need matplotlib (%s)" % e)
    groups = by_rank(trace.rows)
    rows = [r for rank in groups for r in groups[rank]]
    height = min(0.9 + 0.22 * len(rows), 20)
    fig, ax = plt.subplots(figsize=(12, max(2.2, height)))
    t0 = trace.start
    used = set()
    labels = []
    for y, row in enumerate(rows):
        spans = defaultdict(list)
        for i in row.tasks:
            spans[i.kind].append(((i.start - t0) / 1000, (i.end - i.start) / 1000))
        for kind, bars in spans.items():
            ax.broken_barh(bars, (y - 0.4, 0.8), facecolors=COLOURS.get(kind, "#4c72b0"), linewidth=0)
            used.add(kind)
        # Communication outside tasks: a thin bar in the middle of the row.
        comm = [((i.start - t0) / 1000, (i.end - i.start) / 1000) for i in row.comm]
        if comm:
            ax.broken_barh(comm, (y - 0.12, 0.24), facecolors=COLOURS["communication"], linewidth=0)
            used.add("communication")
        labels.append("r%d %s" % (row.rank, row.name.replace("worker ", "w").replace(" thread", "")))
    # A line between ranks.
    y = -0.5
    for rank in groups:
        y += len(groups[rank])
        ax.axhline(y, color="#888888", linewidth=0.5)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=max(4, min(9, 400 // max(len(rows), 1))))
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(0, max(trace.span / 1000, 1e-3))
    ax.set_xlabel("time (ms)")
    ax.set_title(title or "weft trace: %d ranks, %d rows (gaps: idle)" % (len(groups), len(rows)), loc="left",
                 fontsize=10)
    ax.legend(handles=[Patch(color=COLOURS.get(k, "#4c72b0"), label=k) for k in COLOURS if k in used],
              loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=4, fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
