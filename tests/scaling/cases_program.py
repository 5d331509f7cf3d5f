# Whole programs: many kernels in one file, compiled for each back end's text output.


def many_kernels(n):
    out = ["const BLOCK = 128;\n"]
    for k in range(n):
        out.append("kernel k%d(a: f32*, b: f32*, c: f32*, n: i32) block(BLOCK) {\n"
                   "    let i = block_id.x * BLOCK + thread_id.x;\n"
                   "    if i < n {\n"
                   "        c[i] = a[i] * %d.0 + b[i];\n"
                   "    }\n"
                   "}\n" % (k, k % 7 + 1))
    return ".tile", "".join(out).encode()


def pointer_params(n):
    # every pointer and TMA parameter's signature (tensor rank, TMA dims) comes from one walk
    params = ", ".join("p%d: tensor f32[n]" % i if i % 2 else "p%d: f32*" % i for i in range(n))
    body = "".join("    p%d[thread_id.x] = 1.0;\n" % i for i in range(0, n, 2))
    return ".tile", ("kernel k(%s, n: i32) block(32) {\n%s}\n" % (params, body)).encode()


CASES = [
    ("kernels_ptx", many_kernels, "%s --emit ptx -o /dev/null"),
    ("kernels_ir", many_kernels, "%s --emit ir -o /dev/null"),
    ("pointer_params", pointer_params, "%s --emit ptx -o /dev/null"),
]
BASE_N = {"kernels_ptx": 2000, "kernels_ir": 2000, "pointer_params": 4000}
