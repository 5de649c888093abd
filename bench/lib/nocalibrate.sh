# shellcheck shell=bash
# nocal BIN prints --no-calibrate when BIN knows it. benchrig measures its
# own floor (0.3 s against an in-process null peer per protocol) before
# every run; the peer scripts compare the client CPU of the load, so they
# leave that fixed cost out, as `benchrig calibrate` reports it apart. An
# older build (BENCHRIG_BEFORE, BENCHRIG) has no floor and no flag.
nocal() { "$1" http --help 2>&1 | grep -q -- '--no-calibrate' && echo --no-calibrate; true; }
