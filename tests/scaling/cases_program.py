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


CASES = [
    ("kernels_ptx", many_kernels, "%s --emit ptx -o /dev/null"),
    ("kernels_ir", many_kernels, "%s --emit ir -o /dev/null"),
]
BASE_N = {"kernels_ptx": 2000, "kernels_ir": 2000}
