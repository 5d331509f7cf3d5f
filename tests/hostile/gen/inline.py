"""fn calls and `for const` loops that would expand past the front end's bounds.

Inlining and unrolling copy code, so a small file can ask for an exponential amount of it: each
case must stop with its located error (docs/LANGUAGE.md sections 23 and 24), in time and memory
bounded by the limits, never run out of stack or memory.
"""

SIZE = r"passes the limit of 262144 AST nodes of inlined and unrolled code in one kernel"
HEIGHT = r"fn calls nested too deep: inlining 'g\d+' here makes the kernel body and the bodies being inlined more than 1024 levels deep"
KERNEL = "kernel k(x: i32*, n: i32) block(32) {\n%s\n}\n"


def exp_chain(depth):
    """f0 calls f1 twice, f1 calls f2 twice, ...: 2^depth copies of the last body."""
    fns = "".join("fn g%d(x: i32) -> i32 {\n    return g%d(x) + g%d(x + 1);\n}\n" % (i, i + 1, i + 1)
                  for i in range(depth))
    fns += "fn g%d(x: i32) -> i32 {\n    return x * 3;\n}\n" % depth
    return fns + KERNEL % "    x[0] = g0(n);"


def long_chain(depth):
    """f0 calls f1 calls f2 ...: one copy each, but the walk would recurse through every body."""
    fns = "".join("fn g%d(x: i32) -> i32 {\n    return g%d(x) + 1;\n}\n" % (i, i + 1) for i in range(depth))
    fns += "fn g%d(x: i32) -> i32 {\n    return x;\n}\n" % depth
    return fns + KERNEL % "    x[0] = g0(n);"


def long_cycle(length):
    fns = "".join("fn g%d(x: i32) -> i32 {\n    return g%d(x);\n}\n" % (i, (i + 1) % length) for i in range(length))
    return fns + KERNEL % "    x[0] = g0(n);"


def nested_unroll(levels):
    """for const loops of 1000 copies inside each other."""
    body = "x[0] = n;"
    for i in range(levels):
        body = "for const k%d in 0 .. 1000 { %s }" % (i, body)
    return KERNEL % ("    " + body)


def unroll_calls(copies):
    """An unrolled loop whose body calls a fn of a large body: the calls' copies count too."""
    fn = "fn big(x: i32) -> i32 {\n    return x%s;\n}\n" % (" + x" * 500)
    return fn + KERNEL % ("    for const i in 0 .. %d { x[i] = big(n); }" % copies)


def nested_regions(depth):
    """A fn whose body nests 200 ifs, called inside 100 nested ifs: 300 IR regions deep."""
    fn = "fn deep(x: i32*, n: i32) {\n%s x[0] = 1; %s\n}\n" % ("if n > 0 { " * depth, "} " * depth)
    return fn + KERNEL % ("%s deep(x, n); %s" % ("if n > 1 { " * 100, "} " * 100))


def cases():
    yield "exp_chain", ".tile", exp_chain(40).encode(), None, SIZE
    yield "long_chain", ".tile", long_chain(5000).encode(), None, HEIGHT
    yield "long_cycle", ".tile", long_cycle(100).encode(), None, \
        r"recursive call of fn 'g0' \(g0 -> g1 -> g2 -> g3 -> g4 -> g5 -> \.\.\. \(88 more\) -> g94 -> .* -> g99 -> g0\)"
    yield "self_call", ".tile", (
        "fn f(x: i32) -> i32 {\n    return f(x);\n}\n" + KERNEL % "    x[0] = f(n);").encode(), None, \
        r"recursive call of fn 'f' \(f -> f\)"
    yield "nested_unroll", ".tile", nested_unroll(4).encode(), None, r"unrolling this loop \(1000 copies of \d+ AST nodes\) " + SIZE
    yield "unroll_huge", ".tile", (KERNEL % "    for const i in 0 .. 2147483647 { x[0] = i; }").encode(), None, \
        r"unrolling this loop \(2147483647 copies of \d+ AST nodes\) " + SIZE
    yield "unroll_calls", ".tile", unroll_calls(1000).encode(), None, r"inlining fn 'big' here " + SIZE
    yield "nested_regions", ".tile", nested_regions(200).encode(), None, \
        r"nesting too deep \(more than 256 levels\) once fn 'deep' is inlined here"
