#!/usr/bin/env python3
"""Print fields of the first sample of a benchrig results file.

  python3 bench/lib/sample.py FILE load.requests load.seconds [--index N]

Reads the JSON Lines results file every command writes (header, samples,
footer), and also the older single-document quick formats (read-only).
"""
import json
import sys


def samples(path):
    text = open(path).read()
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and "sample" in doc:
        return [doc["sample"]]
    if isinstance(doc, dict) and "samples" in doc:
        return doc["samples"]
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            rec = json.loads(line)
            if rec.get("type") == "sample":
                out.append(rec)
    return out


def main():
    args = sys.argv[1:]
    index = 0
    if "--index" in args:
        i = args.index("--index")
        index = int(args[i + 1])
        del args[i:i + 2]
    s = samples(args[0])[index]
    vals = []
    for field in args[1:]:
        v = s
        for part in field.split("."):
            v = v[part]
        vals.append(str(v))
    print(" ".join(vals))


main()
