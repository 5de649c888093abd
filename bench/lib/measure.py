#!/usr/bin/env python3
"""Run a command, print its stdout to a file, and report the CPU the command
(and its children) used: {"user": s, "sys": s, "wall": s} on stdout.

    measure.py OUTFILE -- CMD ARGS...

With SERVER_PID set (one PID, or several separated by spaces), it also
reports "server": the CPU seconds the server spent while the command ran:
user+system of each PID and of every descendant alive at the reading, plus
what reaped children left in their parents' cutime and cstime (PostgreSQL's
backends end with their connections), read from /proc before and after the
command. A request's cost is a property of the pair (a client that writes
one request at a time, or sleeps between answers, costs the server more), so
the peers scripts show this beside each client's own CPU."""
import json
import os
import resource
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stats():
    """pid -> (ppid, own ticks, reaped children's ticks) of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue  # ended while we looked
        fields = s[s.rindex(b")") + 2:].split()  # after "pid (comm) "
        # fields[0] is the state (stat's field 3): ppid is 4, utime 14 …
        out[int(name)] = (int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14]))
    return out


def tree_seconds(roots):
    """CPU seconds of roots and their live descendants, reaped children
    included; None when no root is alive."""
    st = stats()
    if not any(r in st for r in roots):
        return None
    kids = {}
    for pid, (ppid, _, _) in st.items():
        kids.setdefault(ppid, []).append(pid)
    total, seen, todo = 0, set(), [r for r in roots if r in st]
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        total += st[pid][1] + st[pid][2]
        todo.extend(kids.get(pid, []))
    return total / TICK


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: measure.py OUTFILE -- CMD ARGS...")
    out, cmd = sys.argv[1], sys.argv[3:]
    try:
        server = [int(p) for p in os.environ.get("SERVER_PID", "").split()]
    except ValueError:
        sys.exit(f"measure.py: SERVER_PID={os.environ['SERVER_PID']!r}: want process IDs separated by spaces")
    s0 = tree_seconds(server) if server else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(out, "wb") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = {"rc": rc, "user": after.ru_utime - before.ru_utime, "sys": after.ru_stime - before.ru_stime, "wall": wall}
    s1 = tree_seconds(server) if server else None
    if s0 is not None and s1 is not None:  # a server that ended has no figure
        r["server"] = round(s1 - s0, 2)  # whole clock ticks
    json.dump(r, sys.stdout)
    print()


if __name__ == "__main__":
    main()
