"""Extreme numbers in every position of the language that takes one.

Each template is a small valid program with one number replaced by `@`; every value of VALUES goes
there. The template says which values are legal there (`ok`): with those the program must compile
(exit 0), with every other one tilec must give a located error (exit 1). A -D template passes the
value on the command line instead: there a value that is not a number of the language (nan, inf,
beyond 64 bits) is an error without a position.

Values are written in parentheses, so a negative one is unary minus on a literal, as in a source
file; nan and inf have no literal and are written as the constant expressions that would make them
(0.0 / 0.0, 1.0 / 0.0), and 1e400 is the literal that overflows.
"""

NAN, INF, INFLIT = "nan", "inf", "1e400"
VALUES = [0, -1, 1, 64, 2**31 - 1, 2**31, 2**32, 2**63, 2**64, 1e300, -1e300, NAN, INF, INFLIT]
I64 = (-2**63, 2**63 - 1)
I32 = (-2**31, 2**31 - 1)


def text(v):
    if v == NAN:
        return "(0.0 / 0.0)"
    if v == INF:
        return "(1.0 / 0.0)"
    if v == INFLIT:
        return "(1e400)"
    if isinstance(v, float):
        return "(%r)" % v
    return "(%d)" % v


def dtext(v):
    """The value as -DNAME=VALUE writes it."""
    if v in (NAN, INF):
        return v
    if isinstance(v, float):
        return repr(v)
    return str(v)


def is_int(v):
    """An integer constant the language can write: a literal in the i64 range (or minus one)."""
    return isinstance(v, int) and I64[0] <= v <= I64[1]


def int_in(lo, hi):
    return lambda v: is_int(v) and lo <= v <= hi


def pow2_in(lo, hi):
    return lambda v: is_int(v) and lo <= v <= hi and v & (v - 1) == 0


def one_of(*xs):
    return lambda v: is_int(v) and v in xs


def finite(v):
    """A finite number of the language (an untyped constant)."""
    return is_int(v) or isinstance(v, float)


def fits_float(limit):
    return lambda v: finite(v) and abs(v) < limit


F32_LIMIT = 2.0**128 - 2.0**103
F16_LIMIT = 65520.0


def float_to_int(lo, hi):
    """`v as T` on a constant: integers wrap, floats truncate and must fit."""
    return lambda v: is_int(v) or (isinstance(v, float) and lo <= int(v) <= hi)


KERNEL = ("kernel k(p: i32*, q: f32*, x: tensor f32[n], n: i32) block(%s) {\n%s\n}\n")


def body(b, block="128"):
    return KERNEL % (block, b)


TMA_KERNEL = ("kernel k(src: tma bf16[M, N] box[%s, 64], M: i32, N: i32) block(128)%s {\n"
              "    shared buf: bf16[64, 64] swizzle(128);\n"
              "    mbarrier full(1);\n"
              "    elect {\n"
              "        tma.load(buf, src[%s, 0], full%s);\n"
              "        arrive_expect(full);\n"
              "        wait(full, parity(0));\n"
              "    }\n}\n")

# (name, program with @, ok, tilec arguments: with @ for -D templates (the value goes there, not in
# the program), otherwise extra arguments or "")
TEMPLATES = [
    # shapes of register tiles: powers of two, at most 2^20 elements and 4096 per thread of 128
    ("tile_type_dim", body("    let t: f32[@] = 0.0;\n    store(x[0], t);"), pow2_in(1, 2**19), ""),
    ("load_shape", body("    let t = load(x[0], [@]);\n    store(x[0], t);"), pow2_in(1, 2**19), ""),
    ("splat_shape", body("    let t = splat(1.5, [@]);\n    store(x[0], t);"), pow2_in(1, 2**19), ""),
    ("iota_shape", body("    let t = iota([@], 0);\n    store(x[0], t as f32);"), pow2_in(1, 2**19), ""),
    ("iota_dim", body("    let t = iota([8, 8], @);\n    p[0] = 1;"), one_of(0, 1), ""),
    # launch shape
    ("block_dim", body("    p[0] = 1;", "@"), int_in(1, 1024), ""),
    ("block_dim2", body("    p[0] = 1;", "32, @"), int_in(1, 32), ""),
    ("cluster_dim", body("    p[0] = 1;", "128) cluster(@"), int_in(1, 16), ""),
    # loops
    ("for_lo", body("    for i in @ .. 10 { p[i] = i; }"), int_in(*I32), ""),
    ("for_hi", body("    for i in 0 .. @ { p[i] = i; }"), int_in(*I32), ""),
    ("for_step", body("    for i in 0 .. 10 step @ { p[i] = i; }"), int_in(1, I32[1]), ""),
    # shifts: a constant count must be in 0 .. width - 1
    ("shift_i32", body("    p[0] = p[1] << @;"), int_in(0, 31), ""),
    ("shift_u8", body("    let b = p[1] as u8;\n    p[0] = (b >> @) as i32;"), int_in(0, 7), ""),
    ("shift_untyped", body("    const C = 1 << @;\n    p[0] = C;"), int_in(0, 30), ""),
    ("shift_i64", body("    const C: i64 = 1;\n    p[0] = (C << @) as i32;"), int_in(0, 63), ""),
    # consts, typed and untyped
    ("const_i32", "const C = @;\n" + body("    p[0] = C;"), int_in(*I32), ""),
    ("const_f32", "const C = @;\n" + body("    q[0] = C;"), fits_float(F32_LIMIT), ""),
    ("const_typed_i64", "const C: i64 = @;\n" + body("    p[0] = C as i32;"), is_int, ""),
    ("const_typed_u8", "const C: u8 = @;\n" + body("    p[0] = C as i32;"), int_in(0, 255), ""),
    ("const_typed_f16", "const C: f16 = @;\n" + body("    q[0] = C as f32;"), lambda v: is_int(v) and abs(v) < F16_LIMIT, ""),
    ("const_typed_f64", "const C: f64 = @;\n" + body("    q[0] = C as f32;"), finite, ""),
    ("local_const", body("    const C: i32 = @;\n    p[0] = C;"), int_in(*I32), ""),
    ("let_f32", body("    let v: f32 = @;\n    q[0] = v;"), fits_float(F32_LIMIT), ""),
    ("let_f16", body("    let v: f16 = @;\n    q[0] = v as f32;"), fits_float(F16_LIMIT), ""),
    ("let_u64", body("    let v: u64 = @;\n    p[0] = v as i32;"), int_in(0, I64[1]), ""),
    ("var_i8", body("    var v: i8 = 0;\n    v = @;\n    p[0] = v as i32;"), int_in(-128, 127), ""),
    # conversions and folding
    ("as_i32", body("    p[0] = @ as i32;"), float_to_int(*I32), ""),
    ("as_u32", body("    p[0] = (@ as u32) as i32;"), float_to_int(0, 2**32 - 1), ""),
    ("as_u64", body("    p[0] = (@ as u64) as i32;"), float_to_int(0, 2**64 - 1), ""),
    ("as_f16", body("    q[0] = (@ as f16) as f32;"), fits_float(F16_LIMIT), ""),
    ("as_f32", body("    q[0] = @ as f32;"), fits_float(F32_LIMIT), ""),
    ("as_bool", body("    if @ as bool { p[0] = 1; }"), finite, ""),
    ("neg", body("    p[0] = (-@) as i32;"), float_to_int(-I32[1], -I32[0]), ""),
    ("times4", body("    p[0] = (@ * 4) as i32;"),
     lambda v: (is_int(v) and I64[0] <= 4 * v <= I64[1]) or (isinstance(v, float) and I32[0] <= 4 * v <= I32[1]), ""),
    ("plus_max", body("    p[0] = (@ + 9223372036854775807) as i32;"), lambda v: is_int(v) and v <= 0, ""),
    ("div", body("    p[0] = (1000 / @) as i32;"),
     lambda v: (is_int(v) and v != 0) or isinstance(v, float), ""),
    ("rem", body("    p[0] = 7 % @;"), lambda v: is_int(v) and v != 0, ""),
    ("times_float", body("    q[0] = @ * 1e10;"), lambda v: finite(v) and abs(v * 1e10) < F32_LIMIT, ""),
    ("compare", body("    if @ < 1 { p[0] = 1; }"), finite, ""),
    ("ternary", body("    p[0] = n > 0 ? @ : 0;"), int_in(*I32), ""),
    # indices and offsets
    ("ptr_index", body("    p[@] = 1;"), int_in(*I32), ""),
    ("ptr_offset", body("    let r = p + @;\n    r[0] = 1;"), int_in(*I32), ""),
    ("view_index", body("    x[@] = 1.0;"), int_in(*I32), ""),
    ("smem_index", body("    shared buf: f32[64];\n    buf[@] = 1.0;\n    sync();\n    q[0] = buf[0];"), int_in(0, 63), ""),
    ("smem_index2", body("    shared buf: f32[8, 8];\n    buf[1, @] = 1.0;\n    sync();\n    q[0] = buf[0, 0];"),
     int_in(0, 7), ""),
    ("ring_stage", body("    shared ring: f32[64] stages(4);\n    ring[@][0] = 1.0;\n    sync();\n    q[0] = ring[0][0];"),
     int_in(0, 3), ""),
    ("mbar_index", body("    mbarrier bars[4](128);\n    arrive(bars[@]);"), int_in(0, 3), ""),
    ("mapa_rank", body("    shared buf: f32[64];\n    let r = mapa(buf, @);\n    r[0] = 1.0;\n    cluster_sync();",
                       "128) cluster(2"), int_in(0, 1), ""),
    ("arrive_cta", body("    mbarrier bar(2);\n    cluster_sync();\n    elect { arrive(bar, cta = @); }\n"
                        "    cluster_sync();", "128) cluster(2"), int_in(0, 1), ""),
    # shared memory and mbarrier declarations
    ("smem_dim", body("    shared buf: f32[@];\n    buf[0] = 1.0;"), int_in(1, 58112), ""),
    ("smem_dim2", body("    shared buf: f32[64, @];\n    buf[0, 0] = 1.0;"), int_in(1, 907), ""),
    ("smem_dim5", body("    shared buf: u8[@, @, @, @, @];\n    buf[0, 0, 0, 0, 0] = 1 as u8;\n    p[0] = 1;"), int_in(1, 11), ""),
    ("smem_stages", body("    shared buf: f32[64] stages(@);\n    buf[0][0] = 1.0;"), int_in(1, 64), ""),  # stages(1): buf[0] is buf
    ("smem_swizzle", body("    shared buf: bf16[64, 64] swizzle(@);\n    buf[0, 0] = 1.0 as bf16;"),
     one_of(0, 32, 64, 128), ""),
    ("smem_align", body("    shared buf: f32[64] align(@);\n    buf[0] = 1.0;"), pow2_in(128, 4096), ""),
    ("mbar_count", body("    mbarrier bar(@);\n    p[0] = 1;"), int_in(1, 2**20 - 1), ""),
    ("mbar_array", body("    mbarrier bars[@](1);\n    p[0] = 1;"), int_in(1, 1024), ""),
    ("arrive_expect_bytes", body("    mbarrier bar(1);\n    elect { arrive_expect(bar, @); }"), int_in(0, 2**20 - 1), ""),
    ("expect_tx_bytes", body("    mbarrier bar(1);\n    elect { expect_tx(bar, @); arrive(bar); }"), int_in(0, 2**20 - 1), ""),
    ("named_barrier", body("    named_barrier nb(@);\n    sync(nb);"), lambda v: is_int(v) and 32 <= v <= 128 and v % 32 == 0, ""),
    ("parity", body("    mbarrier bar(128);\n    arrive(bar);\n    wait(bar, parity(@));"), one_of(0, 1), ""),
    ("columns_first", body("    let t = splat(1.5, [64, 64]);\n    let c = columns(t, @, 16);\n    p[0] = 1;"), int_in(0, 48), ""),
    ("columns_count", body("    let t = splat(1.5, [64, 64]);\n    let c = columns(t, 0, @);\n    p[0] = 1;"), int_in(1, 64), ""),
    ("mma_wait", body("    mma_wait(@);\n    p[0] = 1;"), int_in(0, 7), ""),
    ("stage_priority", "kernel k(p: f32*, n: i32) block(512) {\n    var acc = 0.0;\n    for k in 0 .. n {\n"
                       "        stage(\"a\", priority = @) { acc += p[k]; }\n        stage(\"b\", priority = 0) { acc += 1.0; }\n"
                       "    }\n    p[0] = acc;\n}\n", int_in(0, 3), "--target gfx942 --emit llvm"),
    # thread groups
    ("warp", body("    warp(@) { p[0] = 1; }"), int_in(0, 3), ""),
    ("warps_hi", body("    warps(0 .. @) { p[0] = 1; }"), int_in(1, 4), ""),
    ("warps_lo", body("    warps(@ .. 4) { p[0] = 1; }"), int_in(0, 3), ""),
    ("warpgroup", body("    warpgroup(@) { p[0] = 1; }", "256"), int_in(0, 1), ""),
    ("setmaxnreg", body("    warpgroup(0) setmaxnreg(@) { p[0] = 1; }\n    warpgroup(1) setmaxnreg(24) { p[1] = 1; }", "256"),
     lambda v: is_int(v) and 24 <= v <= 256 and v % 8 == 0, ""),
    # TMA and bulk copies
    ("tma_box", "kernel k(src: tma bf16[M, N] box[@, 64], M: i32, N: i32) block(128) {\n}\n", int_in(1, 256), ""),
    ("tma_coord", TMA_KERNEL % ("64", "", "@", ""), int_in(*I32), ""),
    ("tma_multicast", TMA_KERNEL % ("64", " cluster(2)", "0", ", multicast = @"), int_in(1, 3), ""),
    ("tma_wait", body("    elect { tma.commit(); tma.wait(@); }"), int_in(0, 63), ""),
    ("tma_copy_bytes", body("    shared buf: f32[256];\n    mbarrier full(1);\n    elect {\n"
                            "        tma.copy(buf, q, @, full);\n        arrive_expect(full, @);\n"
                            "        wait(full, parity(0));\n    }"),
     lambda v: is_int(v) and 16 <= v <= 1024 and v % 16 == 0, ""),
    ("tensor_dim", "kernel k(x: tensor f32[@]) block(128) {\n    x[0] = 1.0;\n}\n", int_in(*I32), ""),
    # -D values
    ("define_i32", "const C = 1;\n" + body("    p[0] = C;"), int_in(*I32), "-DC=@"),
    ("define_f32", "const C = 1.0;\n" + body("    q[0] = C;"), fits_float(F32_LIMIT), "-DC=@"),
    ("define_typed_u32", "const C: u32 = 1;\n" + body("    p[0] = C as i32;"), int_in(0, 2**32 - 1), "-DC=@"),
    ("define_tile", "const T = 64;\n" + body("    let t = load(x[0], [T]);\n    store(x[0], t);"), pow2_in(1, 2**19), "-DT=@"),
    ("define_block", "const B = 64;\n" + body("    p[0] = 1;", "B"), int_in(1, 1024), "-DB=@"),
    # static_assert over an overridden const: true for a positive value, a located error otherwise
    ("define_static_assert", "const C = 1;\nstatic_assert(C > 0, \"C must be positive\");\n" + body("    p[0] = 1;"),
     lambda v: finite(v) and v > 0, "-DC=@"),
]


def define_ok(v):
    """Whether -DNAME=v is a number of the language: otherwise an error without a position."""
    return v not in (NAN, INF, INFLIT) and not (isinstance(v, int) and not I64[0] <= v <= I64[1])


# Line ends and a byte order mark: the error must be located on its line whatever ends the lines.
LINES = b"kernel k(p: i32*) block(32) {\n    // c\n    /* a\n b */ p[0] = 1;\n    p[1] = x;\n}\n"
LINE_CASES = [
    ("lines_cr", LINES.replace(b"\n", b"\r")),
    ("lines_crlf", LINES.replace(b"\n", b"\r\n")),
    ("lines_bom", b"\xef\xbb\xbf" + LINES),
    ("lines_bom_crlf", b"\xef\xbb\xbf" + LINES.replace(b"\n", b"\r\n")),
    ("lines_mixed", LINES.replace(b"\n", b"\r", 2).replace(b"\n", b"\r\n", 1)),
]


def cases():
    for name, content in LINE_CASES:
        yield name, ".tile", content, None, r"^\S*%s\.tile:5:12: error: unknown name 'x'" % name, {"exit": 1}
    for name, prog, ok, args in TEMPLATES:
        if ok is None:
            continue
        for v in VALUES:
            tag = {NAN: "nan", INF: "inf", INFLIT: "1e400"}.get(v) if isinstance(v, str) else \
                ("m" + str(-v) if isinstance(v, int) and v < 0 else str(v)) if isinstance(v, int) else \
                ("m1e300" if v < 0 else "1e300")
            case = "%s_%s" % (name, tag)
            if "@" in args:   # the value goes on the command line
                src = prog
                argv = "%s " + args.replace("@", dtext(v)) + " --emit ptx -o /dev/null"
                if not define_ok(v):
                    yield case, ".tile", src.encode(), argv, r"tilec: error: -D", {"exit": 1, "located": False}
                    continue
            else:
                src = prog.replace("@", text(v))
                argv = "%s " + args + " -o /dev/null" if args else None
            legal = ok(v)
            yield case, ".tile", src.encode(), argv, None, {"exit": 0 if legal else 1}
