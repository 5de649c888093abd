#!/usr/bin/env python3
"""Read an all-peers.sh output file and print one table: every case
(the line that titles each tool table, under its script's heading) with
the peer's and benchrig's requests per client CPU-second and their ratio,
pinned and unpinned side by side. A ratio is the ratio of the medians,
followed, when the file has it, by the paired ratio: the median [min–max]
of the round-by-round ratios (bench/lib/summary.py)."""
import re
import sys
from collections import OrderedDict

cases = OrderedDict()  # (script, title) -> {pinning: (peer, peer_fig, br_fig, ratio)}
script = pinning = title = None
peer = None
rows = {}
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()


def flush():
    # benchrig's row: "benchrig", or "benchrig-https" and the like; never
    # an older build, a variant with work switched off or one busy-polling
    ours = [t for t in rows if t.startswith("benchrig") and not any(w in t for w in ("before", "novalidate", "busypoll"))]
    if title and ours and peer in rows:
        fig, ratio, paired = rows[ours[0]]
        if paired:
            ratio += f" ({paired})"
        cases.setdefault((script, title), {})[pinning] = (peer, rows[peer][0], fig, ratio)


for i, line in enumerate(lines):
    m = re.match(r"## bench/(\S+)-peers\.sh(?:, (pinned|unpinned))?", line)
    if m:
        flush()
        script, pinning, title = m.group(1), m.group(2) or "pinned", None
        continue
    m = re.match(r"\| tool .*\| ratio to (\S+)", line)
    if m:
        flush()
        peer, rows = m.group(1), {}
        # the table's title is the last non-empty line before it that is not a table row
        j = i - 1
        while j >= 0 and (not lines[j].strip() or lines[j].startswith("|") or lines[j].startswith("reply bytes")):
            j -= 1
        title = lines[j].strip().lstrip("#").strip() if j >= 0 else "?"
        continue
    m = re.match(r"\| (\S+)\s+\| [^|]+\| ([\d,]+) \[[^|]*\| [^|]+\| (\S+)\s*\|(?: ([\d.]+ \[[\d.–]+\]))?", line)
    if m and title:
        rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
flush()

print()
print("## Every case: requests per client CPU-second (median of the runs), benchrig against its peer")
print()
print("| script | case | peer | pinned: peer | pinned: benchrig | pinned ratio | unpinned: peer | unpinned: benchrig | unpinned ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for (s, t), by in cases.items():
    p, u = by.get("pinned"), by.get("unpinned")
    name = (p or u)[0]
    cell = lambda x: (x[1], x[2], x[3]) if x else ("–", "–", "–")
    print(f"| {s} | {t[:90]} | {name} | " + " | ".join(cell(p)) + " | " + " | ".join(cell(u)) + " |")
