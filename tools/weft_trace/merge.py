"""`trace merge`: the file of a job whose rank 0 did not merge the parts
(a failed job: each rank wrote PATH.rank-R.part from its failure path).
The same layout as the runtime's merge (src/trace/writer.cpp)."""

from __future__ import annotations

import glob
import json
import os
import re


def parts_of(path: str) -> list:
    found = glob.glob(glob.escape(path) + ".rank-*.part")
    return sorted(found, key=lambda p: int(re.search(r"\.rank-(\d+)\.part$", p).group(1)))


def merge(path: str, parts: list, remove: bool = False) -> int:
    meta, events = [], []
    for p in parts:
        with open(p) as f:
            first = f.readline().strip()
            if first:
                meta.extend(json.loads("[" + first + "]"))
            events.extend(line.strip() for line in f if line.strip())
    with open(path, "w") as out:
        out.write('{"traceEvents":[\n' + ",\n".join(events) + "\n],\n")
        out.write('"displayTimeUnit":"ns",\n"otherData":' + json.dumps({
            "producer": "weft --weft:trace (merged by tools/trace merge)",
            "clock": "CLOCK_MONOTONIC; each rank's timestamps are shifted by its clock_offset_ns",
            "ranks": meta}) + "}\n")
    if remove:
        for p in parts:
            os.remove(p)
    return len(events)
