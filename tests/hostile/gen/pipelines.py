"""Pipelines and print at and past their limits: every case fails with a located error.

Consumer groups past the 16 a pipeline takes and past the 15 named barriers their releases need,
stages and tiles per stage out of range, a chain of 3000 state advances (the expression depth
limit), print with more than 32 arguments, a format over 1024 bytes, a 5-digit width, every
conversion that is not accepted, and IR text that declares what the front end would not write: a
print whose format reads a string, a print for gfx942, a pipeline barrier counting more groups
than arrive on it.
"""

HEAD = "kernel k(x: tma f32[M, K] box[64, 32], out: f32*, M: i32, K: i32) block(%d) {\n"


def pipeline(block, attrs, fields="        a: f32[64, 32];\n"):
    return HEAD % block + "    pipeline ring %s {\n%s    }\n" % (attrs, fields)


def ring_prog(body, block=256, attrs="stages(2) consumers(4 .. 8)"):
    return (pipeline(block, attrs) + "    warp(0) {\n        elect {\n            var st = ring.start();\n"
            "            acquire(st);\n            tma.load(a[st], x[0, 0]);\n            commit(st);\n        }\n    }\n"
            + body + "}\n")


def cases():
    groups = ", ".join("%d .. %d" % (w, w + 1) for w in range(17))
    yield ("too_many_groups", ".tile", (pipeline(1024, "stages(2) consumers(%s)" % groups) + "}\n").encode(), None,
           r"consumers\(\.\.\.\) takes 1\.\.16 warp ranges")
    groups16 = ", ".join("%d .. %d" % (w, w + 1) for w in range(16, 32))
    body = "    warps(16 .. 32) {\n        var st = ring.start();\n        wait(st);\n        release(st);\n    }\n"
    yield ("named_barriers_exhausted", ".tile",
           ring_prog(body, 1024, "stages(2) consumers(%s)" % groups16).encode(), None,
           r"more than 15 warp groups need a barrier")
    yield ("stages_zero", ".tile", (pipeline(256, "stages(0)") + "}\n").encode(), None, r"a pipeline has 1\.\.64 stages, not 0")
    yield ("stages_huge", ".tile", (pipeline(256, "stages(4294967297)") + "}\n").encode(), None,
           r"a pipeline has 1\.\.64 stages")
    yield ("tiles_times_stages", ".tile",
           (pipeline(256, "stages(16)", "        a: f32[64, 32] tiles(8);\n") + "}\n").encode(), None,
           r"tiles\(8\): a field has 1\.\.8 tiles per stage, and at most 64 in the ring")
    chain = "ring.start()" + ".next()" * 3000
    yield ("next_chain", ".tile", ring_prog("    warps(4 .. 8) {\n        let st = %s;\n    }\n" % chain).encode(), None,
           r"error: ")
    args = ", ".join(["1"] * 33)
    yield ("print_33_args", ".tile", (HEAD % 32 + "    print(\"%s\", %s);\n}\n" % ("%d" * 33, args)).encode(), None,
           r"print\(\) takes 1 to 33 arguments|print.*33")
    yield ("print_long_format", ".tile", (HEAD % 32 + "    print(\"%s\");\n}\n" % ("x" * 1025)).encode(), None,
           r"the format has 1025 bytes, more than 1024")
    yield ("print_wide", ".tile", (HEAD % 32 + "    print(\"%99999d\", 1);\n}\n").encode(), None,
           r"the width of conversion 0 is more than 4 digits")
    for conv in ("s", "p", "n", "*d", "hd", "lf", "q", "lc", "Lf", "llld"):
        yield ("print_conv_%s" % conv.replace("*", "star"), ".tile",
               (HEAD % 32 + "    print(\"%%%s\", 1);\n}\n" % conv).encode(), None, r"print\(\): ")
    ir_head = 'module "h.ir" target "%s"\n\nkernel @k(%%n: i32) block(32, 1, 1) cluster(1, 1, 1) {\n'
    yield ("ir_print_string", ".ir", (ir_head % "sm_90a" + '  print %n {format = "%s"}\n}\n').encode(),
           "%s --input ir --emit ptx -o /dev/null", r"print: %s is not a device printf conversion")
    yield ("ir_print_count", ".ir", (ir_head % "sm_90a" + '  print %n, %n {format = "%d"}\n}\n').encode(),
           "%s --input ir --emit ptx -o /dev/null", r"print: 2 arguments but the format has 1 conversion")
    yield ("ir_print_amd", ".ir", (ir_head % "gfx942" + '  print %n {format = "%d"}\n}\n').encode(),
           "%s --input ir --target gfx942 -o /dev/null", r"'print' is an NVIDIA-only op")
    yield ("ir_pipeline_count", ".ir", (ir_head % "sm_90a" +
           '  %e = mbar_alloc {count = 3, pipeline = "p"} : mbar<2>\n  %z = const {value = 0} : i32\n'
           '  %b = mbar_at %e, %z : mbar\n  warps {lo = 0, hi = 1} {\n    elect {\n      mbar_arrive %b {scope = "cta"}\n'
           '      yield\n    }\n    yield\n  }\n}\n').encode(),
           "%s --input ir --emit ptx -o /dev/null",
           r"pipeline barrier 'e' counts 3 arrivals per phase \(one per group\) but its arrive sites lie in 1 group")
