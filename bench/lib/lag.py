#!/usr/bin/env python3
"""Print one line of a constant-rate run's figures from benchrig's --json
output (FILE): the schedule lag (how late each request left after its due
time), the latency from the due time, from the send, coverage, late and
dropped. Usage: lag.py FILE TOOL."""
import json
import sys

lines = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
load = [x for x in lines if x.get("type") == "sample"][0]["load"]


def p(lat, q):
    return next(x["us"] for x in lat["percentiles"] if x["q"] == q)


r = load["rate"]
print(f"{sys.argv[2]} schedule lag p50 {p(r['lag'], 50)} µs, p99 {p(r['lag'], 99)} µs; "
      f"latency from the due time p50 {p(load['latency'], 50)} µs, p99 {p(load['latency'], 99)} µs; "
      f"from the send p50 {p(load['service'], 50)} µs; coverage {r['coverage']:.1f} %, {r['late']} late, {r['dropped']} dropped")
