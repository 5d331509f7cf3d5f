"""Writes a variant of samples/attention_fwd_sm100.tile to stdout: the sample with one of the bugs of
the 2-CTA attention debugging guide put in (tests/sim/hangs/attention_sm100.test).

    attention_variant.py SAMPLE KIND

KIND: q-explicit / q-explicit-pair (Q through a hand-written mbarrier instead of its pipeline, the
byte count derived: correct, the controls), q-rows (the count from the rows that exist), q-phase (a
phase counter passed as the parity), q-pair-undoubled (the pair form's count of one CTA's box),
cancel-after-failure (every role goes on after a response said the cancellation failed), zero-trip /
one-trip (the MMA warp counts the key blocks from the block's first row, so it leaves the key loop
after zero or one blocks where the load warp loaded more), no-release (the loop's V stage is never
released: the front end), short-correction (the correction warpgroup's loop
one key block short, so its last arrive on o_ready never runs), no-rescale-arrive (the correction warpgroup's own arrive on o_ready
left out; -counted: and the barrier's count written by hand), no-rescale-wait (the MMA thread issues O += P V without waiting for the correction
warpgroup's rescale of O), p-early (the softmax says P is stored before storing it).
Each edit must apply exactly where expected: a sample that no longer matches is an error here, not
a variant that silently tests nothing."""
import sys


def edit(src, old, new, count=1):
    if src.count(old) != count:
        sys.exit("attention_variant.py: expected %d of %r in the sample, found %d" % (count, old, src.count(old)))
    return src.replace(old, new)


def explicit_q(src, count, parity, pair):
    """Q loaded through hand-written mbarriers (qfull, armed with `arrive_expect(qfull<count>)` and waited
    with `parity`; qempty, onto which the MMA thread commits once the tile's S mmas are done) in place
    of its one-stage pipeline."""
    src = edit(src, """    pipeline qpipe stages(1) producer(tma) consumers(1 .. 2) pair(PAIR) {
        sq: T[BM, D];                  // the block's Q rows, loaded once per tile
    }
""", """    shared sq: T[BM, D];
    mbarrier qfull(1);
    mbarrier qempty(1);
""")
    src = edit(src, "            var qs = qpipe.start();\n            var ks = kpipe.start();\n            var vs = vpipe.start();\n"
               "            var tx = block_id.x / CG;          // the tile",
               "            var qe = parity(1);\n            var ks = kpipe.start();\n            var vs = vpipe.start();\n"
               "            var tx = block_id.x / CG;          // the tile")
    if pair:
        load = """                        tma.load(sq, q[tz, ty, mb * BM, 0], mapa(qfull, cluster_rank & ~1), cta_group = 2);
                        if half == 0 {
                            arrive_expect(qfull%s);
                        }
""" % count
        wait = "                if nkb > 0 {\n                    if half == 0 {\n                        wait(qfull, %s);\n                    }\n                    qf = qf.next();\n                }\n" % parity
    else:
        load = """                        tma.load(sq, q[tz, ty, mb * BM, 0], qfull);
                        arrive_expect(qfull%s);
""" % count
        wait = "                if nkb > 0 {\n                    wait(qfull, %s);\n                    qf = qf.next();\n                }\n" % parity
    src = edit(src, """                    elect {
                        acquire(qs);
                        tma.load(sq[qs], q[tz, ty, mb * BM, 0]);
                        commit(qs);
                    }
                    qs = qs.next();
""", """                    elect {
                        wait(qempty, qe);
%s                    }
                    qe = qe.next();
""" % load)
    src = edit(src, "            var qs = qpipe.start();\n            var ks = kpipe.start();\n            var vs = vpipe.start();\n"
               "            var pp0 = parity(0);",
               "            var qf = parity(0);\n            var ks = kpipe.start();\n            var vs = vpipe.start();\n"
               "            var pp0 = parity(0);")
    src = edit(src, "                if nkb > 0 {\n                    wait(qs);\n                }\n", wait)
    src = edit(src, "sq[qs]", "sq", 2)
    src = edit(src, "                tail(qs);\n", "")
    return edit(src, """                if nkb > 0 {
                    release(qs);               // after the last S: its empty completes when that mma is done
                    qs = qs.next();
                }
""", """                if nkb > 0 {
                    elect {                    // the tile's S mmas have read Q once they are complete
                        tc.commit(qempty, cta_group = CG);
                    }
                }
""")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: attention_variant.py SAMPLE KIND")
    src = open(sys.argv[1]).read()
    kind = sys.argv[2]
    mma_nkb = """                let nkb = key_blocks(mb, half, seqlen_q, seqlen_k, causal);
                if nkb > 0 {
                    wait(qs);"""
    if kind == "q-explicit":
        src = explicit_q(src, "", "qf", False)
    elif kind == "q-explicit-pair":
        src = explicit_q(src, "", "qf", True)
    elif kind == "q-rows":
        src = explicit_q(src, ", min(BM, seqlen_q - mb * BM) * D * 2", "qf", False)
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
""", """                    if r.canceled {
                        tx = r.first_cta.x / CG;
                        ty = r.first_cta.y;
                        tz = r.first_cta.z;
                    }
""", 6)   # the load, MMA and epilogue warps' loops, both responses each
    elif kind == "zero-trip":   # the first row's keys: none when it sees none (causal, seqlen_q > seqlen_k)
        src = edit(src, mma_nkb, mma_nkb.replace(
            "let nkb = key_blocks(mb, half, seqlen_q, seqlen_k, causal);",
            "let nkb = causal != 0 && mb * BM + seqlen_k - seqlen_q < 0 ? 0 : key_blocks(mb, half, seqlen_q, seqlen_k, causal);"))
    elif kind == "one-trip":    # the key blocks up to the first row's diagonal
        src = edit(src, mma_nkb, mma_nkb.replace(
            "let nkb = key_blocks(mb, half, seqlen_q, seqlen_k, causal);",
            "let nkb = causal != 0 ? min(key_blocks(mb, half, seqlen_q, seqlen_k, causal), (mb * BM + seqlen_k - seqlen_q + BN) / BN) : key_blocks(mb, half, seqlen_q, seqlen_k, causal);"))
    elif kind == "no-release":
        src = edit(src, "                        release(vs);\n", "")
    elif kind == "short-correction":   # the correction loop one block short: the last rescale's arrive never runs
        src = edit(src, "            for i in 1 .. nkb {                // before O += P(i) V(i)",
                   "            for i in 1 .. nkb - 1 {            // before O += P(i) V(i)")
    elif kind in ("no-rescale-arrive", "no-rescale-arrive-counted"):
        src = edit(src, """                }
                arrive(o_ready);
""", """                }
""")
        if kind == "no-rescale-arrive-counted":   # the count written by hand, as it would be without auto
            src = edit(src, "    mbarrier o_ready(auto); ", "    mbarrier o_ready(128 * CG);")
    elif kind == "no-rescale-wait":
        src = edit(src, "                            wait(o_ready, orp);\n", "")
    elif kind == "p-early":
        src = edit(src, """                    store(p0, pf as T);        // P over S
                    arrive(p_full0);
""", """                    arrive(p_full0);
                    store(p0, pf as T);        // P over S
""")
    else:
        sys.exit("attention_variant.py: unknown kind %r" % kind)
    sys.stdout.write(src)


main()
