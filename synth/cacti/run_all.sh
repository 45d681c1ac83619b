#!/bin/sh
# Rebuild CACTI 7 if needed (single-threaded, -O2) and regenerate cfg/, out/, results.json, results.md.
# CACTI source: a checkout (or git archive) of github:HewlettPackard/cacti @ 1ffd8df in src/
# (not in this repository; the machines here have no GitHub access, so results.json is committed).
set -e
cd "$(dirname "$0")"
if [ ! -x src/cacti ]; then
  mkdir -p src/obj_opt
  make -C src -j1 -f cacti.mk TAG=opt OPT="-O2 -msse2 -mfpmath=sse -DNTHREADS=1"
fi
python3 run_cacti.py
