#!/usr/bin/env python3
"""Compiles every .tile under samples/ and tests/lit/ for gfx942 twice, to an HSACO at -O2 and to
AMDGCN assembly at -O0, and checks that each compile either succeeds or exits with status 1 and a
located `FILE:LINE:COL: error:`: never a signal, another status, a sanitizer report, an unlocated
failure or a hang. Prints the failures and one summary line; exits 1 when any failed.
Usage: every_tile.py TILEC ROOT [TIMEOUT_S]"""
import concurrent.futures
import os
import re
import subprocess
import sys

tilec, root = sys.argv[1], sys.argv[2]
timeout = float(sys.argv[3]) if len(sys.argv) > 3 else 120
files = []
for top in ("samples", os.path.join("tests", "lit")):
    for dirpath, _, names in os.walk(os.path.join(root, top)):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".tile")]
files.sort()
modes = [["--emit", "hsaco", "-O2"], ["--emit", "amdgcn", "-O0"]]


def check(path, mode):
    argv = [tilec, path, "--target", "gfx942", "-o", os.devnull] + mode
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timed out"
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return "killed by signal %d" % -p.returncode
    if re.search(r"Sanitizer|runtime error:", err):
        return "sanitizer report: " + err[-400:]
    if p.returncode == 0:
        return None
    if p.returncode != 1:
        return "exit status %d: %s" % (p.returncode, err[-400:])
    if not re.search(r"(^|/)%s:\d+:\d+: error: " % re.escape(os.path.basename(path)), err, re.M):
        return "no located error: " + err[-400:]
    return None


ok = failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
    futs = {ex.submit(check, f, m): (f, m) for f in files for m in modes}
    for fut in concurrent.futures.as_completed(futs):
        why = fut.result()
        f, m = futs[fut]
        if why:
            failed += 1
            print("FAIL %s %s: %s" % (os.path.relpath(f, root), " ".join(m), why))
        else:
            ok += 1
print("every_tile: %d files, %d compiles checked, %d failed" % (len(files), ok + failed, failed))
sys.exit(1 if failed or not files else 0)
