#!/usr/bin/env python3
"""Scaling tests: large legal inputs must cost time and memory linear (or n log n) in their size.

Each tests/scaling/cases_<class>.py defines
    CASES = [(name, make_input, args), ...]   make_input(n) -> (suffix, bytes); args use %s for the file
    BASE_N = {name: n, ...}                   the base size (default 1000)
Every case is run at n and 2n; the test fails when doubling the input more than triples the CPU
time (user + system) or the memory (peak RSS above that of compiling an empty program). Each
size runs three times, the two sizes in alternation, and the fastest counts; a case over the ratio
is measured five times more before it fails. Tiny costs are not compared: under 50 ms of CPU
or 8 MB of memory the difference is noise. No absolute time is ever a failure.

Usage: run.py [--tilec PATH] [--only SUBSTRING] [--ratio R] [-v]
"""
import argparse
import glob
import importlib.util
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MIN_TIME = 0.05            # seconds of CPU below which time is not compared
MIN_MEM = 8 * 1024         # KiB of RSS growth below which memory is not compared


def measure(tilec, args, path, runs=3):
    """Fastest CPU seconds and smallest peak RSS (KiB) of `tilec args` over `runs` runs; status."""
    argv = [tilec] + [a.replace("%s", path) for a in shlex.split(args)]
    best_t, best_m, status, err = None, None, 0, b""
    for _ in range(runs):
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, st, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(st)
        status = p.returncode
        t = ru.ru_utime + ru.ru_stime
        best_t = t if best_t is None else min(best_t, t)
        best_m = ru.ru_maxrss if best_m is None else min(best_m, ru.ru_maxrss)
    return best_t, best_m, status, err.decode("utf-8", "replace")


def load_cases(only):
    for path in sorted(glob.glob(os.path.join(HERE, "cases_*.py"))):
        cls = os.path.basename(path)[len("cases_"):-3]
        spec = importlib.util.spec_from_file_location("scaling_" + cls, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        base = getattr(mod, "BASE_N", {})
        for name, make, args in mod.CASES:
            full = "%s/%s" % (cls, name)
            if only and only not in full:
                continue
            yield full, make, args, base.get(name, 1000)


def main():
    ap = argparse.ArgumentParser(description="Scaling tests: doubling an input must not triple its cost.")
    ap.add_argument("--tilec", default=os.environ.get("TILEC", os.path.join(ROOT, "build", "tilec")))
    ap.add_argument("--only", default=None)
    ap.add_argument("--ratio", type=float, default=3.0)
    ap.add_argument("--work", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    tilec = os.path.abspath(a.tilec)
    work = os.path.abspath(a.work or os.path.join(os.path.dirname(tilec), "scaling"))
    os.makedirs(work, exist_ok=True)

    empty = os.path.join(work, "empty.tile")
    with open(empty, "w") as f:
        f.write("kernel empty() block(32) {\n}\n")
    _, base_mem, st, err = measure(tilec, "%s --emit ptx -o /dev/null", empty)
    if st != 0:
        print("scaling: the empty program does not compile:\n" + err, file=sys.stderr)
        return 1

    failed = total = 0
    for name, make, args, n in load_cases(a.only):
        total += 1
        paths = []
        for size in (n, 2 * n):
            suffix, content = make(size)
            path = os.path.join(work, name.replace("/", "_") + "_%d%s" % (size, suffix))
            with open(path, "wb") as f:
                f.write(content)
            paths.append(path)
        # n and 2n are measured in alternation, so that a neighbour's load in the meantime slows
        # both alike; a case over the ratio is measured once more, longer, before it fails
        best = [None, None]
        bad, line, err_line = True, "", None
        for rounds in (3, 5):
            for _ in range(rounds):
                for k in (0, 1):
                    t, m, st, err = measure(tilec, args, paths[k], runs=1)
                    if st != 0:
                        err_line = "FAIL %s (n=%d): tilec exited %d\n%s" % (name, n * (k + 1), st, err.strip()[-800:])
                        break
                    m = max(m - base_mem, 0)
                    best[k] = (t, m) if best[k] is None else (min(best[k][0], t), min(best[k][1], m))
                if err_line:
                    break
            if err_line:
                break
            (t1, m1), (t2, m2) = best
            tr = max(t2, MIN_TIME) / max(t1, MIN_TIME)
            mr = max(m2, MIN_MEM) / max(m1, MIN_MEM)
            bad = tr > a.ratio or mr > a.ratio
            line = "%s %s: n=%d %.3f s %.1f MB -> 2n %.3f s %.1f MB (time x%.2f, memory x%.2f)" % (
                "FAIL" if bad else "ok  ", name, n, t1, m1 / 1024, t2, m2 / 1024, tr, mr)
            if not bad:
                break
        if err_line:
            print(err_line)
            failed += 1
            continue
        if bad:
            failed += 1
        if bad or a.verbose:
            print(line)
    print("scaling: %d cases, %d failed" % (total, failed))
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
