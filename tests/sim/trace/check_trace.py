"""check_trace.py TRACE.json: validates a simulator trace (Chrome trace event format) and prints
what a pipeline's trace should show, for FileCheck:
  - every event has the fields its phase needs (X: name, ts, dur >= 0, pid, tid; i: name, ts;
    M: name, args.name), timestamps are non-negative integers;
  - per CTA, the largest number of TMA copies in flight at one time (stages of a ring overlap);
  - per CTA, whether some warp computes (is between two of its waits) while a TMA copy it does not
    wait for is in flight (loads overlap compute).
Exits 1 with a message on the first malformed event."""
import json
import sys


def fail(msg):
    print("trace: INVALID: " + msg)
    sys.exit(1)


with open(sys.argv[1]) as f:
    doc = json.load(f)
events = doc.get("traceEvents") if isinstance(doc, dict) else None
if not isinstance(events, list) or not events:
    fail("no traceEvents list")
for i, e in enumerate(events):
    ph = e.get("ph")
    if ph not in ("X", "i", "M"):
        fail("event %d: phase %r" % (i, ph))
    if not isinstance(e.get("name"), str):
        fail("event %d: no name" % i)
    if ph == "M":
        if not isinstance(e.get("args", {}).get("name"), str):
            fail("event %d: metadata without args.name" % i)
        continue
    if not isinstance(e.get("ts"), int) or e["ts"] < 0:
        fail("event %d: ts %r" % (i, e.get("ts")))
    if ph == "X" and (not isinstance(e.get("dur"), int) or e["dur"] < 0 or "pid" not in e or "tid" not in e):
        fail("event %d: span without dur/pid/tid" % i)
print("trace: valid, %d events" % len(events))

ctas = sorted({e["pid"] for e in events if e["ph"] == "X"})
for pid in ctas:
    tma = [(e["ts"], e["ts"] + e["dur"]) for e in events if e["ph"] == "X" and e["pid"] == pid and e["name"].startswith("tma")]
    points = sorted([(a, 1) for a, b in tma] + [(b, -1) for a, b in tma])
    cur = best = 0
    for _, d in points:
        cur += d
        best = max(best, cur)
    waits = {}
    for e in events:
        if e["ph"] == "X" and e["pid"] == pid and e["name"].startswith("wait"):
            waits.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    overlap = False
    for tid, ws in waits.items():
        ws.sort()
        busy = [(ws[k][1], ws[k + 1][0]) for k in range(len(ws) - 1) if ws[k + 1][0] > ws[k][1]]
        if any(a < tb and ta < b for a, b in busy for ta, tb in tma):
            overlap = True
    print("trace: CTA %d: %d TMA copies, at most %d in flight at once; loads overlap compute: %s"
          % (pid, len(tma), best, "yes" if overlap else "no"))
