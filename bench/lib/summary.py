#!/usr/bin/env python3
"""Read lines "tool requests seconds cpu_seconds" on stdin and print, per
tool, req/s and requests per client CPU-second as median [min–max], and
each tool's ratio to the reference tool (first argument) on the median.
The last column pairs the runs: the scripts interleave the tools, so a
tool's i-th row and the reference's i-th row are the same round, and the
ratio of their requests per client CPU-second, round by round, is given
as median [min–max]: a drift of the machine's speed from one round to the
next (another tenant, a frequency change) cancels in it, where it widens
every tool's own range.
A fifth field, when a row has one, is the server's CPU seconds during that
run (bench/lib/measure.py with SERVER_PID): the table then ends with the
server's µs per request under each client, median [min–max]."""
import statistics
import sys
from collections import OrderedDict

ref = sys.argv[1] if len(sys.argv) > 1 else None
rows = OrderedDict()
for line in sys.stdin:
    f = line.split()
    if len(f) not in (4, 5):
        continue
    tool, reqs, secs, cpu = f[0], float(f[1]), float(f[2]), float(f[3])
    srv = float(f[4]) * 1e6 / reqs if len(f) == 5 and reqs else None
    rows.setdefault(tool, []).append((reqs / secs, reqs / cpu if cpu > 0 else 0, cpu * 1e6 / reqs if reqs else 0, srv))


def fmt(vals, spec):
    return f"{statistics.median(vals):{spec}} [{min(vals):{spec}}–{max(vals):{spec}}]"


med = {t: statistics.median(v[1] for v in vs) for t, vs in rows.items()}
server = any(v[3] is not None for vs in rows.values() for v in vs)
print(f"| {'tool':<26} | {'req/s':<30} | {'requests per client CPU-second':<30} | {'client µs/request':<22} | ratio to {ref or '-'} | paired ratio, per round |"
      + (" server µs/request |" if server else ""))
print(f"|{'-'*28}|{'-'*32}|{'-'*32}|{'-'*24}|{'-'*12}|{'-'*25}|" + ("-" * 20 + "|" if server else ""))
for tool, vs in rows.items():
    ratio = f"{med[tool] / med[ref]:.2f}×" if ref in med and med[ref] else "-"
    paired = "-"
    if ref in rows and len(rows[ref]) == len(vs) and all(r[1] for r in rows[ref]):
        paired = fmt([v[1] / r[1] for v, r in zip(vs, rows[ref])], ".2f")
    srv = [v[3] for v in vs if v[3] is not None]
    cell = (fmt(srv, ".1f") if srv else "-") if server else None
    print(f"| {tool:<26} | {fmt([v[0] for v in vs], ',.0f'):<30} | {fmt([v[1] for v in vs], ',.0f'):<30} | {fmt([v[2] for v in vs], '.1f'):<22} | {ratio:<10} | {paired:<23} |"
          + (f" {cell:<18} |" if server else ""))
