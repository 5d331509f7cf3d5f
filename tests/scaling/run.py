#!/usr/bin/env python3
"""Scaling tests: large legal inputs must cost time and memory linear (or n log n) in their size.

Each tests/scaling/cases_<class>.py defines
    CASES = [(name, make_input, args), ...]   make_input(n) -> (suffix, bytes); args use %s for the file
    BASE_N = {name: n, ...}                   the base size (default 1000)
Every case is run at n and 2n; the test fails when doubling the input more than triples the CPU
time (user + system) or the memory (peak RSS above that of compiling an empty program). Each
size runs three times, the two sizes in alternation, and the fastest counts; a case over the ratio
is measured again at n, 2n and 4n, five times each, and fails only when quadrupling the input
multiplies its cost by more than the ratio squared. Tiny costs are not compared: under 50 ms of CPU
or 8 MB of memory the difference is noise. No absolute time is ever a failure.

Usage: run.py [--tilec PATH] [--meter PATH] [--only SUBSTRING] [--ratio R] [-v]
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


def measure(tilec, args, path, runs=3, meter=None):
    """Fastest CPU seconds and smallest peak RSS (KiB) of `tilec args` over `runs` runs; status.
    The command runs under `meter` (tests/scaling/measure.c), whose small process forks it: a
    child of Python itself would inherit Python's peak RSS at exec."""
    argv = [meter, tilec] + [a.replace("%s", path) for a in shlex.split(args)]
    best_t, best_m, status, err = None, None, 0, ""
    for _ in range(runs):
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode("utf-8", "replace")
        fields = p.stdout.split()
        if p.returncode != 0 or len(fields) != 3:
            return 0.0, 0, -1, "measure failed: " + err
        t, m, status = float(fields[0]), int(fields[1]), int(fields[2])
        best_t = t if best_t is None else min(best_t, t)
        best_m = m if best_m is None else min(best_m, m)
    return best_t, best_m, status, err


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
    ap.add_argument("--meter", default=None, help="the measure helper (default: next to tilec)")
    ap.add_argument("--only", default=None)
    ap.add_argument("--ratio", type=float, default=3.0)
    ap.add_argument("--work", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    tilec = os.path.abspath(a.tilec)
    meter = os.path.abspath(a.meter or os.path.join(os.path.dirname(tilec), "scaling-measure"))
    if not os.access(meter, os.X_OK):
        print("scaling: no measure helper at %s (make builds it)" % meter, file=sys.stderr)
        return 1
    work = os.path.abspath(a.work or os.path.join(os.path.dirname(tilec), "scaling"))
    os.makedirs(work, exist_ok=True)

    empty = os.path.join(work, "empty.tile")
    with open(empty, "w") as f:
        f.write("kernel empty() block(32) {\n}\n")
    _, base_mem, st, err = measure(tilec, "%s --emit ptx -o /dev/null", empty, meter=meter)
    if st != 0:
        print("scaling: the empty program does not compile:\n" + err, file=sys.stderr)
        return 1

    def write(name, make, size):
        suffix, content = make(size)
        path = os.path.join(work, name.replace("/", "_") + "_%d%s" % (size, suffix))
        with open(path, "wb") as f:
            f.write(content)
        return path

    def sample(name, args, paths, sizes, rounds, best):
        """`rounds` rounds over all sizes in alternation (a neighbour's load slows them alike);
        the fastest time and smallest memory of each size count. An error line on failure."""
        for _ in range(rounds):
            for k, path in enumerate(paths):
                t, m, st, err = measure(tilec, args, path, runs=1, meter=meter)
                if st != 0:
                    return "FAIL %s (n=%d): tilec exited %d\n%s" % (name, sizes[k], st, err.strip()[-800:])
                m = max(m - base_mem, 0)
                best[k] = (t, m) if best[k] is None else (min(best[k][0], t), min(best[k][1], m))
        return None

    def ratios(lo, hi):
        return (max(hi[0], MIN_TIME) / max(lo[0], MIN_TIME), max(hi[1], MIN_MEM) / max(lo[1], MIN_MEM))

    def check(name, make, args, n):
        """(failed, the line to print or None) for one case."""
        sizes = [n, 2 * n]
        paths = [write(name, make, size) for size in sizes]
        best = [None, None]
        err_line = sample(name, args, paths, sizes, 3, best)
        if err_line:
            return True, err_line
        tr, mr = ratios(best[0], best[1])
        bad = tr > a.ratio or mr > a.ratio
        line = "%s %s: n=%d %.3f s %.1f MB -> 2n %.3f s %.1f MB (time x%.2f, memory x%.2f)" % (
            "ok  ", name, n, best[0][0], best[0][1] / 1024, best[1][0], best[1][1] / 1024, tr, mr)
        if bad:
            # Over the ratio: confirm over two doublings, n -> 4n, where noise weighs half as much
            # in the exponent. Linear cost grows x4, quadratic x16; the bound is the ratio squared.
            sizes.append(4 * n)
            paths.append(write(name, make, 4 * n))
            best.append(None)
            err_line = sample(name, args, paths, sizes, 5, best)
            if err_line:
                return True, err_line
            tr4, mr4 = ratios(best[0], best[2])
            bad = tr4 > a.ratio ** 2 or mr4 > a.ratio ** 2
            line = "%s %s: n=%d %.3f s %.1f MB -> 2n %.3f s %.1f MB -> 4n %.3f s %.1f MB (n to 4n: time x%.2f, memory x%.2f)" % (
                "FAIL" if bad else "ok  ", name, n, best[0][0], best[0][1] / 1024, best[1][0], best[1][1] / 1024,
                best[2][0], best[2][1] / 1024, tr4, mr4)
        return bad, line if bad or a.verbose else None

    failed = total = 0
    for name, make, args, n in load_cases(a.only):
        total += 1
        bad, line = check(name, make, args, n)
        failed += bad
        if line:
            print(line)
    print("scaling: %d cases, %d failed" % (total, failed))
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
