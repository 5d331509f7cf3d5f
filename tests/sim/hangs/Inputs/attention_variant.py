"""Writes a variant of samples/attention_fwd_sm100.tile to stdout: the sample with one of the bugs of
the 2-CTA attention debugging guide put in (tests/sim/hangs/attention_sm100.test).

    attention_variant.py SAMPLE KIND

KIND: q-explicit / q-explicit-pair (Q through a hand-written mbarrier instead of its pipeline, the
byte count derived: correct, the controls), q-rows (the count from the rows that exist), q-phase (a
phase counter passed as the parity), q-pair-undoubled (the pair form's count of one CTA's box),
zero-trip / one-trip (the softmax group leaves the key loop early), no-release (the loop's V stage
is never released), early-release (the mmas lose cta_group, so a release no longer waits for them).
Each edit must apply exactly where expected: a sample that no longer matches is an error here, not
a variant that silently tests nothing."""
import sys


def edit(src, old, new, count=1):
    if src.count(old) != count:
        sys.exit("attention_variant.py: expected %d of %r in the sample, found %d" % (count, old, src.count(old)))
    return src.replace(old, new)


def explicit_q(src, count, parity, pair):
    """Q loaded through `mbarrier qfull` with `arrive_expect(qfull<count>)`, waited with `parity`."""
    src = edit(src, """    pipeline qpipe stages(1) producer(tma) consumers(warpgroups(1 .. 2)) pair(PAIR) {
        sq: T[BM, D];                   // the block's Q rows, loaded once
    }
""", """    shared sq: T[BM, D];
    mbarrier qfull(1);
""")
    if pair:
        load = ("                tma.load(sq, q[b, h, r0, 0], mapa(qfull, cluster_rank & ~1), cta_group = 2);\n"
                "                if half == 0 {\n                    arrive_expect(qfull%s);\n                }\n" % count)
        wait = "        if half == 0 {\n            wait(qfull, %s);\n        }\n" % parity
    else:
        load = "                tma.load(sq, q[b, h, r0, 0], qfull);\n                arrive_expect(qfull%s);\n" % count
        wait = "        wait(qfull, %s);\n" % parity
    src = edit(src, """                var qs = qpipe.start();
                acquire(qs);
                tma.load(sq[qs], q[b, h, r0, 0]);
                commit(qs);
                qs = qs.next();
""", load)
    src = edit(src, "        var qs = qpipe.start();\n        wait(qs);\n", wait)
    src = edit(src, "sq[qs]", "sq")
    src = edit(src, "                tail(qs);\n", "")
    return edit(src, "        release(qs);", "        //")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: attention_variant.py SAMPLE KIND")
    src = open(sys.argv[1]).read()
    kind = sys.argv[2]
    loop = "        for i in 0 .. nkb {                       // S of key block i"
    if kind == "q-explicit":
        src = explicit_q(src, "", "parity(0)", False)
    elif kind == "q-explicit-pair":
        src = explicit_q(src, "", "parity(0)", True)
    elif kind == "q-rows":
        src = explicit_q(src, ", min(BM, seqlen_q - r0) * D * 2", "parity(0)", False)
    elif kind == "q-phase":
        src = explicit_q(src, "", "mb", False)
    elif kind == "q-pair-undoubled":
        src = explicit_q(src, ", BM * D * 2", "parity(0)", True)
    elif kind == "zero-trip":
        src = edit(src, loop, "        for i in 0 .. (lim < 0 ? 0 : nkb) {       // S of key block i")
    elif kind == "one-trip":
        src = edit(src, loop, "        for i in 0 .. (causal != 0 ? min(nkb, (lim + BN) / BN) : nkb) {   // S of key block i")
    elif kind == "no-release":
        src = edit(src, "                release(vs);\n", "")
    elif kind == "early-release":
        src = edit(src, ", cta_group = CG)", ")", 3)
    else:
        sys.exit("attention_variant.py: unknown kind %r" % kind)
    sys.stdout.write(src)


main()
