# The front end on large legal inputs: symbol tables, parameter and statement lists, long
# expressions within the depth limit, code that is checked but never runs, and the AST dump.
# Each input grows along one axis; everything else stays fixed. The base sizes take 0.3-0.8 s and
# tens of MB at -O2, well above the runner's noise floor.


def kernel(params, body):
    return ".tile", ("kernel k(%s) block(32) {\n%s}\n" % (params, body)).encode()


def many_lets(n):
    """n independent lets: one scope of n names."""
    return kernel("x: f32*, n: i32", "".join("    let v%d = n + %d;\n" % (i, i) for i in range(n)) +
                  "    x[0] = v%d as f32;\n" % (n - 1))


def let_chain(n):
    """n lets, each using the one before: a dependency chain n values long."""
    body = "    let v0 = n;\n" + "".join("    let v%d = v%d + %d;\n" % (i, i - 1, i) for i in range(1, n))
    return kernel("x: f32*, n: i32", body + "    x[0] = v%d as f32;\n" % (n - 1))


def shadowing(n):
    """n nested-scope redeclarations of the same few names: lookups must not walk the scopes."""
    body = "".join("    {\n        let a = n + %d;\n        let b = a * 2;\n        x[%d] = b as f32;\n    }\n" % (i, i % 64)
                   for i in range(n))
    return kernel("x: f32*, n: i32", body)


def many_params(n):
    """n scalar parameters."""
    params = ", ".join("p%d: i32" % i for i in range(n))
    return kernel("x: f32*, " + params, "    x[0] = (p0 + p%d) as f32;\n" % (n - 1))


def long_chains(n):
    """n terms of `+` in expressions of 900 terms each (under the depth limit of 1000)."""
    stmts, left, i = [], n, 0
    while left > 0:
        k = min(900, left)
        stmts.append("    x[%d] = (n%s) as f32;\n" % (i % 64, "".join(" + %d" % j for j in range(k))))
        left -= k
        i += 1
    return kernel("x: f32*, n: i32", "".join(stmts))


def many_consts(n):
    """n top-level consts, each defined from the one before, and local consts."""
    out = ["const C0 = 1;\n"] + ["const C%d = C%d + 1;\n" % (i, i - 1) for i in range(1, n)]
    body = "".join("    const L%d = C%d * 2;\n" % (i, i) for i in range(0, n, 4))
    out.append("kernel k(x: i32*) block(32) {\n%s    x[0] = C%d;\n}\n" % (body, n - 1))
    return ".tile", "".join(out).encode()


def many_vars_in_loop(n):
    """n vars, all assigned in one loop: n carried values found by one scan."""
    decl = "".join("    var v%d = %d;\n" % (i, i) for i in range(n))
    body = "".join("        v%d += i;\n" % i for i in range(n))
    use = "".join("    x[%d] = v%d;\n" % (i % 64, i) for i in range(0, n, max(1, n // 64)))
    return kernel("x: i32*, n: i32", decl + "    for i in 0 .. n {\n" + body + "    }\n" + use)


def dead_code(n):
    """n lets whose right sides are checked but never run (false && ...): no copy of the scope each."""
    body = "".join("    let b%d = false && x[%d] > 0.0;\n" % (i, i % 64) for i in range(n))
    return kernel("x: f32*, n: i32", body + "    if b%d { x[0] = 1.0; }\n" % (n - 1))


def many_ifs(n):
    """n if/else-if chains of 8 arms that assign two vars."""
    body = "    var a = 0;\n    var b = 0;\n"
    for i in range(n):
        arms = ["if n == %d { a = a + %d; }" % (8 * i + j, j) for j in range(7)]
        body += "    " + " else ".join(arms) + " else { b = b + 1; }\n"
    return kernel("x: i32*, n: i32", body + "    x[0] = a + b;\n")


def ast_dump(n):
    """The AST text of n statements, each an expression 100 levels deep."""
    body = "".join("    x[%d] = (n%s) as f32;\n" % (i % 64, " + n" * 100) for i in range(n))
    return kernel("x: f32*, n: i32", body)


def fn_calls(n):
    """n calls of a small fn, each inlined: n copies of its body (in kernels of 4000 calls, each
    within the per-kernel bound on inlined code)."""
    fn = "fn mix(a: i32, b: i32) -> i32 {\n    let t = a * 3 + b;\n    return t ^ (t >> 2);\n}\n"
    kernels = []
    for k in range(0, n, 4000):
        body = "".join("    x[%d] = mix(n, %d) as f32;\n" % (i % 64, i) for i in range(k, min(n, k + 4000)))
        kernels.append("kernel k%d(x: f32*, n: i32) block(32) {\n%s}\n" % (k, body))
    return ".tile", (fn + "".join(kernels)).encode()


def unrolled(n):
    """`for const` loops of n copies of a small body in all (10,000 in each kernel, within the
    per-kernel bound on unrolled code)."""
    kernels = []
    for k in range(0, n, 10000):
        body = "    for const i in %d .. %d {\n        x[i %% 64] = (n * i) as f32;\n    }\n" % (k, min(n, k + 10000))
        kernels.append("kernel k%d(x: f32*, n: i32) block(32) {\n%s}\n" % (k, body))
    return ".tile", "".join(kernels).encode()


CASES = [
    ("lets", many_lets, "%s --emit ptx -o /dev/null"),
    ("let_chain", let_chain, "%s --emit ptx -o /dev/null"),
    ("shadowing", shadowing, "%s --emit ptx -o /dev/null"),
    ("params", many_params, "%s --emit ptx -o /dev/null"),
    ("long_chains", long_chains, "%s --emit ptx -o /dev/null"),
    ("consts", many_consts, "%s --emit ptx -o /dev/null"),
    ("vars_in_loop", many_vars_in_loop, "%s --emit ir -o /dev/null"),
    ("dead_code", dead_code, "%s --emit ptx -o /dev/null"),
    ("ifs", many_ifs, "%s --emit ir -o /dev/null"),
    ("ast_dump", ast_dump, "%s --emit ast -o /dev/null"),
    ("fn_calls", fn_calls, "%s --emit ptx -o /dev/null"),
    ("unrolled", unrolled, "%s --emit ptx -o /dev/null"),
]
BASE_N = {
    "lets": 32000,
    "let_chain": 32000,
    "shadowing": 8000,
    "params": 40000,
    "long_chains": 40000,
    "consts": 32000,
    "vars_in_loop": 16000,
    "dead_code": 16000,
    "ifs": 2000,
    "ast_dump": 600,
    "fn_calls": 8000,
    "unrolled": 20000,
}
