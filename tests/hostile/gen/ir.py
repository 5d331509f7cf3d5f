"""Malformed textual IR for every op of ir/ops.def, and truncations of the IR lit tests.

The ops, their operand and result kind columns and their region counts are read from ir/ops.def,
and their attributes from ir/attrs.def, so a new op or attribute is covered without touching this
file. For each op a well-kinded instance is built (operands of the kinds its row asks for, from a
pool of values of every kind; attributes of its rows; a `yield` in each region) and then broken:

  no operands, one operand too many, each operand of a kind its row does not allow, no attributes,
  an unknown attribute, each attribute of the wrong type, no result, one result too many, each
  result of a wrong type, an undefined operand, an operand used before its definition, the op in
  each kind of region (kernel body, `if`, `for`, `warps`, `elect`, `stage`) and in a lowered
  module, and the op's first line cut after each of its words and inside its last one.

Every case ends its kernel with a sentinel the verifier rejects (an `add` of an i32 and an f32),
so a variant that happens to be well formed still fails: what each case checks is that tilec
exits 1 with a located error and no signal or sanitizer report, and, where the variant's own
error is certain, that its message names it (the EXPECT regex). No case writes loc(...): the
errors point at the case file's own lines.

The lit truncations cut every tests/lit/**/*.ir file at points inside a kernel (an unclosed '{'),
where the IR can only be incomplete.
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# ---- the tables ----


def read_ops():
    text = open(os.path.join(ROOT, "ir", "ops.def")).read()
    ops = []
    for m in re.finditer(r'^OP\((\w+),\s*"([a-z_0-9]+)",\s*([^,]+),\s*([^,]+),\s*(\d+),\s*([^,]+),\s*(T_\w+),'
                         r'\s*"([^"]*)",\s*"([^"]*)"\)', text, re.M):
        ops.append({"enum": m.group(1), "name": m.group(2), "nregions": int(m.group(5)),
                    "props": m.group(6), "operands": decode(m.group(8)), "results": decode(m.group(9))})
    if len(ops) < 100:
        raise SystemExit("gen/ir.py: read only %d ops from ops.def" % len(ops))
    return ops


def read_attrs():
    text = open(os.path.join(ROOT, "ir", "attrs.def")).read()
    attrs = {}
    for m in re.finditer(r'^ATTR\((\w+),\s*(\w+),\s*(AT_\w+),\s*([^,]+),\s*([^)]*)\)', text, re.M):
        attrs.setdefault(m.group(1), []).append((m.group(2), m.group(3)))
    return attrs


def decode(col):
    """A kind column: ([(role, [kinds], suffix)], min, max) with max None for no limit."""
    pos, lo, hi = [], 0, 0
    for word in col.split():
        suffix = word[-1] if word[-1] in "*+?" else ""
        word = word.rstrip("*+?")
        role, _, kinds = word.rpartition(":")
        pos.append((role, kinds.split("|"), suffix))
        lo += 0 if suffix in ("*", "?") else 1
        hi = None if suffix in ("*", "+") else hi + 1
    return pos, lo, hi


# ---- the value pool: a value and a type of every kind ----

VALUES = {"i1": "%c", "i32": "%n", "i64": "%l", "u64": "%u", "scalar": "%f", "elt": "%f", "ptr": "%p",
          "view": "%v", "tile": "%t", "vec": "%w", "smem": "%s", "mbar": "%b", "tma": "%x", "parity": "%ph",
          "tmem": "%tm", "any": "%n"}
TYPES = {"i1": "i1", "i32": "i32", "i64": "i64", "u64": "u64", "scalar": "f32", "elt": "f32", "ptr": "ptr<f32>",
         "view": "view<2xf32>", "tile": "tile<8x8xf32>", "vec": "vec<8xf32>", "smem": "smem<8x8xf32>", "mbar": "mbar",
         "tma": "tma<8x8xf32>", "tmem": "tmem<128x64xf32>", "parity": "parity", "any": "i32"}
# the kinds each pool value (or type) has, as the verifier's ir_type_in_kinds sees them
KINDS_OF = {"%c": {"i1", "scalar", "elt"}, "%n": {"i32", "scalar", "elt"}, "%f": {"scalar", "elt"},
            "%p": {"ptr"}, "%b": {"mbar"}, "%ph": {"parity"}, "%s": {"smem"}, "%x": {"tma"}, "%tm": {"tmem"}}
WRONG_VALUES = ["%b", "%p", "%ph", "%n", "%f"]
TYPE_KINDS = {"mbar": {"mbar"}, "ptr<f32>": {"ptr"}, "parity": {"parity"}, "i32": {"i32", "scalar", "elt"},
              "f32": {"scalar", "elt"}}
WRONG_TYPES = ["mbar", "ptr<f32>", "parity", "i32", "f32"]

ATTR_VALUES = {"dim": "0", "value": "1", "pred": '"lt"', "vec": "1", "threads": "128", "align": "128",
               "offset": "0", "count": "1", "scope": '"cta"', "release": '"cta"', "cache": '"evict_first"',
               "cta_group": "1", "pending": "0", "col": "0", "lo": "0", "hi": "4", "id": "1", "first": "0", "sig_op": '"set"',
               "cmp": '"eq"', "label": '"s0"', "priority": "1", "prio": "1", "stage": '"s0"'}
TYPE_VALUES = {"AT_INT": "1", "AT_BOOL": "0", "AT_NUM": "1", "AT_STR": '"x"', "AT_INTS": "[64, 64]"}
ILL_VALUES = {"AT_INT": '"str"', "AT_BOOL": "2", "AT_NUM": '"str"', "AT_STR": "7", "AT_INTS": "1.5"}

SENTINEL = "  %sentinel = add %n, %f : i32\n"
SENTINEL_RX = r"verifier: 'add' operand types differ: i32 vs f32"


def module(op_text, lowered=False, amd=False, placement="top"):
    """A module whose kernel holds the pool, the op (in a placement) and the sentinel."""
    head = 'module "h.tile"%s\n\n' % (' target "gfx942"' if amd else "")
    body = ["  tma_shape %x, %n, %n\n",
            "  %s = shared_alloc {align = 128} : smem<8x8xf32>\n",
            "  %b = mbar_alloc {count = 1} : mbar\n",
            "  %tm = tmem_alloc {col = 0} : tmem<128x64xf32>\n",
            "  %ph = const {value = 0} : parity\n",
            "  %v = make_view %p, %n, %n : view<2xf32>\n",
            "  %t = splat %f : tile<8x8xf32>\n"]
    if lowered:   # a vec value makes the module lowered IR (the tile is then an error of its own)
        body.append("  %w = splat %f : vec<8xf32>\n")
    body.append(place(op_text, placement))
    body.append(SENTINEL)
    return (head + "kernel @k(%c: i1, %n: i32, %l: i64, %u: u64, %f: f32, %p: ptr<f32>, %x: tma<8x8xf32>) "
            "block(128, 1, 1) cluster(1, 1, 1) {\n" + "".join(body) + "}\n").encode()


def indent(text, n):
    return "".join(" " * n + line + "\n" for line in text.splitlines())


def place(op_text, placement):
    """op_text (lines without indentation, a terminator last if it is one) in a region kind."""
    term = re.match(r"^(yield|break|continue|return)\b", op_text.splitlines()[-1].strip()) is not None
    inner = op_text + ("" if term else "\nyield")
    if placement == "top":
        return indent(op_text, 2)
    if placement == "if":
        return "  if %c {\n" + indent(inner, 4) + "  } else {\n    yield\n  }\n"
    if placement == "for":
        return "  for %n, %n, %n {\n  ^(%outer: i32):\n" + indent(inner, 4) + "  }\n"
    if placement == "warps":
        return "  warps {lo = 0, hi = 4} {\n" + indent(inner, 4) + "  }\n"
    if placement == "elect":
        return "  warps {lo = 0, hi = 1} {\n    elect {\n" + indent(inner, 6) + "    }\n    yield\n  }\n"
    if placement == "stage":
        return "  stage {label = \"s\"} {\n" + indent(inner, 4) + "  }\n"
    raise ValueError(placement)


def operand_list(pos):
    """Values for the least count of a column: each required position's first kind."""
    return [VALUES[kinds[0]] for role, kinds, suffix in pos if suffix not in ("*", "?")]


def kinds_at(pos, i):
    return pos[i][1] if i < len(pos) else pos[-1][1]


def render(op, results=None, operands=None, attrs=None, types=None, regions=None):
    """One op's text: `[results =] name [operands] [{attrs}] [: types] [regions]`."""
    s = ""
    if results:
        s += ", ".join(results) + " = "
    s += op["name"]
    if operands:
        s += " " + ", ".join(operands)
    if attrs:
        s += " {" + ", ".join("%s = %s" % a for a in attrs) + "}"
    if types:
        s += " : " + ", ".join(types)
    if regions is None:
        regions = op["nregions"]
    for r in range(regions):
        s += (" else {\n" if r else " {\n")
        if op["name"] == "for":
            s += "^(%iv: i32):\n"
        s += "  yield%s\n}" % (" %n" * min(len(results or []), 1))
    return s


def baseline(op, attrs_of):
    opos, olo, ohi = op["operands"]
    rpos, rlo, rhi = op["results"]
    operands = operand_list(opos)
    rtypes = [TYPES[kinds[0]] for role, kinds, suffix in rpos if suffix not in ("*", "?")]
    if op["name"] in ("if", "stage"):   # a structured op yielding one value (a loop would need inits)
        rtypes = ["i32"]
    results = ["%%r%d" % i for i in range(len(rtypes))]
    attrs = [(n, ATTR_VALUES.get(n, TYPE_VALUES[t])) for n, t in attrs_of.get(op["enum"], [])]
    return results, operands, attrs, rtypes


def op_cases(op, attrs_of):
    name, lowered = op["name"], "IR_PLOWERED" in op["props"]
    amd = op["enum"] in ("STAGE", "AMD_SETPRIO", "AMD_STAGE_BARRIER", "AMD_COND_BARRIER")
    opos, olo, ohi = op["operands"]
    rpos, rlo, rhi = op["results"]
    results, operands, attrs, rtypes = baseline(op, attrs_of)
    quoted = re.escape(name)

    def case(tag, text, expect=None, placement="top", low=lowered):
        return ("%s_%s" % (name, tag), ".ir", module(text, low, amd, placement), None,
                [SENTINEL_RX] if expect is None else [expect])

    base = render(op, results, operands, attrs, rtypes)
    for placement in ("top", "if", "for", "warps", "elect", "stage"):
        yield case("in_" + placement, base, placement=placement)
    if not lowered:
        yield case("in_lowered_module", base, low=True)
    if olo > 0:
        yield case("no_operands", render(op, results, [], attrs, rtypes),
                   r"op '%s' expects [^\n]*operand" % quoted)
    if ohi is not None:
        extra = operands + ["%n"] * (ohi + 1 - len(operands))
        yield case("too_many_operands", render(op, results, extra, attrs, rtypes),
                   r"op '%s' expects [^\n]*operand" % quoted)
    for i in range(len(operands)):
        allowed = set(kinds_at(opos, i))
        wrong = next((v for v in WRONG_VALUES if "any" not in allowed and not (KINDS_OF[v] & allowed)), None)
        if wrong:
            bad = operands[:i] + [wrong] + operands[i + 1:]
            yield case("operand%d_kind" % i, render(op, results, bad, attrs, rtypes),
                       r"'%s' operand %d[^\n]* must be " % (quoted, i))
    if operands:
        yield case("undefined_operand", render(op, results, ["%nosuch"] + operands[1:], attrs, rtypes),
                   r"use of undefined value '%nosuch'")
        # the operand is defined only after the op
        yield case("use_before_def", render(op, results, ["%later"] + operands[1:], attrs, rtypes) +
                   "\n%later = const {value = 1} : i32", r"use of undefined value '%later'")
    if results and op["nregions"]:
        # the op's own result used inside its region
        text = render(op, results, operands, attrs, rtypes, regions=0)
        for r in range(op["nregions"]):
            text += (" else {\n" if r else " {\n") + ("^(%iv: i32):\n" if name == "for" else "") + \
                    "  %%own = add %s, %s : i32\n  yield %%own\n}" % (results[0], results[0])
        yield case("use_own_result", text, r"used before its definition is complete")
    if attrs:
        yield case("no_attributes", render(op, results, operands, [], rtypes))
        for n, t in attrs_of.get(op["enum"], []):
            ill = [(a, ILL_VALUES[t] if a == n else v) for a, v in attrs]
            yield case("attr_%s_type" % n, render(op, results, operands, ill, rtypes),
                       r"'%s' attribute '%s' must be " % (quoted, n))
        yield case("duplicate_attribute", render(op, results, operands, attrs + [attrs[0]], rtypes),
                   r"duplicate attribute '%s'" % re.escape(attrs[0][0]))
    yield case("unknown_attribute", render(op, results, operands, attrs + [("bogus", "1")], rtypes),
               r"'%s' has no attribute 'bogus'" % quoted)
    if rlo > 0:
        yield case("no_result", render(op, [], operands, attrs, []), r"op '%s' expects [^\n]*result" % quoted)
        for i in range(len(rtypes)):
            allowed = set(kinds_at(rpos, i))
            wrong = next((t for t in WRONG_TYPES if "any" not in allowed and not (TYPE_KINDS[t] & allowed)), None)
            if wrong:
                bad = rtypes[:i] + [wrong] + rtypes[i + 1:]
                yield case("result%d_kind" % i, render(op, results, operands, attrs, bad),
                           r"'%s' result %d[^\n]* must be " % (quoted, i))
        yield case("result_without_type", render(op, results, operands, attrs, []),
                   r"expected ':' and the result types")
    if rhi is not None:
        more = results + ["%%r%d" % i for i in range(len(results), rhi + 1)]
        yield case("too_many_results", render(op, more, operands, attrs, rtypes + ["i32"] * (len(more) - len(rtypes))),
                   r"op '%s' expects [^\n]*result" % quoted)
    # the op's first line cut after each word, and inside its last word
    first = base.splitlines()[0]
    words = first.split(" ")
    cuts = {" ".join(words[:k]) for k in range(1, len(words))}
    if len(first) > 2:
        cuts.add(first[:-1])
        cuts.add(first[:len(first) // 2])
    for k, cut in enumerate(sorted(cuts)):
        rest = "\n".join(base.splitlines()[1:])
        yield case("cut%d" % k, cut + ("\n" + rest if rest else ""), r": error: ")
    # the file itself ends inside the op
    trunc = module(base, lowered, amd)
    at = trunc.find(first.encode())
    if at > 0:
        end = at + len(first) // 2
        yield ("%s_eof" % name, ".ir", trunc[:end], None, [r"error: "])


# ---- truncations of the lit tests' IR ----

def open_braces(data):
    """Byte offsets where the IR text so far has an unclosed '{' (outside strings and comments)."""
    depth, i, n, out = 0, 0, len(data), []
    in_str = in_comment = False
    while i < n:
        ch = data[i:i + 1]
        if in_comment:
            if ch == b"\n":
                in_comment = False
        elif in_str:
            if ch == b"\\":
                i += 1
            elif ch == b'"' or ch == b"\n":
                in_str = False
        elif ch == b'"':
            in_str = True
        elif data[i:i + 2] == b"//":
            in_comment = True
        elif ch == b"{":
            depth += 1
        elif ch == b"}":
            depth -= 1
        i += 1
        if depth > 0:
            out.append(i)
    return out


def lit_truncations():
    lit = os.path.join(ROOT, "tests", "lit")
    for dirpath, dirnames, filenames in os.walk(lit):
        dirnames.sort()
        for fn in sorted(filenames):
            if not fn.endswith(".ir"):
                continue
            path = os.path.join(dirpath, fn)
            data = open(path, "rb").read()
            inside = open_braces(data)
            if not inside:
                continue
            picks = sorted({inside[0], inside[len(inside) // 3], inside[len(inside) // 2], inside[(2 * len(inside)) // 3],
                            inside[-1]})
            rel = os.path.relpath(path, lit).replace(os.sep, "_")[:-3]
            for cut in picks:
                yield ("lit_%s_at%d" % (rel, cut), ".ir", data[:cut], None, None)


# ---- sizes that were quadratic: each must fail (located) well within the time limit ----

HEAD = 'module "big.tile"\n\n'
KHEAD = "kernel @k%s(%%n: i32, %%f: f32) block(128, 1, 1) cluster(1, 1, 1) {\n"


def big_cases():
    # one op with 200,000 attributes (the parser's duplicate check and append were linear per attribute)
    attrs = ", ".join("a%d = %d" % (i, i) for i in range(200000))
    yield ("big_attributes", ".ir", (HEAD + KHEAD % "" + "  %%x = const {value = 1, %s} : i32\n}\n" % attrs).encode(),
           None, [r"'const' has no attribute 'a0'"])
    # 100,000 kernel parameters (the parameter array was copied for each one)
    params = ", ".join("%%a%d: i32" % i for i in range(100000))
    yield ("big_params", ".ir", (HEAD + "kernel @k(%s, %%f: f32) block(1, 1, 1) cluster(1, 1, 1) {\n" % params +
                                 "  %s = add %a7, %f : i32\n}\n").encode(), None, [SENTINEL_RX])
    # a for carrying 50,000 values (the block arguments were copied for each one)
    n = 50000
    text = HEAD + KHEAD % "" + "".join("  %%i%d = const {value = %d} : i32\n" % (i, i) for i in range(n))
    text += "  %s = for %%n, %%n, %%n, %s : %s {\n" % (", ".join("%%r%d" % i for i in range(n)),
                                                      ", ".join("%%i%d" % i for i in range(n)), ", ".join(["i32"] * n))
    text += "  ^(%%iv: i32, %s):\n    yield %s\n  }\n" % (", ".join("%%c%d: i32" % i for i in range(n)),
                                                          ", ".join("%%c%d" % i for i in range(n)))
    yield ("big_carried", ".ir", (text + SENTINEL + "}\n").encode(), None, [SENTINEL_RX])
    # 100,000 distinct types (interning scanned every type made so far)
    text = HEAD + KHEAD % "" + "".join("  %%v%d = splat %%f : vec<%dxf32>\n" % (i, i + 1) for i in range(100000))
    yield ("big_types", ".ir", (text + SENTINEL + "}\n").encode(), None, [SENTINEL_RX])
    # a kernel of 200,000 values, then 20,000 small kernels (the name map was cleared at its full size)
    text = HEAD + KHEAD % "0" + "".join("  %%x%d = add %%n, %%n : i32\n" % i for i in range(200000)) + "}\n"
    text += "".join(KHEAD % (i + 1) + "  %x = add %n, %n : i32\n}\n" for i in range(20000))
    text += KHEAD % "last" + SENTINEL + "}\n"
    yield ("big_then_small_kernels", ".ir", text.encode(), None, [SENTINEL_RX])
    # verify-async: 8,000 arrive_expects in one block (each scanned the block), and an array of 2^20 - 1
    # barriers with 2,000 constant-index arrive sites (each index scanned every site), whose arrival
    # count verify-async reports once it has gone through all of them
    n = 8000
    body = ["  tma_shape %x, %M, %K\n", "  %s = shared_alloc {align = 128} : smem<1x4xf32>\n",
            "  %%b = mbar_alloc {count = 1} : mbar<%d>\n" % n, "  %z = const {value = 0} : i32\n",
            "  %huge = mbar_alloc {count = 1} : mbar<1048575>\n"]
    body += ["  %%c%d = const {value = %d} : i32\n" % (i, i) for i in range(n)]
    body += ["  warps {lo = 0, hi = 1} {\n", "    elect {\n"]
    for i in range(n):
        body += ["      %%bb%d = mbar_at %%b, %%c%d : mbar\n" % (i, i),
                 "      mbar_arrive_expect %%bb%d {scope = \"cta\"}\n" % i,
                 "      tma_load %%s, %%x, %%z, %%z, %%bb%d {multicast = 0}\n" % i]
    body += ["      yield\n", "    }\n", "    yield\n", "  }\n"]
    body += ["  %%h%d = mbar_at %%huge, %%c%d : mbar\n  mbar_arrive %%h%d\n" % (i, i, i) for i in range(2000)]
    text = HEAD + "kernel @k(%x: tma<1x4xf32>, %M: i32, %K: i32) block(128, 1, 1) cluster(1, 1, 1) {\n"
    yield ("big_async", ".ir", (text + "".join(body) + "}\n").encode(), None,
           [r"mbarrier 'huge\[0\]' is declared with 1 arrival per phase but its "
            r"arrive sites make 128"])


def clc_cases():
    # 10,000 cluster launch control queries: the path rules walk the kernel once per query, so the
    # pass takes at most 64 in a kernel (a located error at the 65th)
    body = ["  %resp = shared_alloc {align = 16} : smem<2xu64>\n", "  %bar = mbar_alloc {count = 1} : mbar\n",
            "  %p = const {value = 0} : parity\n", "  elect {\n    clc_try_cancel %bar, %resp {multicast = 0}\n    yield\n  }\n",
            "  mbar_wait %bar, %p {scope = \"cta\"}\n"]
    body += ["  %%c%d, %%x%d, %%y%d, %%z%d = clc_query %%resp : i1, i32, i32, i32\n" % (i, i, i, i) for i in range(10000)]
    text = HEAD + "kernel @k(%out: ptr<i32>) block(128, 1, 1) cluster(1, 1, 1) {\n" + "".join(body) + "}\n"
    yield ("clc_queries", ".ir", text.encode(), None, [r"clc_queries\.ir:76:3: error: kernel 'k' has 10000 clc\.query ops; "
                                                       r"verify-clc checks at most 64 per kernel"])


def smem_cases():
    # 100,000 shared tiles, each the destination of a TMA load (smem-layout searched the loads for
    # each tile; a tile nothing uses takes no space, so each is used); the tiles (128-aligned) come
    # before the mbarrier (8)
    n = 100000
    body = ["  tma_shape %x, %M, %K\n", "  %b = mbar_alloc {count = 1} : mbar\n", "  %z = const {value = 0} : i32\n"]
    body += ["  %%s%d = shared_alloc : smem<1x4xf32>\n" % i for i in range(n)]
    body += ["  warps {lo = 0, hi = 1} {\n", "    elect {\n", "      mbar_arrive_expect %b {scope = \"cta\"}\n"]
    body += ["      tma_load %%s%d, %%x, %%z, %%z, %%b {multicast = 0}\n" % i for i in range(n)]
    body += ["      yield\n", "    }\n", "    yield\n", "  }\n"]
    text = HEAD + "kernel @k(%x: tma<1x4xf32>, %M: i32, %K: i32) block(128, 1, 1) cluster(1, 1, 1) {\n"
    yield ("smem_many_tma_tiles", ".ir", (text + "".join(body) + "}\n").encode(), None,
           [r"smem_many_tma_tiles\.ir:3:1: error: kernel 'k' needs 12799904 bytes of shared memory"])
    # 8,200 allocations of 2^50 bytes each, each written once: the total passes 2^63
    body = ["  %z = const {value = 0} : i32\n"]
    for i in range(8200):
        body += ["  %%s%d = shared_alloc : smem<1073741824x2xf64, stages=65536>\n" % i,
                 "  %%t%d = smem_stage %%s%d, %%z : smem<1073741824x2xf64>\n" % (i, i),
                 "  %%p%d = smem_elem %%t%d, %%z, %%z : ptr<f64, shared>\n" % (i, i), "  store %%c, %%p%d\n" % i]
    text = HEAD + "kernel @k(%c: f64) block(128, 1, 1) cluster(1, 1, 1) {\n" + "".join(body) + "}\n"
    yield ("smem_total_overflow", ".ir", text.encode(), None,
           [r"smem_total_overflow\.ir:3:1: error: kernel 'k' needs more than 4503599627370496 bytes of shared memory"])


def cases():
    attrs_of = read_attrs()
    for op in read_ops():
        yield from op_cases(op, attrs_of)
    yield from lit_truncations()
    yield from big_cases()
    yield from clc_cases()
    yield from smem_cases()
