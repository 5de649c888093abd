#!/usr/bin/env python3
"""Read lines "tool requests seconds cpu_seconds" on stdin and print, per
tool, req/s and requests per client CPU-second as median [min–max], and
each tool's ratio to the reference tool (first argument) on the median."""
import statistics
import sys
from collections import OrderedDict

ref = sys.argv[1] if len(sys.argv) > 1 else None
rows = OrderedDict()
for line in sys.stdin:
    f = line.split()
    if len(f) != 4:
        continue
    tool, reqs, secs, cpu = f[0], float(f[1]), float(f[2]), float(f[3])
    rows.setdefault(tool, []).append((reqs / secs, reqs / cpu if cpu > 0 else 0, cpu * 1e6 / reqs if reqs else 0))


def fmt(vals, spec):
    return f"{statistics.median(vals):{spec}} [{min(vals):{spec}}–{max(vals):{spec}}]"


med = {t: statistics.median(v[1] for v in vs) for t, vs in rows.items()}
print(f"| {'tool':<26} | {'req/s':<30} | {'requests per client CPU-second':<30} | {'client µs/request':<22} | ratio to {ref or '-'} |")
print(f"|{'-'*28}|{'-'*32}|{'-'*32}|{'-'*24}|{'-'*12}|")
for tool, vs in rows.items():
    ratio = f"{med[tool] / med[ref]:.2f}×" if ref in med and med[ref] else "-"
    print(f"| {tool:<26} | {fmt([v[0] for v in vs], ',.0f'):<30} | {fmt([v[1] for v in vs], ',.0f'):<30} | {fmt([v[2] for v in vs], '.1f'):<22} | {ratio:<10} |")
