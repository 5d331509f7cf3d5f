# Textual IR (--input ir): large legal modules through the IR parser, the verifier, every pass of
# the pipeline, the printer and the PTX back end. Each shape grows one thing: ops in a kernel,
# kernels in a module, parameters, carried loop values, distinct types, nested regions, equal ops
# for CSE, a folding chain for canonicalize, dead ops for DCE, tile ops for lower-tiles, mbarrier
# and TMA traffic for verify-async and smem-layout, warp-pipeline stages for the AMD pass.

HEAD = 'module "big.tile"\n\n'


def kernel(name, params, body, block="128, 1, 1", cluster="1, 1, 1"):
    return "kernel @%s(%s) block(%s) cluster(%s) {\n%s}\n" % (name, params, block, cluster, "".join(body))


def ops_chain(n):
    """One kernel of n dependent integer ops, stored at the end."""
    body = ["  %v0 = thread_id {dim = 0} : i32\n"]
    for i in range(1, n):
        op = ("add", "mul", "xor", "sub")[i % 4]
        body.append("  %%v%d = %s %%v%d, %%a : i32\n" % (i, op, i - 1))
    body.append("  store %%v%d, %%p\n" % (n - 1))
    return ".ir", (HEAD + kernel("k", "%a: i32, %p: ptr<i32>", body)).encode()


def many_kernels(n):
    """n small kernels, each a guarded load, add and store."""
    out = [HEAD]
    for k in range(n):
        out.append(kernel("k%d" % k, "%a: ptr<f32>, %n: i32", [
            "  %0 = thread_id {dim = 0} : i32\n",
            "  %1 = cmp %0, %n {pred = \"lt\"} : i1\n",
            "  if %1 {\n",
            "    %2 = ptr_add %a, %0 : ptr<f32>\n",
            "    %3 = load %2 : f32\n",
            "    %%4 = const {value = %d.0} : f32\n" % (k % 9),
            "    %5 = add %3, %4 : f32\n",
            "    store %5, %2\n",
            "    yield\n",
            "  } else {\n",
            "    yield\n",
            "  }\n"]))
        out.append("\n")
    return ".ir", "".join(out).encode()


def many_params(n):
    """One kernel with n i32 parameters, all summed and stored."""
    params = ", ".join("%%a%d: i32" % i for i in range(n)) + ", %p: ptr<i32>"
    body = ["  %s0 = add %a0, %a0 : i32\n"]
    for i in range(1, n):
        body.append("  %%s%d = add %%s%d, %%a%d : i32\n" % (i, i - 1, i))
    body.append("  store %%s%d, %%p\n" % (n - 1))
    return ".ir", (HEAD + kernel("k", params, body)).encode()


def carried_values(n):
    """A for loop carrying n values (n-operand for, n block arguments, n-operand yield)."""
    inits = ", ".join("%%i%d" % i for i in range(n))
    types = ", ".join(["i32"] * n)
    body = ["  %z = const {value = 0} : i32\n", "  %one = const {value = 1} : i32\n",
            "  %ten = const {value = 10} : i32\n"]
    body += ["  %%i%d = const {value = %d} : i32\n" % (i, i) for i in range(n)]
    body.append("  %s = for %%z, %%ten, %%one, %s : %s {\n" % (", ".join("%%r%d" % i for i in range(n)), inits, types))
    body.append("  ^(%%iv: i32, %s):\n" % ", ".join("%%c%d: i32" % i for i in range(n)))
    body += ["    %%d%d = add %%c%d, %%iv : i32\n" % (i, i) for i in range(n)]
    body.append("    yield %s\n" % ", ".join("%%d%d" % i for i in range(n)))
    body.append("  }\n")
    body.append("  %%sum0 = add %%r0, %%r%d : i32\n" % (n - 1))
    body.append("  store %sum0, %p\n")
    return ".ir", (HEAD + kernel("k", "%p: ptr<i32>", body)).encode()


def distinct_types(n):
    """n values of n distinct vec types (lowered IR: splat to vec<i x f32>), printed back."""
    body = ["  %%v%d = splat %%f : vec<%dxf32>\n" % (i, i + 1) for i in range(n)]
    return ".ir", (HEAD + kernel("k", "%f: f32", body)).encode()


def nested_regions(n):
    """n ifs, each holding an if (regions in regions), every arm yielding a value."""
    body = ["  %t = thread_id {dim = 0} : i32\n", "  %c = cmp %t, %a {pred = \"lt\"} : i1\n",
            "  %x0 = const {value = 0} : i32\n"]
    for i in range(n):
        body += ["  %%x%d = if %%c : i32 {\n" % (i + 1),
                 "    %%y%d = if %%c : i32 {\n" % i,
                 "      %%u%d = add %%x%d, %%t : i32\n" % (i, i),
                 "      yield %%u%d\n" % i,
                 "    } else {\n",
                 "      yield %%x%d\n" % i,
                 "    }\n",
                 "    yield %%y%d\n" % i,
                 "  } else {\n",
                 "    yield %t\n",
                 "  }\n"]
    body.append("  store %%x%d, %%p\n" % n)
    return ".ir", (HEAD + kernel("k", "%a: i32, %p: ptr<i32>", body)).encode()


def cse_dups(n):
    """n groups of equal pure ops (CSE merges each group), inside and outside regions."""
    body = ["  %t = thread_id {dim = 0} : i32\n", "  %acc0 = const {value = 0} : i32\n"]
    for i in range(n):
        body += ["  %%a%d = mul %%t, %%t : i32\n" % i,
                 "  %%k%d = const {value = %d} : i32\n" % (i, i % 50),
                 "  %%b%d = add %%a%d, %%k%d : i32\n" % (i, i, i),
                 "  %%acc%d = xor %%acc%d, %%b%d : i32\n" % (i + 1, i, i)]
    body.append("  store %%acc%d, %%p\n" % n)
    return ".ir", (HEAD + kernel("k", "%p: ptr<i32>", body)).encode()


def fold_chain(n):
    """A chain of n constant folds and identities for canonicalize (x*1, x+0, c1+c2, ...)."""
    body = ["  %c0 = const {value = 1} : i32\n", "  %one = const {value = 1} : i32\n",
            "  %zero = const {value = 0} : i32\n", "  %t = thread_id {dim = 0} : i32\n", "  %x0 = add %t, %zero : i32\n"]
    for i in range(n):
        body += ["  %%c%d = add %%c%d, %%one : i32\n" % (i + 1, i),
                 "  %%m%d = mul %%x%d, %%one : i32\n" % (i, i),
                 "  %%x%d = add %%m%d, %%c%d : i32\n" % (i + 1, i, i + 1)]
    body.append("  store %%x%d, %%p\n" % n)
    return ".ir", (HEAD + kernel("k", "%p: ptr<i32>", body)).encode()


def dead_ops(n):
    """n dead pure ops in a chain and n dead ifs: DCE deletes them all."""
    body = ["  %t = thread_id {dim = 0} : i32\n", "  %d0 = add %t, %t : i32\n", "  %c = cmp %t, %t {pred = \"lt\"} : i1\n"]
    for i in range(n):
        body += ["  %%d%d = mul %%d%d, %%t : i32\n" % (i + 1, i),
                 "  %%e%d = if %%c : i32 {\n" % i,
                 "    %%f%d = add %%d%d, %%t : i32\n" % (i, i + 1),
                 "    yield %%f%d\n" % i,
                 "  } else {\n",
                 "    yield %t\n",
                 "  }\n"]
    body.append("  store %t, %p\n")
    return ".ir", (HEAD + kernel("k", "%p: ptr<i32>", body)).encode()


def tile_ops(n):
    """n tile loads, elementwise ops and stores of one view (lower-tiles' work)."""
    body = ["  %v = make_view %p, %n : view<1xf32>\n", "  %0 = block_id {dim = 0} : i32\n",
            "  %b = const {value = 256} : i32\n", "  %o = mul %0, %b : i32\n", "  %two = const {value = 2.0} : f32\n",
            "  %s = splat %two : tile<256xf32>\n"]
    for i in range(n):
        body += ["  %%l%d = tile_load %%v, %%o : tile<256xf32>\n" % i,
                 "  %%m%d = mul %%l%d, %%s : tile<256xf32>\n" % (i, i),
                 "  tile_store %%m%d, %%v, %%o\n" % i]
    return ".ir", (HEAD + kernel("k", "%p: ptr<f32>, %n: i32", body, block="256, 1, 1")).encode()


def mbar_traffic(n):
    """n mbarriers, each with one TMA load into a stage of a 4-stage shared ring, waited on and read
    (verify-async, smem-layout, lower-async, the TMA and mbarrier back end)."""
    body = ["  tma_shape %x, %M, %K\n",
            "  %s = shared_alloc {align = 128} : smem<1x4xf32, stages=4>\n",
            "  %%b = mbar_alloc {count = 1} : mbar<%d>\n" % n,
            "  %z = const {value = 0} : i32\n", "  %ph = const {value = 0} : parity\n",
            "  %t = thread_id {dim = 0} : i32\n", "  %acc0 = const {value = 0.0} : f32\n"]
    body += ["  %%c%d = const {value = %d} : i32\n" % (i, i) for i in range(n)]
    body += ["  %%q%d = const {value = %d} : i32\n" % (i, i) for i in range(4)]
    body += ["  warps {lo = 0, hi = 1} {\n", "    elect {\n"]
    for i in range(n):
        body += ["      %%bb%d = mbar_at %%b, %%c%d : mbar\n" % (i, i),
                 "      mbar_arrive_expect %%bb%d {scope = \"cta\"}\n" % i,
                 "      %%st%d = smem_stage %%s, %%q%d : smem<1x4xf32>\n" % (i, i % 4),
                 "      tma_load %%st%d, %%x, %%z, %%z, %%bb%d {multicast = 0}\n" % (i, i)]
    body += ["      yield\n", "    }\n", "    yield\n", "  }\n"]
    for i in range(n):
        body += ["  %%w%d = mbar_at %%b, %%c%d : mbar\n" % (i, i),
                 "  mbar_wait %%w%d, %%ph {scope = \"cta\"}\n" % i,
                 "  %%r%d = smem_stage %%s, %%q%d : smem<1x4xf32>\n" % (i, i % 4),
                 "  %%e%d = smem_elem %%r%d, %%z, %%z : ptr<f32, shared>\n" % (i, i),
                 "  %%l%d = load %%e%d : f32\n" % (i, i),
                 "  %%acc%d = add %%acc%d, %%l%d : f32\n" % (i + 1, i, i)]
    body.append("  %%q = ptr_add %%out, %%t : ptr<f32>\n  store %%acc%d, %%q\n" % n)
    return ".ir", (HEAD + kernel("k", "%x: tma<1x4xf32>, %out: ptr<f32>, %M: i32, %K: i32", body)).encode()


def amd_stages(n):
    """A loop of two warp-pipeline stages holding n ops each (the AMD warp-pipeline pass)."""
    body = ["  %z = const {value = 0} : i32\n", "  %one = const {value = 1} : i32\n", "  %ten = const {value = 8} : i32\n",
            "  %t = thread_id {dim = 0} : i32\n",
            "  %r = for %z, %ten, %one, %t : i32 {\n", "  ^(%i: i32, %x: i32):\n"]
    for s in range(2):
        body.append("    %%y%d = stage {label = \"s%d\"} : i32 {\n" % (s, s))
        prev = "%x" if s == 0 else "%y0"
        for j in range(n):
            body.append("      %%w%d_%d = add %s, %%i : i32\n" % (s, j, prev))
            prev = "%%w%d_%d" % (s, j)
        body.append("      yield %s\n" % prev)
        body.append("    }\n")
    body += ["    yield %y1\n", "  }\n", "  store %r, %p\n"]
    return ".ir", ('module "big.tile" target "gfx942"\n\n' + kernel("k", "%p: ptr<i32>", body, block="256, 1, 1")).encode()


def amd_stage_values(n):
    """A flat pipeline of two stages that yield n values each, used after it, and whose ops store
    to n distinct shared allocations (the warp-pipeline pass's result replacement and LDS sets)."""
    body = ["  %t = thread_id {dim = 0} : i32\n", "  %z = const {value = 0} : i32\n"]
    body += ["  %%s%d = shared_alloc : smem<4xf32>\n" % i for i in range(n)]
    for st in range(2):
        body.append("  %s = stage {label = \"s%d\"} : %s {\n" % (", ".join("%%y%d_%d" % (st, i) for i in range(n)), st,
                                                                ", ".join(["i32"] * n)))
        for i in range(n):
            body += ["    %%x%d_%d = add %%t, %s : i32\n" % (st, i, "%%y0_%d" % i if st else "%t"),
                     "    %%e%d_%d = smem_elem %%s%d, %%z : ptr<f32, shared>\n" % (st, i, i),
                     "    %%c%d_%d = cast %%x%d_%d : f32\n" % (st, i, st, i),
                     "    store %%c%d_%d, %%e%d_%d\n" % (st, i, st, i)]
        body.append("    yield %s\n  }\n" % ", ".join("%%x%d_%d" % (st, i) for i in range(n)))
    body.append("  %%sum = add %%y1_0, %%y1_%d : i32\n  store %%sum, %%p\n" % (n - 1))
    return ".ir", ('module "big.tile" target "gfx942"\n\n' + kernel("k", "%p: ptr<i32>", body, block="256, 1, 1")).encode()


def clc_waits(n):
    """A cluster launch control query after n waits on another barrier (verify-clc's backward scan)."""
    body = ["  %resp = shared_alloc {align = 16} : smem<2xu64>\n", "  %bar = mbar_alloc {count = 1} : mbar\n",
            "  %other = mbar_alloc {count = 128} : mbar\n", "  %p = const {value = 0} : parity\n",
            "  elect {\n    clc_try_cancel %bar, %resp {multicast = 0}\n    yield\n  }\n",
            "  mbar_wait %bar, %p {scope = \"cta\"}\n", "  mbar_arrive %other {scope = \"cta\"}\n"]
    for i in range(n):
        body += ["  mbar_wait %other, %p {scope = \"cta\"}\n"]
    body += ["  %c, %x, %y, %z = clc_query %resp : i1, i32, i32, i32\n", "  store %x, %out\n"]
    return ".ir", (HEAD + kernel("k", "%out: ptr<i32>", body)).encode()


def tma_tiles(n):
    """n small shared tiles and n TMA loads into one more (smem-layout asks, for each tile, whether a
    TMA op moves it)."""
    body = ["  tma_shape %x, %M, %K\n", "  %t = shared_alloc {align = 128} : smem<1x4xf32>\n",
            "  %b = mbar_alloc {count = 1} : mbar\n", "  %z = const {value = 0} : i32\n"]
    body += ["  %%s%d = shared_alloc : smem<4xf32>\n" % i for i in range(n)]
    body += ["  warps {lo = 0, hi = 1} {\n", "    elect {\n", "      mbar_arrive_expect %b {scope = \"cta\"}\n"]
    body += ["      tma_load %t, %x, %z, %z, %b {multicast = 0}\n" for i in range(n)]
    body += ["      yield\n", "    }\n", "    yield\n", "  }\n"]
    return ".ir", (HEAD + kernel("k", "%x: tma<1x4xf32>, %M: i32, %K: i32", body)).encode()


def proxy_fences(n):
    """n generic writes of a TMA-stored tile through one chain of n ptr_adds, with barriers,
    conditional writes and waits among them (lower-async's tracing and placement scans, and
    verify-async's never-arrived check of every wait)."""
    body = ["  tma_shape %x, %M, %K\n", "  %t = shared_alloc : smem<8x64xbf16>\n",
            "  %b = mbar_alloc {count = 128} : mbar\n", "  %z = const {value = 0} : i32\n",
            "  %one = const {value = 1} : i32\n", "  %v = const {value = 1.0} : bf16\n",
            "  %p0 = const {value = 0} : parity\n", "  %c = cmp %M, %K {pred = \"lt\"} : i1\n",
            "  %q0 = smem_elem %t, %z, %z : ptr<bf16, shared>\n", "  mbar_arrive %b {scope = \"cta\"}\n"]
    for i in range(1, n):
        body.append("  %%q%d = ptr_add %%q%d, %%one : ptr<bf16, shared>\n" % (i, i - 1))
        body.append("  store %%v, %%q%d\n" % i)
        if i % 4 == 0:
            body.append("  barrier\n")
        if i % 5 == 0:
            body.append("  mbar_wait %b, %p0 {scope = \"cta\"}\n")
        if i % 7 == 0:
            body += ["  if %c {\n", "    store %%v, %%q%d\n" % i, "    yield\n", "  } else {\n", "    yield\n", "  }\n"]
    body += ["  elect {\n", "    tma_store %x, %z, %z, %t\n", "    yield\n", "  }\n"]
    return ".ir", (HEAD + kernel("k", "%x: tma<8x64xbf16>, %M: i32, %K: i32", body)).encode()


def big_then_small(n):
    """A kernel of 10n values, then n one-op kernels (per-kernel state sized by the big one)."""
    out = [HEAD, kernel("big", "%a: i32, %p: ptr<i32>", ["  %%x%d = add %%a, %%a : i32\n" % i for i in range(10 * n)] +
                        ["  store %x0, %p\n"])]
    out += ["\n" + kernel("k%d" % k, "%a: i32, %p: ptr<i32>", ["  store %a, %p\n"]) for k in range(n)]
    return ".ir", "".join(out).encode()


PTX = "%s --input ir --emit ptx -o /dev/null"
CASES = [
    ("ops_chain", ops_chain, PTX),
    ("many_kernels", many_kernels, PTX),
    ("many_params", many_params, PTX),
    ("carried_values", carried_values, "%s --input ir --emit ir-lowered -o /dev/null"),
    ("distinct_types", distinct_types, "%s --input ir --pipeline \"\" --emit ir -o /dev/null"),
    ("nested_regions", nested_regions, PTX),
    ("cse_dups", cse_dups, PTX),
    ("fold_chain", fold_chain, PTX),
    ("dead_ops", dead_ops, PTX),
    ("tile_ops", tile_ops, PTX),
    ("mbar_traffic", mbar_traffic, PTX),
    ("amd_stages", amd_stages, "%s --input ir --target gfx942 --emit ir-lowered -o /dev/null"),
    ("ops_chain_print", ops_chain, "%s --input ir --emit ir-lowered -o /dev/null"),
    ("big_then_small", big_then_small, "%s --input ir --emit ir-lowered -o /dev/null"),
    ("clc_waits", clc_waits, PTX),
    ("tma_tiles", tma_tiles, "%s --input ir --emit ir-lowered -o /dev/null"),
    ("amd_stage_values", amd_stage_values, "%s --input ir --target gfx942 --pipeline warp-pipeline --emit ir-lowered -o /dev/null"),
    ("proxy_fences", proxy_fences, "%s --input ir --emit ir-lowered -o /dev/null"),
]
BASE_N = {
    "ops_chain": 60000, "many_kernels": 4000, "many_params": 30000, "carried_values": 24000,
    "distinct_types": 60000, "nested_regions": 8000, "cse_dups": 15000, "fold_chain": 15000,
    "dead_ops": 20000, "tile_ops": 6000, "mbar_traffic": 4000, "amd_stages": 30000, "ops_chain_print": 60000,
    "big_then_small": 12000, "amd_stage_values": 4000, "clc_waits": 60000,
    "tma_tiles": 6000, "proxy_fences": 40000,
}
