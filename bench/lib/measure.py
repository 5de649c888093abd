#!/usr/bin/env python3
"""Run a command, print its stdout to a file, and report the CPU the command
(and its children) used: {"user": s, "sys": s, "wall": s} on stdout.

    measure.py OUTFILE -- CMD ARGS...
"""
import json
import resource
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: measure.py OUTFILE -- CMD ARGS...")
    out, cmd = sys.argv[1], sys.argv[3:]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(out, "wb") as f:
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    json.dump({"rc": rc, "user": after.ru_utime - before.ru_utime,
               "sys": after.ru_stime - before.ru_stime, "wall": wall}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
