#!/usr/bin/env python3
"""The hostile-input corpus: every case must fail cleanly.

A case is a file under tests/hostile/<class>/ (.tile or .ir), a case made by a generator
tests/hostile/gen/<class>.py, or a mutation of a sample (truncation, byte flip, NUL, invalid
UTF-8, CR or CRLF line ends, BOM) made here. Each runs `tilec` and is checked for:

  - the expected exit status (1 unless the case says otherwise), never a signal;
  - a located `<file>:<line>:<col>: error:` on standard error (unless the case says the error has
    no position, e.g. a bad command-line value);
  - no sanitizer report ("Sanitizer", "runtime error:");
  - an end within the time limit (10 s; --timeout for slower builds such as ASan).

Directives, in the first comment lines of a case file (`// ` for .tile and .ir):
  // HOSTILE-ARGS: <tilec arguments, %s is the case file>
  // HOSTILE-EXPECT: <python regex that must match standard error>   (repeatable)
  // HOSTILE-EXIT: <status>
  // HOSTILE-LOCATED: no

A generator module defines cases() yielding (name, suffix, content_bytes, args, expect) and
optionally a sixth item, a dict with "exit" and/or "located". args and expect may be None.

Usage: run.py [--tilec PATH] [--timeout S] [--jobs N] [--work DIR] [--only SUBSTRING] [-v]
"""
import argparse
import concurrent.futures
import importlib.util
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SANITIZER = re.compile(r"Sanitizer|runtime error:")


class Case:
    def __init__(self, name, path, args, expect=(), exit=1, located=True, accept_ok=False):
        self.name = name          # shown in reports
        self.path = path          # the input file
        self.args = args          # tilec arguments with %s for the file
        self.expect = list(expect)
        self.exit = exit
        self.located = located
        self.accept_ok = accept_ok  # a mutation may still be a valid program: exit 0 is fine too


def default_args(suffix):
    if suffix == ".ir":
        return "%s --input ir --emit ptx -o /dev/null"
    return "%s --emit ptx -o /dev/null"


def directives(path):
    """The HOSTILE-* lines at the top of a case file."""
    args, expect, exit, located = None, [], 1, True
    with open(path, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace").splitlines()
    for line in head:
        m = re.match(r"\s*//\s*HOSTILE-([A-Z]+):\s?(.*)$", line)
        if not m:
            continue
        key, val = m.group(1), m.group(2).rstrip()
        if key == "ARGS":
            args = val
        elif key == "EXPECT":
            expect.append(val)
        elif key == "EXIT":
            exit = int(val)
        elif key == "LOCATED":
            located = val.strip().lower() not in ("no", "false", "0")
        else:
            raise SystemExit("%s: unknown directive HOSTILE-%s" % (path, key))
    return args, expect, exit, located


def file_cases(only):
    for dirpath, dirnames, filenames in os.walk(HERE):
        dirnames[:] = sorted(d for d in dirnames if d not in ("gen", "__pycache__"))
        for fn in sorted(filenames):
            suffix = os.path.splitext(fn)[1]
            if suffix not in (".tile", ".ir"):
                continue
            path = os.path.join(dirpath, fn)
            name = os.path.relpath(path, HERE)
            if only and only not in name:
                continue
            args, expect, exit, located = directives(path)
            yield Case(name, path, args or default_args(suffix), expect, exit, located)


def write(work, name, content):
    path = os.path.join(work, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)
    return path


def generated_cases(work, only):
    gen_dir = os.path.join(HERE, "gen")
    if not os.path.isdir(gen_dir):
        return
    for fn in sorted(os.listdir(gen_dir)):
        if not fn.endswith(".py"):
            continue
        cls = fn[:-3]
        spec = importlib.util.spec_from_file_location("hostile_gen_" + cls, os.path.join(gen_dir, fn))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for item in mod.cases():
            name, suffix, content, args, expect = item[:5]
            opts = item[5] if len(item) > 5 else {}
            full = "gen/%s/%s%s" % (cls, name, suffix)
            if only and only not in full:
                continue
            path = write(work, full, content)
            exp = [] if expect is None else ([expect] if isinstance(expect, str) else list(expect))
            yield Case(full, path, args or default_args(suffix), exp, opts.get("exit", 1),
                       opts.get("located", True))


# Mutations of the samples: truncations and byte damage must give a located error (or, when the
# damage happens to leave a valid program, compile); line-end and BOM changes must compile.
# Each sample with the first target it compiles for.
def mutation_sources(tilec):
    srcs = []
    for fn in sorted(os.listdir(os.path.join(ROOT, "samples"))):
        if not fn.endswith(".tile"):
            continue
        path = os.path.join(ROOT, "samples", fn)
        for target in ("sm_90a", "sm_100a"):
            args = "%s --target " + target + " --emit ptx -o /dev/null"
            argv = [tilec] + [x.replace("%s", path) for x in shlex.split(args)]
            if subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                srcs.append((path, args))
                break
        else:
            raise SystemExit("hostile: %s compiles for no target" % path)
    return srcs


def mutations(data, rng):
    n = len(data)
    cuts = sorted({1, n // 7, n // 3, n // 2, (2 * n) // 3, n - 2, n - 1} | {rng.randrange(1, n) for _ in range(3)})
    for c in cuts:
        if 0 < c < n:
            yield "trunc%d" % c, data[:c], True
    for i in range(6):
        pos = rng.randrange(n)
        b = bytearray(data)
        b[pos] = rng.choice([0x00, 0xff, 0x7f, 0x22, 0x7b, 0x7d, 0x28, 0x5b, 0x2f, 0x2a, 0x30 + rng.randrange(10)])
        yield "flip%d" % pos, bytes(b), True
    for i in range(2):
        pos = rng.randrange(n)
        yield "nul%d" % pos, data[:pos] + b"\0" + data[pos:], True
    for bad in (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"):
        pos = rng.randrange(n)
        yield "utf8_%s_%d" % (bad.hex(), pos), data[:pos] + bad + data[pos:], True
    yield "crlf", data.replace(b"\n", b"\r\n"), False
    yield "cr", data.replace(b"\n", b"\r"), False
    yield "bom", b"\xef\xbb\xbf" + data, False
    yield "bom_crlf", b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), False


def mutation_cases(tilec, work, only):
    rng = random.Random(20261126)
    for src, args in mutation_sources(tilec):
        with open(src, "rb") as f:
            data = f.read()
        base = os.path.splitext(os.path.basename(src))[0]
        for tag, content, may_fail in mutations(data, rng):
            full = "mutate/%s.%s.tile" % (base, tag)
            if only and only not in full:
                continue
            path = write(work, full, content)
            if may_fail:
                yield Case(full, path, args, accept_ok=True)
            else:
                yield Case(full, path, args, exit=0, located=False)


def run_case(case, tilec, timeout):
    argv = [tilec] + [a.replace("%s", case.path) for a in shlex.split(case.args)]
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return "timed out after %.0f s" % timeout, (e.stderr or b"").decode("utf-8", "replace")
    elapsed = time.monotonic() - t0
    err = p.stderr.decode("utf-8", "replace")
    rc = p.returncode
    if rc < 0:
        return "killed by signal %s" % signal.Signals(-rc).name, err
    if SANITIZER.search(err):
        return "sanitizer report", err
    if case.accept_ok and rc == 0:
        return None, err
    if rc != case.exit:
        return "exit status %d, expected %d" % (rc, case.exit), err
    if case.exit != 0 and case.located:
        base = re.escape(os.path.basename(case.path))
        if not re.search(r"(^|[/\s])%s:\d+:\d+: error: " % base, err, re.M):
            return "no located '%s:LINE:COL: error:'" % os.path.basename(case.path), err
    for rx in case.expect:
        if not re.search(rx, err, re.M):
            return "standard error does not match /%s/" % rx, err
    return None, err


def main():
    ap = argparse.ArgumentParser(description="Run the hostile-input corpus against tilec.")
    ap.add_argument("--tilec", default=os.environ.get("TILEC", os.path.join(ROOT, "build", "tilec")))
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("HOSTILE_TIMEOUT", "10")))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--work", default=None, help="where generated inputs are written (default: next to tilec)")
    ap.add_argument("--only", default=None, help="run only the cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    tilec = os.path.abspath(a.tilec)
    work = os.path.abspath(a.work or os.path.join(os.path.dirname(tilec), "hostile"))
    os.makedirs(work, exist_ok=True)

    cases = list(file_cases(a.only)) + list(generated_cases(work, a.only)) + list(mutation_cases(tilec, work, a.only))
    if not cases:
        print("hostile: no cases", file=sys.stderr)
        return 1
    failed = 0
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_case, c, tilec, a.timeout): c for c in cases}
        for fut in concurrent.futures.as_completed(futs):
            c = futs[fut]
            why, err = fut.result()
            if why:
                failed += 1
                tail = "\n".join("    " + l for l in err.strip().splitlines()[-8:])
                print("FAIL %s: %s\n    tilec %s\n%s" % (c.name, why, c.args.replace("%s", c.path), tail))
            elif a.verbose:
                print("ok   %s" % c.name)
    print("hostile: %d cases, %d failed (%.1f s)" % (len(cases), failed, time.monotonic() - t0))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
