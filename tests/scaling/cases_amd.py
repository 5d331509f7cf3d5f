# The AMD back end (gfx942): per-thread tile values of n / 256 lanes. Up to 64 lanes a value is an
# LLVM vector; beyond, a lane array in scratch memory that every op walks with one loop, so the code
# does not grow with the tile (codegen_amdgcn/amd_emit.c). The sizes run from the register form to
# lane arrays of 4096 lanes, the language's limit.


def elementwise(n):
    src = ("kernel k(x: tensor f32[n], y: tensor f32[n], n: i32) block(256) {\n"
           "    let base = block_id.x * %d;\n"
           "    let v = load(x[base], [%d]);\n"
           "    store(y[base], select(v > 0.0, v * 2.0 + 1.0, exp(v)));\n"
           "}\n" % (n, n))
    return ".tile", src.encode()


def loop_carried(n):
    src = ("kernel k(x: tensor f32[n], y: tensor bf16[n], n: i32, m: i32) block(256) {\n"
           "    let base = block_id.x * %d;\n"
           "    var a = load(x[base], [%d]);\n"
           "    var b = a * 0.5;\n"
           "    for i in 0 .. m {\n"
           "        let t = a;\n"
           "        a = b + iota([%d]) as f32;\n"
           "        b = t;\n"
           "    }\n"
           "    store(y[base], (a - b) as bf16);\n"
           "}\n" % (n, n, n))
    return ".tile", src.encode()


def mfma_acc(n):
    # an M x 128 accumulator (n = M * 128 elements): n / 256 f32 per thread
    rows = n // 128
    src = ("kernel k(a: tensor bf16[M, K], b: tensor bf16[N, K], c: tensor f32[M, N], M: i32, N: i32, K: i32) block(256) {\n"
           "    shared sa: bf16[%d, 16];\n"
           "    shared sb: bf16[128, 16];\n"
           "    var acc: f32[%d, 128] = 0.0;\n"
           "    for k0 in 0 .. K / 16 {\n"
           "        store(sa, load(a[0, k0 * 16], [%d, 16]));\n"
           "        store(sb, load(b[0, k0 * 16], [128, 16]));\n"
           "        sync();\n"
           "        acc = mma(sa, sb, acc, trans_b = true);\n"
           "        sync();\n"
           "    }\n"
           "    store(c[0, 0], acc);\n"
           "}\n" % (rows, rows, rows))
    return ".tile", src.encode()


CASES = [
    ("registers_hsaco", elementwise, "%s --target gfx942 --emit hsaco -o /dev/null"),
    ("elementwise_hsaco", elementwise, "%s --target gfx942 --emit hsaco -o /dev/null"),
    ("elementwise_O0", elementwise, "%s --target gfx942 -O0 --emit amdgcn -o /dev/null"),
    ("elementwise_limit_hsaco", elementwise, "%s --target gfx942 --emit hsaco -o /dev/null"),
    ("loop_carried_hsaco", loop_carried, "%s --target gfx942 --emit hsaco -o /dev/null"),
    ("mfma_acc_hsaco", mfma_acc, "%s --target gfx942 --emit hsaco -o /dev/null"),
]
# elementwise_limit: 2048 to 4096 values per thread, the most the language allows (IR_MAX_THREAD_VALUES)
BASE_N = {"registers_hsaco": 8192, "elementwise_hsaco": 131072, "elementwise_O0": 131072, "elementwise_limit_hsaco": 524288,
          "loop_carried_hsaco": 131072, "mfma_acc_hsaco": 32768}
