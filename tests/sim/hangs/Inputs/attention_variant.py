"""Writes a variant of samples/attention_fwd_sm100.tile to stdout: the sample with one of the bugs of
the 2-CTA attention debugging guide put in (tests/sim/hangs/attention_sm100.test).

    attention_variant.py SAMPLE KIND

KIND: q-explicit / q-explicit-pair (Q through a hand-written mbarrier instead of its pipeline, the
byte count derived: correct, the controls), q-rows (the count from the rows that exist), q-phase (a
phase counter passed as the parity), q-pair-undoubled (the pair form's count of one CTA's box),
cancel-after-failure (the producer asks for another tile after a response said the cancellation
failed), zero-trip / one-trip (the softmax group leaves the key loop early), no-release (the loop's
V stage is never released), early-release (the mmas lose cta_group, so a release no longer waits for
them).
Each edit must apply exactly where expected: a sample that no longer matches is an error here, not
a variant that silently tests nothing."""
import sys


def edit(src, old, new, count=1):
    if src.count(old) != count:
        sys.exit("attention_variant.py: expected %d of %r in the sample, found %d" % (count, old, src.count(old)))
    return src.replace(old, new)


def explicit_q(src, count, parity, pair):
    """Q loaded through hand-written mbarriers (qfull, armed with `arrive_expect(qfull<count>)` and waited
    with `parity`; qempty, on which the softmax group says the tile's S mmas are done) in place of its
    one-stage pipeline."""
    src = edit(src, """    pipeline qpipe stages(1) producer(tma) consumers(warpgroups(1 .. 2)) pair(PAIR) {
        sq: T[BM, D];                   // the block's Q rows, loaded once
    }
""", """    shared sq: T[BM, D];
    mbarrier qfull(1);
    mbarrier qempty(1);
""")
    src = edit(src, "            var qs = qpipe.start();\n", "            var qe = parity(1);\n")
    if pair:
        load = """                    tma.load(sq, q[tz, ty, r0, 0], mapa(qfull, cluster_rank & ~1), cta_group = 2);
                    if half == 0 {
                        arrive_expect(qfull%s);
                    }
""" % count
        wait = "            if half == 0 {\n                wait(qfull, %s);\n            }\n            qf = qf.next();\n" % parity
    else:
        load = """                    tma.load(sq, q[tz, ty, r0, 0], qfull);
                    arrive_expect(qfull%s);
""" % count
        wait = "            wait(qfull, %s);\n            qf = qf.next();\n" % parity
    src = edit(src, """                elect {
                    acquire(qs);
                    tma.load(sq[qs], q[tz, ty, r0, 0]);
                    commit(qs);
                }
                qs = qs.next();
""", """                elect {
                    wait(qempty, qe);
%s                }
                qe = qe.next();
""" % load)
    src = edit(src, "        var qs = qpipe.start();\n", "        var qf = parity(0);\n")
    src = edit(src, "            wait(qs);\n", wait)
    src = edit(src, "sq[qs]", "sq")
    src = edit(src, "                tail(qs);\n", "")
    return edit(src, """            release(qs);                          // after the last S: its empty completes when that mma is done
            qs = qs.next();
""", """            elect {                               // the tile's S mmas are complete (each was waited)
                arrive(qempty);
            }
""")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: attention_variant.py SAMPLE KIND")
    src = open(sys.argv[1]).read()
    kind = sys.argv[2]
    loop = "            for i in 0 .. nkb {                   // S of key block i"
    if kind == "q-explicit":
        src = explicit_q(src, "", "qf", False)
    elif kind == "q-explicit-pair":
        src = explicit_q(src, "", "qf", True)
    elif kind == "q-rows":
        src = explicit_q(src, ", min(BM, seqlen_q - r0) * D * 2", "qf", False)
    elif kind == "q-phase":
        src = explicit_q(src, "", "tx", False)
    elif kind == "q-pair-undoubled":
        src = explicit_q(src, ", BM * D * 2", "qf", True)
    elif kind == "cancel-after-failure":
        src = edit(src, """                    if !r.canceled {
                        break;
                    }
                    tx = r.first_cta.x / CG;
                    ty = r.first_cta.y;
                    tz = r.first_cta.z;
                } else {""", """                    if r.canceled {
                        tx = r.first_cta.x / CG;
                        ty = r.first_cta.y;
                        tz = r.first_cta.z;
                    }
                } else {""", 2)   # the load warp (which asks) and the epilogue warp
    elif kind == "zero-trip":
        src = edit(src, loop, "            for i in 0 .. (lim < 0 ? 0 : nkb) {   // S of key block i")
    elif kind == "one-trip":
        src = edit(src, loop, "            for i in 0 .. (causal != 0 ? min(nkb, (lim + BN) / BN) : nkb) {   // S of key block i")
    elif kind == "no-release":
        src = edit(src, "                    release(vs);\n", "")
    elif kind == "early-release":
        src = edit(src, ", cta_group = CG)", ")", 3)
    else:
        sys.exit("attention_variant.py: unknown kind %r" % kind)
    sys.stdout.write(src)


main()
