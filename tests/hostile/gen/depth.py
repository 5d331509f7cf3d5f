"""Deep nesting of every construct of the language, past the front end's limits.

Each construct is a function of a size (how many levels) giving a .tile program. cases() makes
each one far past its limit (20,000 levels): tilec must stop with a located
`expression too deep (more than 1000 levels)`, `nesting too deep (more than 256 levels)` or
`brackets nested more than 256 deep`, never run out of stack. The same constructs at the limit
compile (tests/lit/frontend/depth_limits.test runs this file as a script: depth.py NAME SIZE).
"""
import sys

EXPR = r"expression too deep \(more than 1000 levels\)"
NEST = r"nesting too deep \(more than 256 levels\)"
BRACKETS = r"brackets nested more than 256 deep"

HEAD = "kernel k(x: i32*, f: f32*, n: i32) block(32) {\n    let b = n > 0;\n"


def kernel(body):
    return HEAD + body + "\n}\n"


def chain(op, operand):
    """A left-associative chain of `op` with size operators."""
    return lambda size: kernel("    let r = %s;\n    x[0] = 0;" % (operand + (" %s %s" % (op, operand)) * size))


BINARY = {
    "oror": ("||", "b"), "andand": ("&&", "b"), "or": ("|", "n"), "xor": ("^", "n"), "and": ("&", "n"),
    "eq": ("==", "b"), "ne": ("!=", "b"), "lt": ("<", "n"), "le": ("<=", "n"), "gt": (">", "n"),
    "ge": (">=", "n"), "shl": ("<<", "n"), "shr": (">>", "n"), "add": ("+", "n"), "sub": ("-", "n"),
    "mul": ("*", "n"), "div": ("/", "n"), "rem": ("%", "n"),
}

# name -> (make(size), the message past the limit)
CONSTRUCTS = {"bin_" + k: (chain(op, operand), EXPR) for k, (op, operand) in BINARY.items()}
CONSTRUCTS.update({
    "neg": (lambda size: kernel("    let r = %sn;" % ("- " * size)), EXPR),
    "not": (lambda size: kernel("    let r = %sb;" % ("!" * size)), EXPR),
    "tilde": (lambda size: kernel("    let r = %sn;" % ("~" * size)), EXPR),
    "unary_mixed": (lambda size: kernel("    let r = %sn;" % ("-~" * size)[:size]), EXPR),
    "as": (lambda size: kernel("    let r = n%s;" % (" as i32" * size)), EXPR),
    "ternary_else": (lambda size: kernel("    let r = %s0;" % "".join(
        "n > %d ? %d : " % (i, i) for i in range(size))), EXPR),
    "ternary_then": (lambda size: kernel("    let r = %s1%s;" % ("b ? " * size, " : 2" * size)), EXPR),
    "index_chain": (lambda size: kernel("    let r = x%s;" % ("[0]" * size)), EXPR),
    "member_chain": (lambda size: kernel("    let r = n%s;" % (".x" * size)), EXPR),
    "method_chain": (lambda size: kernel("    let p = parity(0);\n    let r = p%s;" % (".next()" * size)), EXPR),
    "assign_rhs": (lambda size: kernel("    var v = 0;\n    v += n%s;" % (" + n" * size)), EXPR),
    "store_rhs": (lambda size: kernel("    x[0] = n%s;" % (" * n" * size)), EXPR),
    "if_cond": (lambda size: kernel("    if b%s { x[0] = 1; }" % (" && b" * size)), EXPR),
    "call_arg": (lambda size: kernel("    x[0] = min(n%s, 1);" % (" + n" * size)), EXPR),
    "named_arg": (lambda size: kernel("    mbarrier m(1);\n    arrive(m, count = 1%s);" % (" + 1" * size)), EXPR),
    "const_item": (lambda size: "const C = 1%s;\n" % (" + 1" * size) + kernel("    x[0] = C;"), EXPR),
    "local_const": (lambda size: kernel("    const C = 1%s;\n    x[0] = C;" % (" + 1" * size)), EXPR),
    "launch_dim": (lambda size: "kernel k(x: i32*) block(1%s) {\n    x[0] = 0;\n}\n" % (" * 1" * size), EXPR),
    "tile_dim": (lambda size: kernel("    let t: f32[1%s] = 0.0;" % (" * 1" * size)), EXPR),
    "loop_bound": (lambda size: kernel("    for i in 0 .. n%s {\n        x[i] = i;\n    }" % (" - 1" * size)), EXPR),
    # brackets: at most 256 open at once, the kernel's braces included
    "parens": (lambda size: kernel("    let r = %sn%s;" % ("(" * size, ")" * size)), BRACKETS),
    "call_nested": (lambda size: kernel("    let r = %sn%s;" % ("min(" * size, ", 1)" * size)), BRACKETS),
    "index_nested": (lambda size: kernel("    let r = %s0%s;" % ("x[" * size, "]" * size)), BRACKETS),
    "array_nested": (lambda size: kernel("    let r = load(f[0], %s4%s);" % ("[" * size, "]" * size)), BRACKETS),
    "blocks": (lambda size: kernel("%s x[0] = 1; %s" % ("{ " * size, "} " * size)), BRACKETS),
    "if_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("if b { " * size, "} " * size)), BRACKETS),
    "for_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("for i in 0 .. n { " * size, "} " * size)), BRACKETS),
    "while_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("while b { " * size, "} " * size)), BRACKETS),
    "loop_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("loop { " * size, "break; } " * size)), BRACKETS),
    "elect_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("elect { " * size, "} " * size)), BRACKETS),
    "warp_nested": (lambda size: kernel("%s x[0] = 1; %s" % ("warp(0) { " * size, "} " * size)), BRACKETS),
    "stage_nested": (lambda size: kernel("%s x[0] = 1; %s" % ('stage("s") { ' * size, "} " * size)), BRACKETS),
    # nesting without brackets: regions inside regions
    "else_if": (lambda size: kernel("    " + " else ".join("if n == %d { x[0] = %d; }" % (i, i) for i in range(size)) +
                                    " else { x[0] = -1; }"), NEST),
    "else_if_in_ifs": (lambda size: kernel("%s%s%s" % ("if b { " * 128, " else ".join(
        "if n == %d { x[0] = %d; }" % (i, i) for i in range(size)), " }" * 128)), NEST),
    # a ?: whose operands load evaluates them in regions: 300 of them nest too deep; 20,000
    # overflow the expression limit first (the parser's stack holds them all)
    "ternary_loads": (lambda size: kernel("    let r = %s0;" % "".join(
        "n > %d ? x[%d] : " % (i, i) for i in range(size))), NEST),
})


def cases():
    for name, (make, expect) in sorted(CONSTRUCTS.items()):
        if name == "ternary_loads":
            yield name + "_300", ".tile", make(300).encode(), None, expect
            expect = EXPR
        yield name, ".tile", make(20000).encode(), None, expect


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CONSTRUCTS:
        sys.exit("usage: depth.py CONSTRUCT SIZE\nconstructs: " + " ".join(sorted(CONSTRUCTS)))
    sys.stdout.write(CONSTRUCTS[sys.argv[1]][0](int(sys.argv[2])))
