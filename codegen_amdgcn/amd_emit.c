/* amd_emit.c: lowered tile IR to LLVM IR through the LLVM-C API, then LLVM's optimisation pipeline
 * and AMDGPU code generation (gfx942, gfx90a) in process.
 *
 * The one idea: every SSA value of a kernel is one LLVM value (a vec<E x T> of E <= 64 lanes is an
 * LLVM <E x T> vector, a view its base pointer plus i32 dims kept on the side, a parity an i1), and
 * structured control flow becomes basic blocks whose block arguments and results live in allocas
 * that LLVM's SROA turns back into SSA. So the emitter never builds a phi for structured flow, and
 * break/continue/yield are a store and a branch. Before anything is emitted, every value of a kernel
 * is checked to have such a form (check_kernel): a located error names the op and the type otherwise.
 *
 * A vec of more than REG_LANES (64) lanes is a *lane array*: its value is a pointer to a
 * [E x T] alloca in scratch memory (addrspace 5; i1 lanes as bytes), and each op on it is one loop
 * over its lanes, or lane groups, or MFMA blocks, with the op's code in the loop body once. As one
 * LLVM vector such a value makes LLVM's register allocation grow quadratically with the tile
 * (docs/PERFORMANCE.md, "Compile time"); as loops the code is the same size for every tile, and the
 * loops carry llvm.loop.unroll.count 4 so that LLVM does not unroll them back. A lane array holds
 * one value at a time: a loop's carried values and an if's results are copied into slot arrays at
 * yield, and a loop's block arguments are copied out of them at the head (a yield may overwrite a
 * slot whose old value the body still reads). A splat to a lane array is only its scalar until an
 * op other than an elementwise one needs its lanes (splat_lanes). An elementwise op writes its
 * result over an operand's array that nothing else reads (uses, counted by check_kernel). A
 * kernel's lane arrays may take LANE_ARRAY_BYTES per thread (a located error beyond).
 *
 * Kernels are `amdgpu_kernel` functions: pointer parameters are `ptr addrspace(1) noalias nocapture
 * align A` (A = 16 for a `tensor` base, else the element size; two pointer arguments of one launch
 * must not overlap where either is written), i1 is passed as one byte, and
 * "amdgpu-flat-work-group-size"="B,B" carries the declared block size (so block_dim is that
 * constant: a launch uses the declared block). Shared tiles live in one internal addrspace(3)
 * array per kernel of smem-layout's size; smem_elem swizzles like the PTX back end. Global tile
 * accesses (ld_blocked / st_blocked) are buffer loads and stores through a resource built from the
 * view (llvm.amdgcn.make.buffer.rsrc, num_records = the view's bytes, at most 2^31 - 1): a lane
 * group fully inside the view is one vector access, a partial group per-lane accesses whose offset
 * is 0x80000000 (beyond num_records) for the lanes outside, which the hardware reads as 0 and drops
 * on store: masking by the buffer's range check, no branches per lane.
 *
 * The block barrier is `fence syncscope("workgroup") release; s_barrier; fence syncscope("workgroup")
 * acquire`. LLVM-C 19 has no syncscope fence builder, so that sequence is a small internal function
 * parsed from text (LLVMParseIRInContext) into the module before the kernels are built, marked
 * alwaysinline, and called. The warp-pipeline ops: amd_setprio is llvm.amdgcn.s.setprio;
 * amd_stage_barrier is sched.barrier(0); s.barrier (or the fenced barrier, whose release fence is
 * the s_waitcnt lgkmcnt(0), when lds_wait = 1); sched.barrier(0); amd_cond_barrier {group} is a
 * branch around one s.barrier on (linear thread id / 256 != 0) for "high", == 0 for "low".
 *
 * Float semantics follow the PTX back end: f16 and bf16 arithmetic computes in f32 and rounds once
 * (exact for add/sub/mul); float to int casts saturate (llvm.fptosi.sat); shifts by the width or
 * more give 0 (or the sign for signed shr); integer division by zero gives an unspecified value but
 * no undefined behaviour; the math functions take their fast form (the intrinsic with afn) or
 * their accurate one (computed in f64 and rounded once) from the op's approx attribute, and f64
 * exp, exp2, log, log2 and tanh, which LLVM cannot lower for AMDGPU, are computed as the PTX back
 * end computes them (exp_f64, log_f64, tanh_f64). An error LLVM reports (llvm_diag) is a diagnostic at the
 * kernel, never LLVM's default of printing and exiting. Only LLVM's target registry is global
 * (initialised once).
 *
 * This file is the only one that calls LLVM, and it is not part of libtile: it is linked with
 * libLLVM-19 into libtile_amdgcn.so, whose one exported symbol is the table `amd_backend` at the
 * end, which libtile opens on the first AMD compile (amd_load.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/DebugInfo.h>
#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "amdgcn.h"
#include "layout.h"


/* The barrier helpers, parsed into every module (no syncscope fence builder in LLVM-C 19). */
static const char helper_ir[] =
    "define internal void @tilec.block_barrier() #0 {\n"
    "  fence syncscope(\"workgroup\") release\n"
    "  call void @llvm.amdgcn.s.barrier()\n"
    "  fence syncscope(\"workgroup\") acquire\n"
    "  ret void\n"
    "}\n"
    "declare void @llvm.amdgcn.s.barrier() #1\n"
    "attributes #0 = { alwaysinline convergent nounwind }\n"
    "attributes #1 = { convergent nounwind willreturn }\n";

/* Vecs of more lanes than this are lane arrays; the scratch those may take per thread (per kernel),
 * which leaves a quarter of what LLVM gives a work-item's stack (128 KiB) to everything else. */
#define REG_LANES 64
#define LANE_ARRAY_BYTES (96 * 1024)
/* The LDS of one workgroup on gfx942 and gfx90a. */
#define LDS_BYTES (64 * 1024)

#define BUF_OOB 0x80000000u   /* a buffer offset past every num_records we build */
#define BUF_FLAGS 0x27000     /* dword 3 of the resource: 32-bit data, raw (what Triton uses on CDNA) */

/* What a yield/break/continue goes to. */
typedef struct Flow {
    const Op *op;                 /* the if/for/loop/elect op, NULL for the kernel body */
    LLVMValueRef *slots;          /* if: result allocas; for/loop: carried-value allocas */
    LLVMBasicBlockRef next;       /* yield target: if/elect merge, for latch, loop head */
    LLVMBasicBlockRef exit;       /* for/loop: the block after the loop */
    struct Flow *loop;            /* the innermost enclosing for/loop */
} Flow;

typedef struct Emit {
    const Module *m;
    AmdTarget target;
    DiagCtx *diag;
    int errors;
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMBuilderRef ab;            /* allocas, at the end of the entry block */
    /* per kernel */
    const Kernel *k;
    LLVMValueRef fn;
    LLVMValueRef *val;            /* val[value id] */
    LLVMValueRef **dims;          /* dims[view value id]: i32 dims of a view */
    LLVMValueRef *rsrc;           /* rsrc[view value id]: its buffer resource */
    LLVMValueRef *splat;          /* splat[value id]: the scalar of a lane-array splat (see splat_lanes) */
    uint32_t *uses;               /* uses[value id]: the operand slots of the kernel that read it (check_kernel) */
    LLVMValueRef lds;             /* the kernel's LDS array, or NULL */
    LLVMValueRef tlin;            /* linear thread index (i32) */
    int64_t lane_bytes;           /* scratch taken by the kernel's lane arrays so far */
    Arena arena;
} Emit;

static void error_at(Emit *e, const Op *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_target_verror(e->diag, e->m, op, amd_target_name(e->target), fmt, ap);
    va_end(ap);
    e->errors++;
}

static const char *opname(const Op *op) { return op->code < OP_COUNT ? ir_op_info[op->code].name : "kernel"; }

/* ---------------------------------------------------------------- types and helpers */

static int is_f16ish(const Type *t) { return t->kind == TY_F16 || t->kind == TY_BF16; }
static int mem_bytes(const Type *t) { return t->kind == TY_I1 ? 1 : ir_type_bits(t) / 8; }
static int64_t round_up(int64_t v, int64_t a) { return a > 0 ? (v + a - 1) / a * a : v; }

/* Whether a vec is a lane array (the file comment): more lanes than REG_LANES. The lane count alone
 * decides, so the vecs of one op (all of one lane count) are all of one form. */
static int is_lanes(const Type *t) { return t->kind == TY_VEC && t->shape[0] > REG_LANES; }

static LLVMTypeRef i32t(Emit *e) { return LLVMInt32TypeInContext(e->ctx); }
static LLVMTypeRef i64t(Emit *e) { return LLVMInt64TypeInContext(e->ctx); }
static LLVMTypeRef f32t(Emit *e) { return LLVMFloatTypeInContext(e->ctx); }
static LLVMValueRef ci32(Emit *e, int64_t v) { return LLVMConstInt(i32t(e), (unsigned long long)v, 1); }
static LLVMValueRef ci64(Emit *e, int64_t v) { return LLVMConstInt(i64t(e), (unsigned long long)v, 1); }

static LLVMTypeRef scalar_type(Emit *e, TypeKind k)
{
    switch (k) {
    case TY_I1: return LLVMInt1TypeInContext(e->ctx);
    case TY_I8: case TY_U8: return LLVMInt8TypeInContext(e->ctx);
    case TY_I16: case TY_U16: return LLVMInt16TypeInContext(e->ctx);
    case TY_I32: case TY_U32: return i32t(e);
    case TY_I64: case TY_U64: return i64t(e);
    case TY_F16: return LLVMHalfTypeInContext(e->ctx);
    case TY_BF16: return LLVMBFloatTypeInContext(e->ctx);
    case TY_F32: return f32t(e);
    case TY_F64: return LLVMDoubleTypeInContext(e->ctx);
    case TY_PARITY: return LLVMInt1TypeInContext(e->ctx);
    default: return NULL;
    }
}

/* Why a value of type t has no AMD form, or NULL when it has one. Every value of a kernel is checked
 * against this before anything is emitted (check_kernel), so lty never meets a type it has no LLVM
 * type for. A parity is a plain i1 on AMD targets (0 or 1; only mbarrier ops, which gfx9 lacks,
 * give it a meaning). */
static const char *no_amd_form(const Type *t)
{
    switch (t->kind) {
    case TY_I1: case TY_I8: case TY_I16: case TY_I32: case TY_I64: case TY_U8: case TY_U16: case TY_U32:
    case TY_U64: case TY_F16: case TY_BF16: case TY_F32: case TY_F64: case TY_PARITY:
        return NULL;
    case TY_E4M3: case TY_E5M2: return "fp8 (e4m3, e5m2) is not implemented for AMD targets yet";
    case TY_PTR:
        if (t->space == AS_CLUSTER) return "a shared address of another CTA (mapa) needs thread-block clusters, which AMD GPUs do not have";
        if (t->space == AS_SYMMETRIC) return "NVSHMEM symmetric memory is NVIDIA-only";
        if (t->space != AS_GLOBAL && t->space != AS_SHARED) return "a pointer of an unknown address space";
        break;
    case TY_VIEW: case TY_SMEM: break;
    case TY_VEC:
        if (t->shape[0] < 1 || t->shape[0] > (1 << 24)) return "a vec of a bad lane count";
        break;
    case TY_TILE: return "a tile at block level: tiles become per-thread vecs in lower-tiles, which must run first";
    case TY_MBAR: return "AMD GPUs have no mbarriers (use barrier or warp-pipeline stages)";
    case TY_TMA: return "a TMA descriptor is NVIDIA-only";
    default: return "a type with no value";
    }
    if (!t->elem) return "a type without an element type";
    if (t->elem->kind == TY_PARITY || !ir_type_is_scalar(t->elem)) return "an element that is not a number";
    return no_amd_form(t->elem);
}

/* The LLVM type of a value of type t (one no_amd_form accepts; NULL for any other). */
static LLVMTypeRef lty(Emit *e, const Type *t)
{
    switch (t->kind) {
    case TY_PTR:
        if (t->space == AS_GLOBAL) return LLVMPointerTypeInContext(e->ctx, 1);
        if (t->space == AS_SHARED) return LLVMPointerTypeInContext(e->ctx, 3);
        return NULL;
    case TY_VIEW: return LLVMPointerTypeInContext(e->ctx, 1);
    case TY_SMEM: return LLVMPointerTypeInContext(e->ctx, 3);
    case TY_PARITY: return LLVMInt1TypeInContext(e->ctx);
    case TY_VEC: {
        if (is_lanes(t)) return LLVMPointerTypeInContext(e->ctx, 5);
        LLVMTypeRef et = t->elem ? scalar_type(e, t->elem->kind) : NULL;
        return et ? LLVMVectorType(et, (unsigned)t->shape[0]) : NULL;
    }
    default: return scalar_type(e, t->kind);
    }
}

/* The same shape (scalar or vector) with another element type. */
static LLVMTypeRef like(LLVMTypeRef shape, LLVMTypeRef elem)
{
    if (LLVMGetTypeKind(shape) == LLVMVectorTypeKind) return LLVMVectorType(elem, LLVMGetVectorSize(shape));
    return elem;
}

static LLVMValueRef intrinsic(Emit *e, const char *name, LLVMTypeRef *ov, unsigned nov, LLVMValueRef *args, unsigned n)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    if (!id) ir_unreachable("unknown LLVM intrinsic");
    LLVMValueRef fn = LLVMGetIntrinsicDeclaration(e->mod, id, ov, nov);
    LLVMTypeRef fty = LLVMIntrinsicGetType(e->ctx, id, ov, nov);
    return LLVMBuildCall2(e->b, fty, fn, args, n, "");
}

static LLVMValueRef splat_lanes(Emit *e, const Op *op, const Value *v);

static LLVMValueRef V(Emit *e, const Op *op, const Value *v)
{
    if (v && v->id < e->k->nvalues && e->splat[v->id]) return splat_lanes(e, op, v);
    LLVMValueRef r = v && v->id < e->k->nvalues ? e->val[v->id] : NULL;
    if (!r) {   /* an error; the stand-in has the value's type so that the op in hand builds well-typed IR */
        error_at(e, op, "'%s': operand has no AMD value (an unsupported type or op defined it)", opname(op));
        LLVMTypeRef t = v && v->type ? lty(e, v->type) : NULL;
        return LLVMGetUndef(t ? t : i32t(e));
    }
    return r;
}

static LLVMValueRef alloca_of(Emit *e, LLVMTypeRef t, const char *name)
{
    return LLVMBuildAlloca(e->ab, t, name);
}

/* A value's name hint for the LLVM IR (readable dumps). */
static const char *nm(const Value *v) { return v && v->name ? v->name : ""; }

static LLVMValueRef load_slot(Emit *e, LLVMValueRef slot, const Value *v)
{
    return LLVMBuildLoad2(e->b, lty(e, v->type), slot, nm(v));
}

/* How an element of scalar type t is kept in memory: i1 as a byte. */
static LLVMTypeRef elem_mem_type(Emit *e, const Type *t)
{
    return t->kind == TY_I1 ? LLVMInt8TypeInContext(e->ctx) : scalar_type(e, t->kind);
}

/* x (a scalar) in each of n lanes: <n x T>, or x itself for n = 1 unless vec. */
static LLVMValueRef splat_value(Emit *e, LLVMValueRef x, int64_t n, int vec)
{
    if (n == 1 && !vec) return x;
    LLVMValueRef v = LLVMBuildInsertElement(e->b, LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x), (unsigned)n)), x, ci32(e, 0), "");
    LLVMValueRef *zeros = ARENA_ARRAY(&e->arena, LLVMValueRef, n);
    for (int64_t i = 0; i < n; i++) zeros[i] = ci32(e, 0);
    return LLVMBuildShuffleVector(e->b, v, LLVMGetUndef(LLVMTypeOf(v)), LLVMConstVector(zeros, (unsigned)n), "");
}

/* ---------------------------------------------------------------- lane arrays */

/* n lanes of scalar type t as one LLVM value: the scalar for n = 1, else <n x t>. */
static LLVMTypeRef lanes_type(Emit *e, const Type *t, int n)
{
    LLVMTypeRef et = scalar_type(e, t->kind);
    return n == 1 ? et : LLVMVectorType(et, (unsigned)n);
}

/* Lanes per step of a loop over the lanes of a lane array of `lanes` lanes: 4 (a vector access)
 * where they divide evenly. */
static int lane_step(int64_t lanes) { return lanes % 4 == 0 ? 4 : lanes % 2 == 0 ? 2 : 1; }

/* A new lane array for a value of vec type t, in the entry block; NULL (an error at op) when the
 * kernel's lane arrays would take more than LANE_ARRAY_BYTES of scratch per thread. */
static LLVMValueRef new_lanes(Emit *e, const Op *op, const Type *t)
{
    int64_t bytes = t->shape[0] * mem_bytes(t->elem);
    if (e->lane_bytes + bytes > LANE_ARRAY_BYTES) {
        error_at(e, op, "'%s': the per-thread values of the kernel's tiles need more than %d KiB of scratch memory "
                        "per thread (this one %lld lanes of %s): use smaller tiles or more threads per block",
                 opname(op), LANE_ARRAY_BYTES / 1024, (long long)t->shape[0], ir_type_kind_name(t->elem->kind));
        return NULL;
    }
    e->lane_bytes += bytes;
    LLVMValueRef a = LLVMBuildAlloca(e->ab, LLVMArrayType2(elem_mem_type(e, t->elem), (uint64_t)t->shape[0]), "lanes");
    LLVMSetAlignment(a, 16);
    return a;
}

/* n lanes (n = 1, 2, 4, 16) of lane array `a` of element t from lane `at` (a multiple of n). */
static LLVMValueRef lanes_load(Emit *e, const Type *t, LLVMValueRef a, LLVMValueRef at, int n)
{
    LLVMTypeRef mt = elem_mem_type(e, t), vt = n == 1 ? mt : LLVMVectorType(mt, (unsigned)n);
    LLVMValueRef p = LLVMBuildGEP2(e->b, mt, a, &at, 1, "");
    LLVMValueRef x = LLVMBuildLoad2(e->b, vt, p, "");
    int al = n * mem_bytes(t);
    LLVMSetAlignment(x, (unsigned)(al > 16 ? 16 : al));
    if (t->kind == TY_I1) x = LLVMBuildICmp(e->b, LLVMIntNE, x, LLVMConstNull(vt), "");
    return x;
}

static void lanes_store(Emit *e, const Type *t, LLVMValueRef x, LLVMValueRef a, LLVMValueRef at, int n)
{
    LLVMTypeRef mt = elem_mem_type(e, t);
    if (t->kind == TY_I1) x = LLVMBuildZExt(e->b, x, n == 1 ? mt : LLVMVectorType(mt, (unsigned)n), "");
    LLVMValueRef p = LLVMBuildGEP2(e->b, mt, a, &at, 1, "");
    LLVMValueRef w = LLVMBuildStore(e->b, x, p);
    int al = n * mem_bytes(t);
    LLVMSetAlignment(w, (unsigned)(al > 16 ? 16 : al));
}

/* A counted loop `for i = 0; i < n; i++` (n >= 1) around what is emitted between loop_begin, which
 * returns i (i32), and loop_end. The body may branch; the loop closes from wherever it ends. */
typedef struct Loop {
    LLVMValueRef i;
    LLVMBasicBlockRef body;
    int64_t n;
} Loop;

static LLVMValueRef loop_begin(Emit *e, Loop *l, int64_t n, const char *name)
{
    LLVMBasicBlockRef pre = LLVMGetInsertBlock(e->b);
    l->body = LLVMAppendBasicBlockInContext(e->ctx, e->fn, name);
    l->n = n;
    LLVMBuildBr(e->b, l->body);
    LLVMPositionBuilderAtEnd(e->b, l->body);
    l->i = LLVMBuildPhi(e->b, i32t(e), name);
    LLVMValueRef zero = ci32(e, 0);
    LLVMAddIncoming(l->i, &zero, &pre, 1);
    return l->i;
}

static void loop_end(Emit *e, Loop *l)
{
    LLVMValueRef next = LLVMBuildAdd(e->b, l->i, ci32(e, 1), "");
    LLVMBasicBlockRef last = LLVMGetInsertBlock(e->b);
    LLVMAddIncoming(l->i, &next, &last, 1);
    LLVMBasicBlockRef done = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "lanes.done");
    LLVMValueRef br = LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntULT, next, ci32(e, l->n), ""), l->body, done);
    /* unrolled by at most 4: fully unrolled, a lane array would become a register vec again (SROA), and
     * the code as large as the tile */
    LLVMMetadataRef self = LLVMTemporaryMDNode(e->ctx, NULL, 0);
    static const char count[] = "llvm.loop.unroll.count";
    LLVMMetadataRef cnt[2] = {LLVMMDStringInContext2(e->ctx, count, sizeof count - 1),
                              LLVMValueAsMetadata(ci32(e, 4))};
    LLVMMetadataRef ops[2] = {self, LLVMMDNodeInContext2(e->ctx, cnt, 2)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(e->ctx, ops, 2);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(br, LLVMGetMDKindIDInContext(e->ctx, "llvm.loop", 9), LLVMMetadataAsValue(e->ctx, id));
    LLVMPositionBuilderAtEnd(e->b, done);
}

/* A splat to a lane array makes no array: elementwise ops use its scalar. Where another op needs the
 * lanes, V fills the splat's array (made at its first such use) there, at every use: a splat's
 * lanes never change, and a fill at one use need not dominate the next. */
static LLVMValueRef splat_lanes(Emit *e, const Op *op, const Value *v)
{
    if (!e->val[v->id]) e->val[v->id] = new_lanes(e, op, v->type);
    LLVMValueRef a = e->val[v->id];
    if (!a) return LLVMGetUndef(LLVMPointerTypeInContext(e->ctx, 5));
    int n = lane_step(v->type->shape[0]);
    LLVMValueRef xs = splat_value(e, e->splat[v->id], n, 0);
    Loop l;
    LLVMValueRef at = LLVMBuildMul(e->b, loop_begin(e, &l, v->type->shape[0] / n, "splat"), ci32(e, n), "");
    lanes_store(e, v->type->elem, xs, a, at, n);
    loop_end(e, &l);
    return a;
}

/* Copies lane array `from` into `to` (vec type t). */
static void lanes_copy(Emit *e, const Type *t, LLVMValueRef to, LLVMValueRef from)
{
    int n = lane_step(t->shape[0]);
    Loop l;
    LLVMValueRef at = LLVMBuildMul(e->b, loop_begin(e, &l, t->shape[0] / n, "copy"), ci32(e, n), "");
    lanes_store(e, t->elem, lanes_load(e, t->elem, from, at, n), to, at, n);
    loop_end(e, &l);
}

/* ---------------------------------------------------------------- arithmetic */

static LLVMValueRef widen(Emit *e, LLVMValueRef x, const Type *t)
{
    return is_f16ish(t) ? LLVMBuildFPExt(e->b, x, like(LLVMTypeOf(x), f32t(e)), "") : x;
}

static LLVMValueRef narrow(Emit *e, LLVMValueRef x, const Type *t, LLVMTypeRef to)
{
    return is_f16ish(t) ? LLVMBuildFPTrunc(e->b, x, to, "") : x;
}

static LLVMValueRef splat_const(Emit *e, LLVMTypeRef shape, LLVMValueRef c)
{
    if (LLVMGetTypeKind(shape) != LLVMVectorTypeKind) return c;
    unsigned n = LLVMGetVectorSize(shape);
    LLVMValueRef *xs = ARENA_ARRAY(&e->arena, LLVMValueRef, n);
    for (unsigned i = 0; i < n; i++) xs[i] = c;
    return LLVMConstVector(xs, n);
}

/* Constant v of float type (or float vector type) ft. */
static LLVMValueRef fconst(Emit *e, LLVMTypeRef ft, double v)
{
    int vec = LLVMGetTypeKind(ft) == LLVMVectorTypeKind;
    return splat_const(e, ft, LLVMConstReal(vec ? LLVMGetElementType(ft) : ft, v));
}

/* exp(x) (base2: 2^x) on f64 (scalar or vector), as the PTX back end computes it (LLVM has no
 * AMDGPU lowering of llvm.exp.f64): exp(x) = 2^n p(r), n = rint(x log2 e), r = x - n ln 2 (ln 2 in
 * two parts; base 2: n = rint(x), r = (x - n) ln 2), p the Taylor polynomial of degree 13; x
 * clamped to [-746, 710] ([-1076, 1025]; beyond: 0 or inf), 2^n applied as two factors so that
 * subnormal results come out; NaN gives NaN. */
static LLVMValueRef exp_f64(Emit *e, LLVMValueRef x, int base2)
{
    LLVMBuilderRef b = e->b;
    LLVMTypeRef ft = LLVMTypeOf(x), it = like(ft, i32t(e)), lt = like(ft, i64t(e));
    LLVMValueRef a2[2] = {x, fconst(e, ft, base2 ? -1076.0 : -746.0)};
    LLVMValueRef xc = intrinsic(e, "llvm.maxnum", &ft, 1, a2, 2);
    a2[0] = xc;
    a2[1] = fconst(e, ft, base2 ? 1025.0 : 710.0);
    xc = intrinsic(e, "llvm.minnum", &ft, 1, a2, 2);
    LLVMValueRef t, r;
    if (base2) {   /* n = rint(x), r = (x - n) ln 2 */
        t = intrinsic(e, "llvm.rint", &ft, 1, &xc, 1);
        r = LLVMBuildFMul(b, LLVMBuildFSub(b, xc, t, ""), fconst(e, ft, 0.69314718055994530942), "");
    } else {
        t = LLVMBuildFMul(b, xc, fconst(e, ft, 1.4426950408889634), "");
        t = intrinsic(e, "llvm.rint", &ft, 1, &t, 1);
        LLVMValueRef a3[3] = {t, fconst(e, ft, -6.93147180369123816490e-01), xc};
        r = intrinsic(e, "llvm.fma", &ft, 1, a3, 3);
        a3[1] = fconst(e, ft, -1.90821492927058770002e-10);
        a3[2] = r;
        r = intrinsic(e, "llvm.fma", &ft, 1, a3, 3);
    }
    double c = 1.0;
    for (int k = 1; k <= 13; k++) c /= k;
    LLVMValueRef p = fconst(e, ft, c);
    for (int k = 12; k >= 0; k--) {
        c *= k + 1;
        LLVMValueRef h[3] = {p, r, fconst(e, ft, c)};
        p = intrinsic(e, "llvm.fma", &ft, 1, h, 3);
    }
    LLVMValueRef ni = LLVMBuildFPToSI(b, t, it, "");
    LLVMValueRef n1 = LLVMBuildAShr(b, ni, splat_const(e, it, ci32(e, 1)), "");
    LLVMValueRef n2 = LLVMBuildSub(b, ni, n1, "");
    LLVMValueRef bias = splat_const(e, it, ci32(e, 1023)), sh = splat_const(e, lt, ci64(e, 52));
    LLVMValueRef s1 = LLVMBuildShl(b, LLVMBuildSExt(b, LLVMBuildAdd(b, n1, bias, ""), lt, ""), sh, "");
    LLVMValueRef s2 = LLVMBuildShl(b, LLVMBuildSExt(b, LLVMBuildAdd(b, n2, bias, ""), lt, ""), sh, "");
    p = LLVMBuildFMul(b, p, LLVMBuildBitCast(b, s1, ft, ""), "");
    p = LLVMBuildFMul(b, p, LLVMBuildBitCast(b, s2, ft, ""), "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, p, "");
}

/* ln x on f64 (scalar or vector), as the PTX back end computes it (ptx_math.c log_f64): x = m 2^k,
 * m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54), 2 atanh((m - 1) / (m + 1)) by its odd
 * series, k ln 2 in two parts; ln 0 = -inf, negative -> NaN, inf -> inf, NaN -> NaN. */
static LLVMValueRef log_f64(Emit *e, LLVMValueRef x)
{
    LLVMBuilderRef b = e->b;
    LLVMTypeRef ft = LLVMTypeOf(x), it = like(ft, i32t(e)), lt = like(ft, i64t(e));
    LLVMValueRef sub = LLVMBuildFCmp(b, LLVMRealOLT, x, fconst(e, ft, 0x1p-1022), "");
    LLVMValueRef xs = LLVMBuildSelect(b, sub, LLVMBuildFMul(b, x, fconst(e, ft, 0x1p54), ""), x, "");
    LLVMValueRef adj = LLVMBuildSelect(b, sub, splat_const(e, it, ci32(e, -1077)), splat_const(e, it, ci32(e, -1023)), "");
    LLVMValueRef bits = LLVMBuildBitCast(b, xs, lt, "");
    LLVMValueRef hi = LLVMBuildAnd(b, LLVMBuildLShr(b, bits, splat_const(e, lt, ci64(e, 52)), ""), splat_const(e, lt, ci64(e, 2047)), "");
    LLVMValueRef k = LLVMBuildAdd(b, LLVMBuildTrunc(b, hi, it, ""), adj, "");
    bits = LLVMBuildAnd(b, bits, splat_const(e, lt, ci64(e, 0x000FFFFFFFFFFFFFll)), "");
    bits = LLVMBuildOr(b, bits, splat_const(e, lt, ci64(e, 0x3FF0000000000000ll)), "");
    LLVMValueRef m = LLVMBuildBitCast(b, bits, ft, "");
    LLVMValueRef big = LLVMBuildFCmp(b, LLVMRealOGT, m, fconst(e, ft, 1.4142135623730951), "");
    m = LLVMBuildSelect(b, big, LLVMBuildFMul(b, m, fconst(e, ft, 0.5), ""), m, "");
    k = LLVMBuildAdd(b, k, LLVMBuildZExt(b, big, it, ""), "");
    LLVMValueRef s = LLVMBuildFDiv(b, LLVMBuildFSub(b, m, fconst(e, ft, 1.0), ""), LLVMBuildFAdd(b, m, fconst(e, ft, 1.0), ""), "");
    LLVMValueRef z = LLVMBuildFMul(b, s, s, "");
    LLVMValueRef p = fconst(e, ft, 2.0 / 23.0);
    for (int j = 10; j >= 0; j--) {
        LLVMValueRef h[3] = {p, z, fconst(e, ft, 2.0 / (2 * j + 1))};
        p = intrinsic(e, "llvm.fma", &ft, 1, h, 3);
    }
    p = LLVMBuildFMul(b, p, s, "");
    LLVMValueRef ef = LLVMBuildSIToFP(b, k, ft, "");
    LLVMValueRef a3[3] = {ef, fconst(e, ft, 1.90821492927058770002e-10), p};
    LLVMValueRef r = intrinsic(e, "llvm.fma", &ft, 1, a3, 3);
    a3[1] = fconst(e, ft, 6.93147180369123816490e-01);
    a3[2] = r;
    r = intrinsic(e, "llvm.fma", &ft, 1, a3, 3);
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, fconst(e, ft, INFINITY), ""), x, r, "");
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, x, fconst(e, ft, 0.0), ""), fconst(e, ft, NAN), r, "");
    r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOEQ, x, fconst(e, ft, 0.0), ""), fconst(e, ft, -INFINITY), r, "");
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, r, "");
}

/* tanh x on f64, as the PTX back end computes it (ptx_math.c tanh_f64): the Taylor series below
 * |x| = 0.625, 1 - 2 / (e^(2|x|) + 1) above, the sign of x copied, NaN -> NaN. */
enum { TANH_TERMS = 24 };
static LLVMValueRef tanh_f64(Emit *e, LLVMValueRef x)
{
    LLVMBuilderRef b = e->b;
    LLVMTypeRef ft = LLVMTypeOf(x);
    double t[2 * TANH_TERMS + 1] = {0};
    t[1] = 1.0;   /* tanh' = 1 - tanh^2, coefficient by coefficient */
    for (int k = 1; k < 2 * TANH_TERMS - 1; k++) {
        double sq = 0;
        for (int i = 0; i <= k; i++) sq += t[i] * t[k - i];
        t[k + 1] = -sq / (k + 1);
    }
    LLVMValueRef ax = intrinsic(e, "llvm.fabs", &ft, 1, &x, 1);
    LLVMValueRef x2 = LLVMBuildFMul(b, ax, ax, "");
    LLVMValueRef p = fconst(e, ft, t[2 * TANH_TERMS - 1]);
    for (int j = TANH_TERMS - 2; j >= 0; j--) {
        LLVMValueRef h[3] = {p, x2, fconst(e, ft, t[2 * j + 1])};
        p = intrinsic(e, "llvm.fma", &ft, 1, h, 3);
    }
    p = LLVMBuildFMul(b, p, ax, "");
    LLVMValueRef a2[2] = {LLVMBuildFAdd(b, ax, ax, ""), fconst(e, ft, 40.0)};
    LLVMValueRef ex = exp_f64(e, intrinsic(e, "llvm.minnum", &ft, 1, a2, 2), 0);
    LLVMValueRef q = LLVMBuildFSub(b, fconst(e, ft, 1.0), LLVMBuildFDiv(b, fconst(e, ft, 2.0), LLVMBuildFAdd(b, ex, fconst(e, ft, 1.0), ""), ""), "");
    LLVMValueRef r = LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, ax, fconst(e, ft, 0.625), ""), p, q, "");
    a2[0] = r;
    a2[1] = x;
    r = intrinsic(e, "llvm.copysign", &ft, 1, a2, 2);
    return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealUNO, x, x, ""), x, r, "");
}

/* The math function op `c` (sqrt, exp, exp2, log2, log, rsqrt, tanh) on a (f32 or f64, scalar or
 * vector) in the form its approx attribute picks: the fast f32 form is the LLVM intrinsic with the
 * afn flag (one v_sqrt/v_exp/v_log/v_rsq), tanh (1 - e) / (1 + e) of e = 2^(-2|x| log2 e) with x
 * itself below 2^-12; the accurate form is llvm.sqrt for sqrt and otherwise computes in f64 and
 * rounds once, as the PTX back end does. f64 has only the accurate form. */
static LLVMValueRef math_fn(Emit *e, const Op *op, LLVMValueRef a)
{
    LLVMBuilderRef b = e->b;
    OpCode c = op->code;
    LLVMTypeRef wt = LLVMTypeOf(a);
    int f64 = LLVMGetTypeKind(LLVMGetTypeKind(wt) == LLVMVectorTypeKind ? LLVMGetElementType(wt) : wt) == LLVMDoubleTypeKind;
    int approx = ir_math_approx(op);
    if (c == OP_SQRT && (f64 || !approx)) return intrinsic(e, "llvm.sqrt", &wt, 1, &a, 1);
    if (!f64 && approx) {
        LLVMValueRef r;
        if (c == OP_RSQRT) {   /* 1 / sqrt(x) with afn: one v_rsq_f32 (llvm.amdgcn.rsq has no vector form) */
            r = intrinsic(e, "llvm.sqrt", &wt, 1, &a, 1);
            LLVMSetFastMathFlags(r, LLVMFastMathApproxFunc);
            r = LLVMBuildFDiv(b, fconst(e, wt, 1.0), r, "");
            LLVMSetFastMathFlags(r, LLVMFastMathApproxFunc | LLVMFastMathAllowReciprocal);
            return r;
        }
        if (c == OP_TANH) {
            LLVMValueRef ax = intrinsic(e, "llvm.fabs", &wt, 1, &a, 1);
            LLVMValueRef t = LLVMBuildFMul(b, ax, fconst(e, wt, -2.8853900817779268), "");   /* -2 log2 e */
            LLVMValueRef ex = intrinsic(e, "llvm.exp2", &wt, 1, &t, 1);
            LLVMSetFastMathFlags(ex, LLVMFastMathApproxFunc);
            r = LLVMBuildFDiv(b, LLVMBuildFSub(b, fconst(e, wt, 1.0), ex, ""), LLVMBuildFAdd(b, fconst(e, wt, 1.0), ex, ""), "");
            LLVMSetFastMathFlags(r, LLVMFastMathApproxFunc | LLVMFastMathAllowReciprocal);
            LLVMValueRef a2[2] = {r, a};
            r = intrinsic(e, "llvm.copysign", &wt, 1, a2, 2);
            return LLVMBuildSelect(b, LLVMBuildFCmp(b, LLVMRealOLT, ax, fconst(e, wt, 0x1p-12), ""), a, r, "");
        }
        const char *name = c == OP_SQRT ? "llvm.sqrt" : c == OP_EXP ? "llvm.exp" : c == OP_EXP2 ? "llvm.exp2"
                         : c == OP_LOG2 ? "llvm.log2" : "llvm.log";
        r = intrinsic(e, name, &wt, 1, &a, 1);
        LLVMSetFastMathFlags(r, LLVMFastMathApproxFunc);
        return r;
    }
    LLVMValueRef x = f64 ? a : LLVMBuildFPExt(b, a, like(wt, LLVMDoubleTypeInContext(e->ctx)), ""), r;
    LLVMTypeRef dt = LLVMTypeOf(x);
    switch (c) {
    case OP_EXP: r = exp_f64(e, x, 0); break;
    case OP_EXP2: r = exp_f64(e, x, 1); break;
    case OP_LOG: r = log_f64(e, x); break;
    case OP_LOG2: r = LLVMBuildFMul(b, log_f64(e, x), fconst(e, dt, 1.4426950408889634), ""); break;
    case OP_RSQRT: r = LLVMBuildFDiv(b, fconst(e, dt, 1.0), intrinsic(e, "llvm.sqrt", &dt, 1, &x, 1), ""); break;
    default: r = tanh_f64(e, x); break;
    }
    return f64 ? r : LLVMBuildFPTrunc(b, r, wt, "");
}

static LLVMValueRef emit_cast(Emit *e, LLVMValueRef a, const Type *from, const Type *to, LLVMTypeRef rt)
{
    if (from == to) return a;
    LLVMTypeRef at = LLVMTypeOf(a);
    if (to->kind == TY_I1) {
        if (ir_type_is_int(from)) return LLVMBuildICmp(e->b, LLVMIntNE, a, LLVMConstNull(at), "");
        return LLVMBuildFCmp(e->b, LLVMRealUNE, a, LLVMConstNull(at), "");
    }
    int fi = ir_type_is_float(from), ti = ir_type_is_float(to);
    if (!fi && !ti) {
        int fb = ir_type_bits(from), tb = ir_type_bits(to);
        if (fb == tb) return a;
        if (tb < fb) return LLVMBuildTrunc(e->b, a, rt, "");
        return ir_type_is_signed(from) ? LLVMBuildSExt(e->b, a, rt, "") : LLVMBuildZExt(e->b, a, rt, "");
    }
    if (!fi) {   /* int -> float: through f32 for f16/bf16 (one rounding is what cvt.rn gives for <= 24-bit ints) */
        LLVMTypeRef mid = is_f16ish(to) ? like(at, f32t(e)) : rt;
        LLVMValueRef r = ir_type_is_signed(from) ? LLVMBuildSIToFP(e->b, a, mid, "") : LLVMBuildUIToFP(e->b, a, mid, "");
        return is_f16ish(to) ? LLVMBuildFPTrunc(e->b, r, rt, "") : r;
    }
    if (!ti) {   /* float -> int saturates, NaN -> 0 (cvt.rzi) */
        LLVMValueRef x = widen(e, a, from);
        LLVMTypeRef ov[2] = {rt, LLVMTypeOf(x)};
        return intrinsic(e, ir_type_is_signed(to) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", ov, 2, &x, 1);
    }
    if (is_f16ish(from) && is_f16ish(to)) return LLVMBuildFPTrunc(e->b, widen(e, a, from), rt, "");
    if (ir_type_bits(to) > ir_type_bits(from)) return LLVMBuildFPExt(e->b, a, rt, "");
    return LLVMBuildFPTrunc(e->b, a, rt, "");
}

/* The result of elementwise op `op` on operand values s (scalars, register vecs or n-lane slices of
 * lane arrays, all of one shape) whose element type is t; rt: the LLVM type of the result in that
 * shape. NULL after an error. */
static LLVMValueRef elementwise(Emit *e, const Op *op, const Type *t, LLVMValueRef *s, LLVMTypeRef rt)
{
    const Type *rtype = op->results[0]->type;
    LLVMValueRef r = NULL;
    LLVMBuilderRef b = e->b;
    OpCode c = op->code;
    if (c == OP_SELECT) {
        r = LLVMBuildSelect(b, s[0], s[1], s[2], "");
    } else if (c == OP_CAST) {
        r = emit_cast(e, s[0], t, ir_type_elem(rtype), rt);
    } else if (c == OP_CMP) {
        const char *p = ir_attr_str(op, "pred", "");
        static const char *const names[6] = {"eq", "ne", "lt", "le", "gt", "ge"};
        int pi = -1;
        for (int i = 0; i < 6; i++)
            if (strcmp(p, names[i]) == 0) pi = i;
        if (pi < 0) {
            error_at(e, op, "'cmp' with an unknown predicate '%s'", p);
            return NULL;
        }
        if (ir_type_is_float(t)) {
            static const LLVMRealPredicate fp[6] = {LLVMRealOEQ, LLVMRealUNE, LLVMRealOLT, LLVMRealOLE, LLVMRealOGT, LLVMRealOGE};
            r = LLVMBuildFCmp(b, fp[pi], s[0], s[1], "");
        } else {
            int sg = ir_type_is_signed(t);
            static const LLVMIntPredicate sp[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntSLT, LLVMIntSLE, LLVMIntSGT, LLVMIntSGE};
            static const LLVMIntPredicate up[6] = {LLVMIntEQ, LLVMIntNE, LLVMIntULT, LLVMIntULE, LLVMIntUGT, LLVMIntUGE};
            r = LLVMBuildICmp(b, sg ? sp[pi] : up[pi], s[0], s[1], "");
        }
    } else if (ir_type_is_float(t)) {
        LLVMValueRef a = widen(e, s[0], t), y = s[1] ? widen(e, s[1], t) : NULL, z = s[2] ? widen(e, s[2], t) : NULL;
        LLVMTypeRef wt = LLVMTypeOf(a);
        LLVMValueRef args[3] = {a, y, z};
        switch (c) {
        case OP_ADD: r = LLVMBuildFAdd(b, a, y, ""); break;
        case OP_SUB: r = LLVMBuildFSub(b, a, y, ""); break;
        case OP_MUL: r = LLVMBuildFMul(b, a, y, ""); break;
        case OP_DIV: r = LLVMBuildFDiv(b, a, y, ""); break;
        case OP_REM: r = LLVMBuildFRem(b, a, y, ""); break;
        case OP_NEG: r = LLVMBuildFNeg(b, a, ""); break;
        case OP_MIN: r = intrinsic(e, "llvm.minnum", &wt, 1, args, 2); break;
        case OP_MAX: r = intrinsic(e, "llvm.maxnum", &wt, 1, args, 2); break;
        case OP_ABS: r = intrinsic(e, "llvm.fabs", &wt, 1, args, 1); break;
        case OP_SQRT: case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH:
            r = math_fn(e, op, a);
            break;
        case OP_FMA: r = intrinsic(e, "llvm.fma", &wt, 1, args, 3); break;
        default:
            error_at(e, op, "'%s' is not defined on %s", opname(op), ir_type_kind_name(t->kind));
            return NULL;
        }
        r = narrow(e, r, t, rt);
    } else {
        LLVMTypeRef at = LLVMTypeOf(s[0]);
        int sg = ir_type_is_signed(t), bits = ir_type_bits(t);
        LLVMValueRef zero = LLVMConstNull(at);
        LLVMValueRef args[2] = {s[0], s[1]};
        switch (c) {
        case OP_ADD: r = t->kind == TY_I1 ? LLVMBuildXor(b, s[0], s[1], "") : LLVMBuildAdd(b, s[0], s[1], ""); break;
        case OP_SUB: r = t->kind == TY_I1 ? LLVMBuildXor(b, s[0], s[1], "") : LLVMBuildSub(b, s[0], s[1], ""); break;
        case OP_MUL: r = LLVMBuildMul(b, s[0], s[1], ""); break;
        case OP_DIV: case OP_REM: {
            if (t->kind == TY_I1) {   /* as the PTX back end: a / b = a, a % b = 0 */
                r = c == OP_DIV ? s[0] : zero;
                break;
            }
            /* no undefined behaviour: x / 0 and MIN / -1 never reach the divide */
            LLVMValueRef one = splat_const(e, at, LLVMConstInt(LLVMGetTypeKind(at) == LLVMVectorTypeKind ? LLVMGetElementType(at) : at, 1, 0));
            LLVMValueRef bz = LLVMBuildICmp(b, LLVMIntEQ, s[1], zero, "");
            LLVMValueRef d = LLVMBuildSelect(b, bz, one, s[1], "");
            if (sg) {
                LLVMValueRef m1 = LLVMConstAllOnes(at);
                LLVMValueRef bm1 = LLVMBuildICmp(b, LLVMIntEQ, s[1], m1, "");
                d = LLVMBuildSelect(b, bm1, one, d, "");
                LLVMValueRef q = c == OP_DIV ? LLVMBuildSDiv(b, s[0], d, "") : LLVMBuildSRem(b, s[0], d, "");
                LLVMValueRef alt = c == OP_DIV ? LLVMBuildSub(b, zero, s[0], "") : zero;
                r = LLVMBuildSelect(b, bm1, alt, q, "");
            } else {
                r = c == OP_DIV ? LLVMBuildUDiv(b, s[0], d, "") : LLVMBuildURem(b, s[0], d, "");
            }
            break;
        }
        case OP_NEG: r = t->kind == TY_I1 ? s[0] : LLVMBuildSub(b, zero, s[0], ""); break;
        case OP_AND: r = LLVMBuildAnd(b, s[0], s[1], ""); break;
        case OP_OR: r = LLVMBuildOr(b, s[0], s[1], ""); break;
        case OP_XOR: r = LLVMBuildXor(b, s[0], s[1], ""); break;
        case OP_NOT: r = LLVMBuildNot(b, s[0], ""); break;
        case OP_SHL: case OP_SHR: {
            LLVMTypeRef et = LLVMGetTypeKind(at) == LLVMVectorTypeKind ? LLVMGetElementType(at) : at;
            LLVMValueRef w = splat_const(e, at, LLVMConstInt(et, (unsigned long long)bits, 0));
            LLVMValueRef big = LLVMBuildICmp(b, LLVMIntUGE, s[1], w, "");
            if (c == OP_SHR && sg) {
                LLVMValueRef wm1 = splat_const(e, at, LLVMConstInt(et, (unsigned long long)(bits - 1), 0));
                r = LLVMBuildAShr(b, s[0], LLVMBuildSelect(b, big, wm1, s[1], ""), "");
            } else {
                LLVMValueRef amt = LLVMBuildSelect(b, big, zero, s[1], "");
                LLVMValueRef x = c == OP_SHL ? LLVMBuildShl(b, s[0], amt, "") : LLVMBuildLShr(b, s[0], amt, "");
                r = LLVMBuildSelect(b, big, zero, x, "");
            }
            break;
        }
        case OP_MIN: r = intrinsic(e, sg ? "llvm.smin" : "llvm.umin", &at, 1, args, 2); break;
        case OP_MAX: r = intrinsic(e, sg ? "llvm.smax" : "llvm.umax", &at, 1, args, 2); break;
        case OP_ABS: {
            if (!sg) {
                r = s[0];
                break;
            }
            LLVMValueRef xs[2] = {s[0], LLVMConstInt(LLVMInt1TypeInContext(e->ctx), 0, 0)};
            r = intrinsic(e, "llvm.abs", &at, 1, xs, 2);
            break;
        }
        default:
            error_at(e, op, "'%s' is not defined on integer type %s", opname(op), ir_type_kind_name(t->kind));
            return NULL;
        }
    }
    return r;
}

static void emit_elementwise(Emit *e, const Op *op)
{
    const Type *t = ir_type_elem(op->operands[op->code == OP_SELECT ? 1 : 0]->type);
    const Value *res = op->results[0];
    const Type *rtype = res->type, *relem = ir_type_elem(rtype);
    /* a parity is an i1 that only select moves */
    int parity = op->code == OP_SELECT && t->kind == TY_PARITY && relem->kind == TY_PARITY;
    if ((!parity && (!ir_type_is_scalar(t) || ir_type_is_fp8(t) || !ir_type_is_scalar(relem) || ir_type_is_fp8(relem))) ||
        op->noperands < 1 || op->noperands > 3) {
        error_at(e, op, "'%s' on a non-numeric type", opname(op));
        return;
    }
    LLVMValueRef s[3] = {NULL, NULL, NULL};
    if (!is_lanes(rtype)) {
        for (uint32_t i = 0; i < op->noperands; i++) s[i] = V(e, op, op->operands[i]);
        e->val[res->id] = elementwise(e, op, t, s, lty(e, rtype));
        return;
    }
    /* a lane array: a loop over slices of n lanes; scalar operands are splatted. The result goes into
     * the array of an operand of its element type that nothing else reads (each slice is read before
     * it is written), else into a new one. */
    int64_t lanes = rtype->shape[0];
    int n = lane_step(lanes);
    LLVMValueRef dst = NULL, src[3] = {NULL, NULL, NULL};
    for (uint32_t i = 0; i < op->noperands && !dst; i++) {
        const Value *o = op->operands[i];
        if (o->type->kind == TY_VEC && o->type->shape[0] == lanes && o->type->elem == relem && e->uses[o->id] == 1 &&
            !e->splat[o->id] && e->val[o->id])
            dst = e->val[o->id];
    }
    if (!dst) dst = new_lanes(e, op, rtype);
    if (!dst) return;
    int vec[3] = {0, 0, 0};
    for (uint32_t i = 0; i < op->noperands; i++) {
        const Value *o = op->operands[i];
        if (o->type->kind == TY_VEC && o->type->shape[0] != lanes) {
            error_at(e, op, "'%s' on vecs of different lane counts", opname(op));
            return;
        }
        vec[i] = o->type->kind == TY_VEC;
        if (vec[i] && o->def && o->def->code == OP_SPLAT && o->def->noperands == 1) {   /* the scalar, not its array */
            o = o->def->operands[0];
            vec[i] = 0;
        }
        src[i] = V(e, op, o);
    }
    Loop l;
    LLVMValueRef at = LLVMBuildMul(e->b, loop_begin(e, &l, lanes / n, "lanes"), ci32(e, n), "");
    for (uint32_t i = 0; i < op->noperands; i++) {
        const Type *ot = op->operands[i]->type;
        if (vec[i]) {
            s[i] = lanes_load(e, ot->elem, src[i], at, n);
        } else {
            s[i] = splat_value(e, src[i], n, 0);
        }
    }
    LLVMValueRef r = elementwise(e, op, t, s, lanes_type(e, relem, n));
    if (r) lanes_store(e, relem, r, dst, at, n);
    loop_end(e, &l);
    e->val[res->id] = dst;
}

/* ---------------------------------------------------------------- geometry */

static LLVMValueRef workitem(Emit *e, int dim)
{
    static const char *const n[3] = {"llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y", "llvm.amdgcn.workitem.id.z"};
    return intrinsic(e, n[dim], NULL, 0, NULL, 0);
}

static void emit_geometry(Emit *e, const Op *op)
{
    LLVMValueRef r = NULL;
    int64_t dim = ir_attr_int(op, "dim", 0);
    if (dim < 0 || dim > 2) {
        error_at(e, op, "'%s' needs dim 0, 1 or 2", opname(op));
        return;
    }
    switch (op->code) {
    case OP_THREAD_ID: r = e->k->block[dim] == 1 ? ci32(e, 0) : workitem(e, (int)dim); break;
    case OP_BLOCK_ID: {
        static const char *const n[3] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y", "llvm.amdgcn.workgroup.id.z"};
        r = intrinsic(e, n[dim], NULL, 0, NULL, 0);
        break;
    }
    case OP_BLOCK_DIM: r = ci32(e, e->k->block[dim]); break;
    case OP_GRID_DIM: {   /* the dispatch packet's grid size (work-items) / the block size */
        LLVMValueRef dp = intrinsic(e, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0);
        LLVMValueRef off = ci64(e, 12 + 4 * dim);
        LLVMValueRef p = LLVMBuildGEP2(e->b, LLVMInt8TypeInContext(e->ctx), dp, &off, 1, "");
        LLVMValueRef g = LLVMBuildLoad2(e->b, i32t(e), p, "");
        LLVMSetAlignment(g, 4);
        r = LLVMBuildUDiv(e->b, g, ci32(e, e->k->block[dim]), "");
        break;
    }
    case OP_LANE_ID: r = LLVMBuildAnd(e->b, e->tlin, ci32(e, AMD_WAVE_SIZE - 1), ""); break;
    case OP_WARP_ID: r = LLVMBuildLShr(e->b, e->tlin, ci32(e, 6), ""); break;
    default: ir_unreachable("not a geometry op");
    }
    e->val[op->results[0]->id] = r;
}

/* ---------------------------------------------------------------- warp collectives */

/* shfl on the 64-lane wave: the source lane is computed as PTX's shfl computes it (segments of
 * `width` lanes, 64 when absent; the lane operand taken modulo 64; up keeps its own value below the
 * segment's first lane, down and xor above its last), then one ds_bpermute (byte address = source
 * lane * 4) per 32 bits of the value: a 16-bit value zero-extended, a 64-bit one as two halves. */
static LLVMValueRef bpermute(Emit *e, LLVMValueRef addr, LLVMValueRef x)
{
    LLVMValueRef args[2] = {addr, x};
    return intrinsic(e, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2);
}

static void emit_shfl(Emit *e, const Op *op)
{
    const Value *v = op->operands[0];
    const char *mode = ir_attr_s(op, A_SHFL_mode);
    int64_t w = ir_attr_i(op, A_SHFL_width);
    int bits = ir_type_bits(v->type);
    if (!mode || (bits != 16 && bits != 32 && bits != 64)) {
        error_at(e, op, "'shfl' needs a mode and a 16-, 32- or 64-bit value");
        return;
    }
    if (!w) w = AMD_WAVE_SIZE;
    int64_t seg = ~(w - 1) & (AMD_WAVE_SIZE - 1);
    LLVMValueRef lane = LLVMBuildAnd(e->b, e->tlin, ci32(e, AMD_WAVE_SIZE - 1), "lane");
    LLVMValueRef b = LLVMBuildAnd(e->b, V(e, op, op->operands[1]), ci32(e, AMD_WAVE_SIZE - 1), "");
    LLVMValueRef first = LLVMBuildAnd(e->b, lane, ci32(e, seg), "");
    LLVMValueRef j, ok;
    int up = strcmp(mode, "up") == 0, down = strcmp(mode, "down") == 0, bfly = strcmp(mode, "xor") == 0;
    if (up) {
        j = LLVMBuildSub(e->b, lane, b, "");
        ok = LLVMBuildICmp(e->b, LLVMIntSGE, j, first, "");
    } else if (down || bfly) {
        LLVMValueRef last = LLVMBuildOr(e->b, first, ci32(e, ~seg & (AMD_WAVE_SIZE - 1)), "");
        j = down ? LLVMBuildAdd(e->b, lane, b, "") : LLVMBuildXor(e->b, lane, b, "");
        ok = LLVMBuildICmp(e->b, LLVMIntULE, j, last, "");
    } else {   /* idx: lane b of the segment */
        j = LLVMBuildOr(e->b, first, LLVMBuildAnd(e->b, b, ci32(e, ~seg & (AMD_WAVE_SIZE - 1)), ""), "");
        ok = NULL;
    }
    LLVMValueRef src = ok ? LLVMBuildSelect(e->b, ok, j, lane, "") : j;
    LLVMValueRef addr = LLVMBuildShl(e->b, src, ci32(e, 2), "shfl.addr");
    LLVMTypeRef vt = lty(e, v->type), it = LLVMIntTypeInContext(e->ctx, (unsigned)bits);
    LLVMValueRef x = LLVMBuildBitCast(e->b, V(e, op, v), it, ""), r;
    if (bits == 64) {
        LLVMValueRef lo = bpermute(e, addr, LLVMBuildTrunc(e->b, x, i32t(e), ""));
        LLVMValueRef hi = bpermute(e, addr, LLVMBuildTrunc(e->b, LLVMBuildLShr(e->b, x, ci64(e, 32), ""), i32t(e), ""));
        r = LLVMBuildOr(e->b, LLVMBuildZExt(e->b, lo, i64t(e), ""),
                        LLVMBuildShl(e->b, LLVMBuildZExt(e->b, hi, i64t(e), ""), ci64(e, 32), ""), "");
    } else if (bits == 16) {
        r = LLVMBuildTrunc(e->b, bpermute(e, addr, LLVMBuildZExt(e->b, x, i32t(e), "")), it, "");
    } else {
        r = bpermute(e, addr, x);
    }
    e->val[op->results[0]->id] = LLVMBuildBitCast(e->b, r, vt, nm(op->results[0]));
}

/* vote: llvm.amdgcn.ballot.i64 of the condition (bit i: lane i of the wave); any is ballot != 0,
 * all is ballot == ballot(true) (the wave's active lanes). */
static void emit_vote(Emit *e, const Op *op)
{
    const char *mode = ir_attr_s(op, A_VOTE_mode);
    LLVMTypeRef t64 = i64t(e);
    LLVMValueRef c = V(e, op, op->operands[0]);
    if (op->operands[0]->type->kind == TY_VEC) {   /* a bool tile's lanes: this lane's any / all of them first */
        LLVMTypeRef vt = LLVMTypeOf(c);
        c = intrinsic(e, mode && strcmp(mode, "all") == 0 ? "llvm.vector.reduce.and" : "llvm.vector.reduce.or", &vt, 1,
                      &c, 1);
    }
    LLVMValueRef bal = intrinsic(e, "llvm.amdgcn.ballot", &t64, 1, &c, 1), r;
    if (mode && strcmp(mode, "any") == 0) r = LLVMBuildICmp(e->b, LLVMIntNE, bal, ci64(e, 0), "");
    else if (mode && strcmp(mode, "all") == 0) {
        LLVMValueRef one = LLVMConstInt(LLVMInt1TypeInContext(e->ctx), 1, 0);
        r = LLVMBuildICmp(e->b, LLVMIntEQ, bal, intrinsic(e, "llvm.amdgcn.ballot", &t64, 1, &one, 1), "");
    } else r = bal;
    e->val[op->results[0]->id] = r;
}

/* ---------------------------------------------------------------- memory */

/* An element load/store of scalar type t at p (any address space); i1 is a byte. */
static LLVMValueRef mem_load(Emit *e, const Type *t, LLVMValueRef p)
{
    LLVMValueRef x = LLVMBuildLoad2(e->b, t->kind == TY_I1 ? LLVMInt8TypeInContext(e->ctx) : scalar_type(e, t->kind), p, "");
    LLVMSetAlignment(x, (unsigned)mem_bytes(t));
    if (t->kind == TY_I1) x = LLVMBuildICmp(e->b, LLVMIntNE, x, LLVMConstNull(LLVMInt8TypeInContext(e->ctx)), "");
    return x;
}

static void mem_store(Emit *e, const Type *t, LLVMValueRef v, LLVMValueRef p)
{
    if (t->kind == TY_I1) v = LLVMBuildZExt(e->b, v, LLVMInt8TypeInContext(e->ctx), "");
    LLVMValueRef s = LLVMBuildStore(e->b, v, p);
    LLVMSetAlignment(s, (unsigned)mem_bytes(t));
}

/* The LLVM ordering of a memory-model order name. */
static LLVMAtomicOrdering ordering(const char *order)
{
    if (!strcmp(order, "acquire")) return LLVMAtomicOrderingAcquire;
    if (!strcmp(order, "release")) return LLVMAtomicOrderingRelease;
    if (!strcmp(order, "acq_rel")) return LLVMAtomicOrderingAcquireRelease;
    if (!strcmp(order, "sc")) return LLVMAtomicOrderingSequentiallyConsistent;
    return LLVMAtomicOrderingMonotonic;   /* relaxed */
}

/* atomic {kind}, atomic_load, atomic_store, fence (docs/IR.md "Atomics"): LLVM's atomicrmw,
 * cmpxchg, atomic load / store and fence with the op's order. LLVM 19's C API sets no syncscope, so
 * every scope is LLVM's default, the system scope: at least as strong as the one asked for. */
static void emit_atomic(Emit *e, const Op *op)
{
    const char *kind, *order, *scope;
    ir_atomic_info(op, &kind, &order, &scope);
    (void)scope;   /* every scope is the system scope (above) */
    if (op->code == OP_FENCE) {
        LLVMBuildFence(e->b, ordering(order), 0, "");
        return;
    }
    const Value *p = op->operands[op->code == OP_ATOMIC_STORE ? 1 : 0];
    if (p->type->kind != TY_PTR || (p->type->space != AS_GLOBAL && p->type->space != AS_SHARED) || !lty(e, p->type)) {
        error_at(e, op, "'%s' needs a global or shared pointer", ir_op_info[op->code].name);
        return;
    }
    const Type *t = p->type->elem;
    LLVMValueRef ptr = V(e, op, p);
    if (op->code == OP_ATOMIC_LOAD) {
        LLVMValueRef x = mem_load(e, t, ptr);
        LLVMSetOrdering(x, ordering(order));
        e->val[op->results[0]->id] = x;
        return;
    }
    if (op->code == OP_ATOMIC_STORE) {
        LLVMValueRef st = LLVMBuildStore(e->b, V(e, op, op->operands[0]), ptr);
        LLVMSetAlignment(st, (unsigned)mem_bytes(t));
        LLVMSetOrdering(st, ordering(order));
        return;
    }
    LLVMAtomicOrdering o = ordering(order);
    LLVMValueRef v = V(e, op, op->operands[1]);
    if (!strcmp(kind, "cas")) {   /* cmpxchg takes integers: a float is compared and swapped as its bits */
        LLVMTypeRef it = LLVMIntTypeInContext(e->ctx, (unsigned)ir_type_bits(t));
        LLVMValueRef want = V(e, op, op->operands[2]);
        if (ir_type_is_float(t)) {
            v = LLVMBuildBitCast(e->b, v, it, "");
            want = LLVMBuildBitCast(e->b, want, it, "");
        }
        LLVMAtomicOrdering fail = o == LLVMAtomicOrderingAcquire || o == LLVMAtomicOrderingAcquireRelease
                                      ? LLVMAtomicOrderingAcquire : LLVMAtomicOrderingMonotonic;
        LLVMValueRef pair = LLVMBuildAtomicCmpXchg(e->b, ptr, v, want, o, fail, 0);
        LLVMValueRef old = LLVMBuildExtractValue(e->b, pair, 0, "");
        e->val[op->results[0]->id] = ir_type_is_float(t) ? LLVMBuildBitCast(e->b, old, scalar_type(e, t->kind), "") : old;
        return;
    }
    int sgn = ir_type_is_signed(t);
    LLVMAtomicRMWBinOp bop = !strcmp(kind, "add") ? (ir_type_is_float(t) ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd)
                             : !strcmp(kind, "min") ? (sgn ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin)
                             : !strcmp(kind, "max") ? (sgn ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax)
                             : !strcmp(kind, "and") ? LLVMAtomicRMWBinOpAnd : !strcmp(kind, "or") ? LLVMAtomicRMWBinOpOr
                             : !strcmp(kind, "xor") ? LLVMAtomicRMWBinOpXor : LLVMAtomicRMWBinOpXchg;
    e->val[op->results[0]->id] = LLVMBuildAtomicRMW(e->b, bop, ptr, v, o, 0);
}

/* The integer (vector) type a buffer access of n bytes moves. */
static LLVMTypeRef carrier(Emit *e, int n)
{
    switch (n) {
    case 1: return LLVMInt8TypeInContext(e->ctx);
    case 2: return LLVMInt16TypeInContext(e->ctx);
    case 4: return i32t(e);
    case 8: return LLVMVectorType(i32t(e), 2);
    case 16: return LLVMVectorType(i32t(e), 4);
    default: return NULL;
    }
}

static LLVMValueRef buf_load(Emit *e, LLVMValueRef rsrc, LLVMValueRef voff, int bytes)
{
    LLVMTypeRef ct = carrier(e, bytes);
    LLVMValueRef args[4] = {rsrc, voff, ci32(e, 0), ci32(e, 0)};
    return intrinsic(e, "llvm.amdgcn.raw.ptr.buffer.load", &ct, 1, args, 4);
}

static void buf_store(Emit *e, LLVMValueRef data, LLVMValueRef rsrc, LLVMValueRef voff)
{
    LLVMTypeRef ct = LLVMTypeOf(data);
    LLVMValueRef args[5] = {data, rsrc, voff, ci32(e, 0), ci32(e, 0)};
    intrinsic(e, "llvm.amdgcn.raw.ptr.buffer.store", &ct, 1, args, 5);
}

/* n lanes of type t (a <n x t> value, n >= 1) to/from the carrier of their bytes. */
static LLVMValueRef to_carrier(Emit *e, LLVMValueRef v, const Type *t, int n)
{
    if (t->kind == TY_I1) v = LLVMBuildZExt(e->b, v, like(LLVMTypeOf(v), LLVMInt8TypeInContext(e->ctx)), "");
    return LLVMBuildBitCast(e->b, v, carrier(e, n * mem_bytes(t)), "");
}

static LLVMValueRef from_carrier(Emit *e, LLVMValueRef c, const Type *t, int n)
{
    LLVMTypeRef et = elem_mem_type(e, t);
    LLVMValueRef v = LLVMBuildBitCast(e->b, c, n == 1 ? et : LLVMVectorType(et, (unsigned)n), "");
    if (t->kind == TY_I1) v = LLVMBuildICmp(e->b, LLVMIntNE, v, LLVMConstNull(LLVMTypeOf(v)), "");
    return v;
}

typedef struct Blocked {
    int rank;
    int64_t shape[IR_MAX_RANK];
    int64_t V, B, T, R, E;
} Blocked;

static int blocked_info(Emit *e, const Op *op, int rank, int64_t lanes, Blocked *bi)
{
    const Attr *sh = ir_attr_find(op, "shape");
    memset(bi, 0, sizeof *bi);
    if (!sh || sh->kind != ATTR_INTS || sh->nints < 1 || sh->nints > IR_MAX_RANK || (rank && sh->nints != rank)) {
        error_at(e, op, "'%s' needs a shape attribute of the view's rank", opname(op));
        return -1;
    }
    bi->rank = sh->nints;
    bi->T = 1;
    for (int i = 0; i < bi->rank; i++) {
        bi->shape[i] = sh->ints[i];
        if (bi->shape[i] <= 0 || bi->shape[i] > IR_MAX_TILE_ELEMS) {
            error_at(e, op, "'%s': bad shape", opname(op));
            return -1;
        }
        bi->T *= bi->shape[i];
        if (bi->T > IR_MAX_TILE_ELEMS) {   /* the front end refuses such tiles; IR input may have them */
            error_at(e, op, "'%s': a tile of more than %d elements", opname(op), IR_MAX_TILE_ELEMS);
            return -1;
        }
    }
    bi->V = ir_attr_int(op, "vec", 1);
    bi->B = ir_attr_int(op, "threads", 0);
    if (bi->B <= 0 || bi->B > 1024 || bi->V <= 0 || bi->V > 16 || (bi->V & (bi->V - 1)) || bi->shape[bi->rank - 1] % bi->V ||
        bi->T > (1 << 24)) {
        error_at(e, op, "'%s': bad vec/threads attributes", opname(op));
        return -1;
    }
    bi->R = bi->T / (bi->B * bi->V);
    if (bi->R < 1) bi->R = 1;
    bi->E = bi->R * bi->V;
    if (bi->E > IR_MAX_THREAD_VALUES) {   /* the front end refuses such tiles; IR input may have them */
        error_at(e, op, "'%s': a tile of %lld elements over %lld threads needs %lld values per thread; at "
                 "most %d are supported", opname(op), (long long)bi->T, (long long)bi->B, (long long)bi->E,
                 IR_MAX_THREAD_VALUES);
        return -1;
    }
    if (lanes != bi->E) {
        error_at(e, op, "'%s': %lld lanes, the blocked layout gives %lld", opname(op), (long long)lanes, (long long)bi->E);
        return -1;
    }
    return 0;
}

/* t*V (the flat index of this thread's lane group 0) and the validity predicate (NULL: always). A
 * tile of fewer elements than threads x V leaves threads past its end: in the blocked layout they are
 * replicas of threads t mod (T / V) (ir/layout.h), so a load or iota gives them those lanes and a
 * store skips them. */
static LLVMValueRef blocked_base(Emit *e, const Blocked *bi, int store, LLVMValueRef *valid)
{
    LLVMValueRef t = e->tlin;
    *valid = NULL;
    if (bi->T < bi->B * bi->V) {
        if (store) *valid = LLVMBuildICmp(e->b, LLVMIntULT, t, ci32(e, bi->T / bi->V), "");
        else t = LLVMBuildURem(e->b, t, ci32(e, bi->T / bi->V), "");
    }
    return LLVMBuildMul(e->b, t, ci32(e, bi->V), "");
}

static LLVMValueRef tile_index(Emit *e, const Blocked *bi, LLVMValueRef f, int d)
{
    int64_t stride = 1;
    for (int i = d + 1; i < bi->rank; i++) stride *= bi->shape[i];
    LLVMValueRef x = f;
    if (stride > 1) x = LLVMBuildUDiv(e->b, x, ci32(e, stride), "");
    if (d > 0) x = LLVMBuildURem(e->b, x, ci32(e, bi->shape[d]), "");
    return x;
}

static LLVMValueRef and_opt(Emit *e, LLVMValueRef a, LLVMValueRef b)
{
    if (!a) return b;
    if (!b) return a;
    return LLVMBuildAnd(e->b, a, b, "");
}

/* Row-major element index of coordinates c in a view (64-bit). */
static LLVMValueRef rowmajor(Emit *e, LLVMValueRef *dims, int rank, LLVMValueRef *c)
{
    LLVMValueRef lin = LLVMBuildSExt(e->b, c[0], i64t(e), "");
    for (int d = 1; d < rank; d++) {
        lin = LLVMBuildMul(e->b, lin, LLVMBuildZExt(e->b, dims[d], i64t(e), ""), "");
        lin = LLVMBuildAdd(e->b, lin, LLVMBuildSExt(e->b, c[d], i64t(e), ""), "");
    }
    return lin;
}

static int swizzle_mask(int swz) { return swz == 128 ? 0x70 : swz == 64 ? 0x30 : swz == 32 ? 0x10 : 0; }

/* Where the element at linear byte offset `o` of a stage of LDS tile `ty` is stored (ir_smem_offset,
 * docs/IR.md): a tile in column spans (rows wider than its swizzle W) first goes to its span,
 * q = o / W: (q % n) * rows * W + (q / n) * W + o % W; then the swizzle XOR. NULL: unchanged. */
static LLVMValueRef swizzle(Emit *e, LLVMValueRef o, const Type *ty)
{
    int m = ty ? swizzle_mask(ty->swizzle) : 0;
    if (!m) return o;
    int n = ir_smem_spans(ty);
    if (n > 1) {
        LLVMValueRef q = LLVMBuildUDiv(e->b, o, ci32(e, ty->swizzle), "");
        LLVMValueRef span = LLVMBuildURem(e->b, q, ci32(e, n), "");
        LLVMValueRef row = LLVMBuildUDiv(e->b, q, ci32(e, n), "");
        LLVMValueRef lo = LLVMBuildURem(e->b, o, ci32(e, ty->swizzle), "");
        LLVMValueRef in = LLVMBuildMul(e->b, row, ci32(e, ty->swizzle), "");
        in = LLVMBuildAdd(e->b, in, lo, "");
        LLVMValueRef at = LLVMBuildMul(e->b, span, ci32(e, ir_smem_rows(ty) * ty->swizzle), "");
        o = LLVMBuildAdd(e->b, at, in, "");
    }
    LLVMValueRef x = LLVMBuildAnd(e->b, LLVMBuildLShr(e->b, o, ci32(e, 3), ""), ci32(e, m), "");
    return LLVMBuildXor(e->b, o, x, "");
}

static LLVMValueRef lds_gep(Emit *e, LLVMValueRef base, LLVMValueRef off)
{
    return LLVMBuildGEP2(e->b, LLVMInt8TypeInContext(e->ctx), base, &off, 1, "");
}

/* What one lane group of a blocked op works on (each_group). */
typedef struct Group {
    const Op *op;
    Blocked bi;
    const Type *t;                 /* the vec's element type */
    LLVMValueRef tv, valid;        /* blocked_base */
    LLVMValueRef *dims, rsrc;      /* ld_blocked / st_blocked: the view */
    LLVMValueRef org[IR_MAX_RANK]; /* and the origin */
    LLVMValueRef base;             /* ld_smem_blocked / st_smem_blocked: the smem tile */
    const Type *st;                /* and its type */
    int64_t dim;                   /* iota_blocked */
} Group;

/* One lane group g (i32: a constant when unrolled, the loop's index for a lane array): a load returns
 * the group's V lanes (the scalar when V = 1, else <V x T>); a store gets them in `in`. */
typedef LLVMValueRef (*GroupFn)(Emit *e, const Group *G, LLVMValueRef g, LLVMValueRef in);

/* x + g * m, folded for a constant g. */
static LLVMValueRef add_scaled(Emit *e, LLVMValueRef x, LLVMValueRef g, int64_t m)
{
    if (LLVMIsAConstantInt(g)) {
        int64_t c = LLVMConstIntGetSExtValue(g) * m;
        return c ? LLVMBuildAdd(e->b, x, ci32(e, c), "") : x;
    }
    return LLVMBuildAdd(e->b, x, LLVMBuildMul(e->b, g, ci32(e, m), ""), "");
}

/* Runs fn on each of the R lane groups of a vec of type vt: unrolled into a register vec, or one loop
 * over the groups of a lane array. src: for a store, the vec's value, whose groups fn gets; load:
 * returns the vec fn's groups make up (NULL after an error). */
static LLVMValueRef each_group(Emit *e, const Group *G, const Type *vt, LLVMValueRef src, int load, GroupFn fn)
{
    int64_t R = G->bi.R;
    int Vn = (int)G->bi.V;
    const Type *t = vt->elem;
    if (is_lanes(vt)) {
        LLVMValueRef dst = load ? new_lanes(e, G->op, vt) : NULL;
        if (load && !dst) return NULL;
        Loop l;
        LLVMValueRef g = loop_begin(e, &l, R, "group");
        LLVMValueRef at = LLVMBuildMul(e->b, g, ci32(e, Vn), "");
        LLVMValueRef r = fn(e, G, g, src ? lanes_load(e, t, src, at, Vn) : NULL);
        if (load) lanes_store(e, t, r, dst, at, Vn);
        loop_end(e, &l);
        return dst;
    }
    LLVMValueRef acc = load ? LLVMGetUndef(lty(e, vt)) : NULL;
    LLVMValueRef *mv = ARENA_ARRAY(&e->arena, LLVMValueRef, Vn);
    for (int64_t g = 0; g < R; g++) {
        LLVMValueRef in = NULL;
        if (src && Vn == 1) {
            in = LLVMBuildExtractElement(e->b, src, ci32(e, g), "");
        } else if (src) {
            for (int k = 0; k < Vn; k++) mv[k] = ci32(e, g * Vn + k);
            in = LLVMBuildShuffleVector(e->b, src, LLVMGetUndef(LLVMTypeOf(src)), LLVMConstVector(mv, (unsigned)Vn), "");
        }
        LLVMValueRef r = fn(e, G, ci32(e, g), in);
        if (!load) continue;
        if (Vn == 1) acc = LLVMBuildInsertElement(e->b, acc, r, ci32(e, g), "");
        else
            for (int k = 0; k < Vn; k++)
                acc = LLVMBuildInsertElement(e->b, acc, LLVMBuildExtractElement(e->b, r, ci32(e, k), ""), ci32(e, g * Vn + k), "");
    }
    return acc;
}

/* ld_blocked / st_blocked, one group: a group wholly inside the view is one buffer access, a partial one
 * lane by lane with the lanes outside at BUF_OOB; a single-lane group is one access at BUF_OOB when
 * outside. */
static LLVMValueRef group_mem(Emit *e, const Group *G, LLVMValueRef g, LLVMValueRef in)
{
    const Blocked *bi = &G->bi;
    int store = in != NULL, rank = bi->rank, Vn = (int)bi->V, s = mem_bytes(G->t);
    LLVMValueRef *dims = G->dims, rsrc = G->rsrc, oob = LLVMConstInt(i32t(e), BUF_OOB, 0);
    LLVMValueRef f = add_scaled(e, G->tv, g, bi->B * bi->V);
    LLVMValueRef c[IR_MAX_RANK];
    for (int d = 0; d < rank; d++) c[d] = LLVMBuildAdd(e->b, G->org[d], tile_index(e, bi, f, d), "");
    LLVMValueRef ok = G->valid;
    for (int d = 0; d < rank - 1; d++) ok = and_opt(e, ok, LLVMBuildICmp(e->b, LLVMIntULT, c[d], dims[d], ""));
    LLVMValueRef last = c[rank - 1], dl = dims[rank - 1];
    LLVMValueRef byte = LLVMBuildTrunc(e->b, LLVMBuildMul(e->b, rowmajor(e, dims, rank, c), ci64(e, s), ""), i32t(e), "");
    if (Vn == 1) {
        LLVMValueRef inside = and_opt(e, ok, LLVMBuildICmp(e->b, LLVMIntULT, last, dl, ""));
        LLVMValueRef voff = LLVMBuildSelect(e->b, inside, byte, oob, "");
        if (store) {
            buf_store(e, to_carrier(e, in, G->t, 1), rsrc, voff);
            return NULL;
        }
        return from_carrier(e, buf_load(e, rsrc, voff, s), G->t, 1);
    }
    LLVMValueRef full = and_opt(e, ok, LLVMBuildICmp(e->b, LLVMIntULE, LLVMBuildAdd(e->b, last, ci32(e, Vn), ""), dl, ""));
    if (!ir_attr_int(G->op, "aligned", 1))   /* alignment not proven: a misaligned group goes lane by lane */
        full = LLVMBuildAnd(e->b, full, LLVMBuildICmp(e->b, LLVMIntEQ, LLVMBuildAnd(e->b, byte, ci32(e, Vn * s - 1), ""),
                                                      ci32(e, 0), ""), "");
    LLVMBasicBlockRef bf = LLVMAppendBasicBlockInContext(e->ctx, e->fn, store ? "stb.full" : "ldb.full");
    LLVMBasicBlockRef bp = LLVMAppendBasicBlockInContext(e->ctx, e->fn, store ? "stb.part" : "ldb.part");
    LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(e->ctx, e->fn, store ? "stb.done" : "ldb.done");
    LLVMBuildCondBr(e->b, full, bf, bp);
    LLVMPositionBuilderAtEnd(e->b, bf);
    LLVMValueRef vfull = NULL;
    if (store) buf_store(e, to_carrier(e, in, G->t, Vn), rsrc, byte);
    else vfull = from_carrier(e, buf_load(e, rsrc, byte, Vn * s), G->t, Vn);
    LLVMBuildBr(e->b, bj);
    LLVMPositionBuilderAtEnd(e->b, bp);
    LLVMValueRef vpart = store ? NULL : LLVMGetUndef(lanes_type(e, G->t, Vn));
    for (int k = 0; k < Vn; k++) {
        LLVMValueRef ck = LLVMBuildAdd(e->b, last, ci32(e, k), "");
        LLVMValueRef ik = and_opt(e, ok, LLVMBuildICmp(e->b, LLVMIntULT, ck, dl, ""));
        LLVMValueRef voff = LLVMBuildSelect(e->b, ik, LLVMBuildAdd(e->b, byte, ci32(e, k * s), ""), oob, "");
        if (store) {
            LLVMValueRef x = LLVMBuildExtractElement(e->b, in, ci32(e, k), "");
            buf_store(e, to_carrier(e, x, G->t, 1), rsrc, voff);
        } else {
            LLVMValueRef x = from_carrier(e, buf_load(e, rsrc, voff, s), G->t, 1);
            vpart = LLVMBuildInsertElement(e->b, vpart, x, ci32(e, k), "");
        }
    }
    LLVMBuildBr(e->b, bj);
    LLVMPositionBuilderAtEnd(e->b, bj);
    if (store) return NULL;
    LLVMValueRef phi = LLVMBuildPhi(e->b, LLVMTypeOf(vfull), "");
    LLVMValueRef iv[2] = {vfull, vpart};
    LLVMBasicBlockRef ib[2] = {bf, bp};
    LLVMAddIncoming(phi, iv, ib, 2);
    return phi;
}

static void emit_blocked_mem(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_BLOCKED;
    uint32_t vi = store ? 1 : 0;
    const Value *view = op->operands[vi];
    const Value *vec = store ? op->operands[0] : op->results[0];
    if (view->type->kind != TY_VIEW || !e->dims[view->id] || vec->type->kind != TY_VEC ||
        op->noperands != vi + 1 + (uint32_t)view->type->rank || vec->type->elem != view->type->elem) {
        error_at(e, op, "malformed '%s'", opname(op));
        return;
    }
    Group G = {.op = op, .t = vec->type->elem, .dims = e->dims[view->id], .rsrc = e->rsrc[view->id]};
    if (blocked_info(e, op, view->type->rank, vec->type->shape[0], &G.bi)) return;
    int s = mem_bytes(G.t), Vn = (int)G.bi.V;
    if (!carrier(e, Vn * s)) {
        error_at(e, op, "'%s': a lane group of %d bytes", opname(op), Vn * s);
        return;
    }
    for (int d = 0; d < G.bi.rank; d++) G.org[d] = V(e, op, op->operands[vi + 1 + d]);
    G.tv = blocked_base(e, &G.bi, store, &G.valid);
    LLVMValueRef r = each_group(e, &G, vec->type, store ? V(e, op, vec) : NULL, !store, group_mem);
    if (!store) e->val[vec->id] = r;
}

/* iota_blocked, one group: the index along dim of each lane (a replica thread's: its first replica's). */
static LLVMValueRef group_iota(Emit *e, const Group *G, LLVMValueRef g, LLVMValueRef in)
{
    (void)in;
    const Blocked *bi = &G->bi;
    LLVMValueRef idx = tile_index(e, bi, add_scaled(e, G->tv, g, bi->B * bi->V), (int)G->dim);
    LLVMValueRef v = bi->V == 1 ? NULL : LLVMGetUndef(LLVMVectorType(i32t(e), (unsigned)bi->V));
    for (int k = 0; k < bi->V; k++) {
        LLVMValueRef x = (G->dim == bi->rank - 1 && k) ? LLVMBuildAdd(e->b, idx, ci32(e, k), "") : idx;
        if (G->valid) x = LLVMBuildSelect(e->b, G->valid, x, ci32(e, 0), "");
        if (bi->V == 1) return x;
        v = LLVMBuildInsertElement(e->b, v, x, ci32(e, k), "");
    }
    return v;
}

static void emit_iota_blocked(Emit *e, const Op *op)
{
    const Value *res = op->results[0];
    Group G = {.op = op};
    if (res->type->kind != TY_VEC || (res->type->elem->kind != TY_I32 && res->type->elem->kind != TY_U32)) {
        error_at(e, op, "'iota_blocked' gives a vec of i32");
        return;
    }
    if (blocked_info(e, op, 0, res->type->shape[0], &G.bi)) return;
    G.t = res->type->elem;
    G.dim = ir_attr_int(op, "dim", -1);
    if (G.dim < 0 || G.dim >= G.bi.rank) {
        error_at(e, op, "'iota_blocked': dim %lld out of range", (long long)G.dim);
        return;
    }
    G.tv = blocked_base(e, &G.bi, 0, &G.valid);
    e->val[res->id] = each_group(e, &G, res->type, NULL, 1, group_iota);
}

/* ld_smem_blocked / st_smem_blocked, one group: one LDS vector access at the swizzled offset (a
 * replica thread loads its first replica's lanes and stores nothing). Aligned to the group's bytes up
 * to 16: a swizzle moves 16-byte chunks. */
static LLVMValueRef group_smem(Emit *e, const Group *G, LLVMValueRef g, LLVMValueRef in)
{
    const Blocked *bi = &G->bi;
    const Type *t = G->t;
    int s = mem_bytes(t), Vn = (int)bi->V, store = in != NULL;
    LLVMTypeRef et = elem_mem_type(e, t), gt = Vn == 1 ? et : LLVMVectorType(et, (unsigned)Vn);
    LLVMValueRef f = add_scaled(e, G->tv, g, bi->B * bi->V);
    LLVMValueRef p = lds_gep(e, G->base, swizzle(e, LLVMBuildMul(e->b, f, ci32(e, s), ""), G->st));
    LLVMBasicBlockRef bd = NULL, bj = NULL, from = LLVMGetInsertBlock(e->b);
    if (G->valid) {
        bd = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "sblk.do");
        bj = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "sblk.done");
        LLVMBuildCondBr(e->b, G->valid, bd, bj);
        LLVMPositionBuilderAtEnd(e->b, bd);
    }
    LLVMValueRef x = NULL;
    if (store) {
        if (t->kind == TY_I1) in = LLVMBuildZExt(e->b, in, gt, "");
        LLVMValueRef w = LLVMBuildStore(e->b, in, p);
        LLVMSetAlignment(w, (unsigned)(Vn * s > 16 ? 16 : Vn * s));
    } else {
        x = LLVMBuildLoad2(e->b, gt, p, "");
        LLVMSetAlignment(x, (unsigned)(Vn * s > 16 ? 16 : Vn * s));
        if (t->kind == TY_I1) x = LLVMBuildICmp(e->b, LLVMIntNE, x, LLVMConstNull(gt), "");
    }
    if (G->valid) {
        LLVMBuildBr(e->b, bj);
        LLVMPositionBuilderAtEnd(e->b, bj);
        if (!store) {
            LLVMValueRef phi = LLVMBuildPhi(e->b, LLVMTypeOf(x), "");
            LLVMValueRef iv[2] = {x, LLVMConstNull(LLVMTypeOf(x))};
            LLVMBasicBlockRef ib[2] = {bd, from};
            LLVMAddIncoming(phi, iv, ib, 2);
            x = phi;
        }
    }
    return x;
}

static void emit_smem_blocked(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_SMEM_BLOCKED;
    const Value *sm = op->operands[store ? 1 : 0];
    const Value *vec = store ? op->operands[0] : op->results[0];
    const Type *st = sm->type;
    if (st->kind != TY_SMEM || st->stages != 1 || vec->type->kind != TY_VEC || vec->type->elem != st->elem) {
        error_at(e, op, "'%s' needs one smem tile and a vec of its element", opname(op));
        return;
    }
    Group G = {.op = op, .t = st->elem, .st = st};
    if (blocked_info(e, op, st->rank, vec->type->shape[0], &G.bi)) return;
    if (G.bi.T * mem_bytes(G.t) > ir_type_smem_bytes(st)) {
        error_at(e, op, "'%s': the shape covers more than the smem tile", opname(op));
        return;
    }
    G.base = V(e, op, sm);
    G.tv = blocked_base(e, &G.bi, store, &G.valid);
    LLVMValueRef r = each_group(e, &G, vec->type, store ? V(e, op, vec) : NULL, !store, group_smem);
    if (!store) e->val[vec->id] = r;
}

static void emit_smem_addr(Emit *e, const Op *op)
{
    const Value *t = op->operands[0];
    LLVMValueRef base = V(e, op, t), r;
    if (op->code == OP_SMEM_STAGE) {
        const Op *alloc = t->def;
        if (!alloc || alloc->code != OP_SHARED_ALLOC) {
            error_at(e, op, "'smem_stage' needs the ring straight from its shared_alloc");
            return;
        }
        int64_t stride = round_up(ir_type_smem_bytes(t->type), ir_attr_int(alloc, "align", 16));
        r = lds_gep(e, base, LLVMBuildMul(e->b, V(e, op, op->operands[1]), ci32(e, stride), ""));
    } else {
        const Type *ty = t->type;
        LLVMValueRef lin = NULL;
        for (int i = 0; i < ty->rank; i++) {
            LLVMValueRef ix = V(e, op, op->operands[1 + i]);
            lin = i == 0 ? ix : LLVMBuildAdd(e->b, LLVMBuildMul(e->b, lin, ci32(e, ty->shape[i]), ""), ix, "");
        }
        LLVMValueRef o = LLVMBuildMul(e->b, lin, ci32(e, mem_bytes(ty->elem)), "");
        r = lds_gep(e, base, swizzle(e, o, ty));
    }
    e->val[op->results[0]->id] = r;
}

/* ---------------------------------------------------------------- matrix ops (MFMA) */

/* The accumulator layout on AMD targets (docs/IR.md, "Matrix ops"): in a group of B threads (W = B / 64
 * wavefronts), wave w owns the rows [w R, (w + 1) R) of the M x N accumulator, R = M / W, as R / 32 x
 * N / 32 blocks of 32 x 32 in row-major block order; lane j = 16 blk + jj of wave lane l holds
 * row = w R + 32 (blk / nb) + 8 (jj / 4) + 4 (l / 32) + jj % 4, col = 32 (blk % nb) + l % 32 (nb = N / 32),
 * the output layout of v_mfma_f32_32x32x8{bf16_1k,f16}. */
typedef struct Mfma {
    int64_t M, N, K, B, W, R, nb, E;
    LLVMValueRef l32;     /* l % 32 */
    LLVMValueRef hi;      /* l / 32 */
    LLVMValueRef wrow;    /* w R */
} Mfma;

static int mfma_info(Emit *e, const Op *op, const Value *vec, int rank, Mfma *f)
{
    const Attr *sh = ir_attr_find(op, "shape");
    memset(f, 0, sizeof *f);
    f->B = ir_attr_int(op, "threads", 0);
    if (!sh || sh->kind != ATTR_INTS || sh->nints != rank || vec->type->kind != TY_VEC) {
        error_at(e, op, "malformed '%s': needs shape and threads attributes and a vec", opname(op));
        return -1;
    }
    int64_t threads = e->k->block[0] * e->k->block[1] * e->k->block[2];
    f->M = sh->ints[0];
    f->N = sh->ints[1];
    f->K = rank == 3 ? sh->ints[2] : 0;
    if (f->B != threads || f->B % 64) {
        error_at(e, op, "'%s' on %lld threads: an AMD matrix op is issued by the whole block (a multiple of 64 threads, "
                        "here %lld)", opname(op), (long long)f->B, (long long)threads);
        return -1;
    }
    f->W = f->B / 64;
    if (f->M <= 0 || f->M % (32 * f->W) || f->N <= 0 || f->N % 32 || (rank == 3 && (f->K <= 0 || f->K % 8))) {
        char ks[32] = "";
        if (rank == 3) snprintf(ks, sizeof ks, ", %lld", (long long)f->K);
        error_at(e, op, "'%s' of shape [%lld, %lld%s]: the MFMA 32x32x8 layout needs M a multiple of 32 x %lld "
                        "wavefronts, N of 32 and K of 8", opname(op), (long long)f->M, (long long)f->N, ks,
                 (long long)f->W);
        return -1;
    }
    f->R = f->M / f->W;
    f->nb = f->N / 32;
    f->E = f->M * f->N / f->B;
    if (vec->type->shape[0] != f->E) {
        error_at(e, op, "'%s': %lld accumulator lanes, the MFMA layout gives %lld", opname(op),
                 (long long)vec->type->shape[0], (long long)f->E);
        return -1;
    }
    LLVMValueRef l = LLVMBuildAnd(e->b, e->tlin, ci32(e, 63), "");
    f->l32 = LLVMBuildAnd(e->b, l, ci32(e, 31), "");
    f->hi = LLVMBuildLShr(e->b, l, ci32(e, 5), "");
    f->wrow = LLVMBuildMul(e->b, LLVMBuildLShr(e->b, e->tlin, ci32(e, 6), ""), ci32(e, f->R), "wrow");
    return 0;
}

/* Row and column (i32 values) of accumulator lane j (i32: a constant when unrolled) for this thread. */
static void mfma_pos(Emit *e, const Mfma *f, LLVMValueRef j, LLVMValueRef *row, LLVMValueRef *col)
{
    LLVMValueRef blk = LLVMBuildLShr(e->b, j, ci32(e, 4), ""), jj = LLVMBuildAnd(e->b, j, ci32(e, 15), "");
    LLVMValueRef br = LLVMBuildMul(e->b, LLVMBuildUDiv(e->b, blk, ci32(e, f->nb), ""), ci32(e, 32), "");
    LLVMValueRef in = LLVMBuildAdd(e->b, LLVMBuildMul(e->b, LLVMBuildLShr(e->b, jj, ci32(e, 2), ""), ci32(e, 8), ""),
                                   LLVMBuildAnd(e->b, jj, ci32(e, 3), ""), "");
    LLVMValueRef r = LLVMBuildAdd(e->b, f->wrow, LLVMBuildAdd(e->b, br, in, ""), "");
    *row = LLVMBuildAdd(e->b, r, LLVMBuildShl(e->b, f->hi, ci32(e, 2), ""), "");
    *col = LLVMBuildAdd(e->b, f->l32, LLVMBuildMul(e->b, LLVMBuildURem(e->b, blk, ci32(e, f->nb), ""), ci32(e, 32), ""), "");
}

/* Four 16-bit operand elements for one MFMA: from element (r, k0..k0+3) of an LDS tile with rows of
 * `rowbytes` (contiguous: one 8-byte LDS read, since a swizzle moves whole 16-byte chunks), or, when
 * kstride > 0, the elements (k0 + i, r) of a K-major tile one 2-byte read each. */
static LLVMValueRef mfma_operand(Emit *e, LLVMValueRef base, LLVMValueRef r, LLVMValueRef k0, int64_t rowbytes,
                                 int64_t kstride, const Type *m)
{
    LLVMTypeRef i16 = LLVMInt16TypeInContext(e->ctx), v4 = LLVMVectorType(i16, 4);
    if (!kstride) {
        LLVMValueRef o = LLVMBuildAdd(e->b, LLVMBuildMul(e->b, r, ci32(e, rowbytes), ""),
                                      LLVMBuildShl(e->b, k0, ci32(e, 1), ""), "");
        LLVMValueRef x = LLVMBuildLoad2(e->b, v4, lds_gep(e, base, swizzle(e, o, m)), "");
        LLVMSetAlignment(x, 8);
        return x;
    }
    LLVMValueRef v = LLVMGetUndef(v4);
    for (int i = 0; i < 4; i++) {
        LLVMValueRef kr = LLVMBuildAdd(e->b, k0, ci32(e, i), "");
        LLVMValueRef o = LLVMBuildAdd(e->b, LLVMBuildMul(e->b, kr, ci32(e, kstride), ""),
                                      LLVMBuildShl(e->b, r, ci32(e, 1), ""), "");
        LLVMValueRef x = LLVMBuildLoad2(e->b, i16, lds_gep(e, base, swizzle(e, o, m)), "");
        LLVMSetAlignment(x, 2);
        v = LLVMBuildInsertElement(e->b, v, x, ci32(e, i), "");
    }
    return v;
}

/* mma_acc {shape = [M, N, K], trans_b, threads}: per 32x32 block of the wave and per k8 step one
 * llvm.amdgcn.mfma.f32.32x32x8bf16.1k (bf16) or .32x32x8f16 (f16) on a 16-float slice of the
 * accumulator. Operand lanes: A[row = l % 32 of the block][k = 4 (l / 32) + i], B[k = 4 (l / 32) + i][col =
 * l % 32] (with trans_b B is stored [N, K], so both reads are 8 contiguous bytes). */
static void emit_mfma(Emit *e, const Op *op)
{
    const Value *a = op->operands[0], *b = op->operands[1], *acc = op->operands[2], *res = op->results[0];
    Mfma f;
    if (mfma_info(e, op, res, 3, &f)) return;
    const Type *at = a->type, *bt = b->type;
    int trans = (int)ir_attr_int(op, "trans_b", 0);
    if (at->kind != TY_SMEM || bt->kind != TY_SMEM || at->elem != bt->elem || (!is_f16ish(at->elem)) ||
        at->shape[0] != f.M || at->shape[1] != f.K || bt->shape[trans ? 0 : 1] != f.N || bt->shape[trans ? 1 : 0] != f.K) {
        error_at(e, op, "'mma_acc' needs bf16 or f16 smem operands a [M, K] and b [%s]", trans ? "N, K" : "K, N");
        return;
    }
    if (acc->type != res->type || res->type->elem->kind != TY_F32) {
        error_at(e, op, "'mma_acc' needs an f32 accumulator of the result's type");
        return;
    }
    int bf = at->elem->kind == TY_BF16;
    LLVMTypeRef f16v = LLVMVectorType(LLVMHalfTypeInContext(e->ctx), 4);
    const char *name = bf ? "llvm.amdgcn.mfma.f32.32x32x8bf16.1k" : "llvm.amdgcn.mfma.f32.32x32x8f16";
    LLVMValueRef A = V(e, op, a), Bp = V(e, op, b), cur = V(e, op, acc);
    const Type *ma = at, *mb = bt;
    LLVMValueRef k4 = LLVMBuildShl(e->b, f.hi, ci32(e, 2), "");   /* 4 (l / 32): this lane's k within a step */
    LLVMValueRef *idx = ARENA_ARRAY(&e->arena, LLVMValueRef, 16);
    /* per 32x32 block of 16 lanes: unrolled into a register vec, or a loop over the blocks of a lane array */
    int lanes = is_lanes(res->type);
    int64_t nblk = f.E / 16;
    LLVMValueRef dst = lanes ? new_lanes(e, op, res->type) : NULL;
    if (lanes && !dst) return;
    for (int64_t b0 = 0; b0 < (lanes ? 1 : nblk); b0++) {
        Loop l;
        LLVMValueRef blk = lanes ? loop_begin(e, &l, nblk, "mfma") : ci32(e, b0), c, at16 = NULL;
        if (lanes) {
            at16 = LLVMBuildMul(e->b, blk, ci32(e, 16), "");
            c = lanes_load(e, res->type->elem, cur, at16, 16);
        } else {
            for (int i = 0; i < 16; i++) idx[i] = ci32(e, b0 * 16 + i);
            c = LLVMBuildShuffleVector(e->b, cur, LLVMGetUndef(LLVMTypeOf(cur)), LLVMConstVector(idx, 16), "");
        }
        LLVMValueRef brow = LLVMBuildMul(e->b, LLVMBuildUDiv(e->b, blk, ci32(e, f.nb), ""), ci32(e, 32), "");
        LLVMValueRef bcl = LLVMBuildMul(e->b, LLVMBuildURem(e->b, blk, ci32(e, f.nb), ""), ci32(e, 32), "");
        LLVMValueRef arow = LLVMBuildAdd(e->b, f.wrow, LLVMBuildAdd(e->b, f.l32, brow, ""), "");
        LLVMValueRef bcol = LLVMBuildAdd(e->b, f.l32, bcl, "");
        for (int64_t k = 0; k < f.K; k += 8) {
            LLVMValueRef k0 = LLVMBuildAdd(e->b, k4, ci32(e, k), "");
            LLVMValueRef av = mfma_operand(e, A, arow, k0, f.K * 2, 0, ma);
            LLVMValueRef bv = trans ? mfma_operand(e, Bp, bcol, k0, f.K * 2, 0, mb) : mfma_operand(e, Bp, bcol, k0, 0, f.N * 2, mb);
            if (!bf) {
                av = LLVMBuildBitCast(e->b, av, f16v, "");
                bv = LLVMBuildBitCast(e->b, bv, f16v, "");
            }
            LLVMValueRef args[6] = {av, bv, c, ci32(e, 0), ci32(e, 0), ci32(e, 0)};
            c = intrinsic(e, name, NULL, 0, args, 6);
        }
        if (lanes) {
            lanes_store(e, res->type->elem, c, dst, at16, 16);
            loop_end(e, &l);
        } else {
            for (int i = 0; i < 16; i++)
                cur = LLVMBuildInsertElement(e->b, cur, LLVMBuildExtractElement(e->b, c, ci32(e, i), ""), ci32(e, b0 * 16 + i), "");
        }
    }
    e->val[res->id] = lanes ? dst : cur;
}

/* st_acc %vec, %view, %o0, %o1 / st_smem_acc %vec, %smem: every lane to its element. Global: one buffer
 * store per lane, at offset 0x80000000 (dropped by the range check) for elements outside the view. */
static void emit_st_acc(Emit *e, const Op *op)
{
    int global = op->code == OP_ST_ACC;
    const Value *vec = op->operands[0], *dst = op->operands[1];
    Mfma f;
    if (mfma_info(e, op, vec, 2, &f)) return;
    const Type *t = vec->type->elem;
    int es = mem_bytes(t);
    if (global ? (op->noperands != 4 || dst->type->kind != TY_VIEW || dst->type->rank != 2 || !e->dims[dst->id] ||
                  !e->rsrc[dst->id] || dst->type->elem != t)
               : (dst->type->kind != TY_SMEM || dst->type->rank != 2 || dst->type->shape[0] != f.M ||
                  dst->type->shape[1] != f.N || dst->type->elem != t)) {
        error_at(e, op, "malformed '%s'", opname(op));
        return;
    }
    LLVMValueRef src = V(e, op, vec);
    LLVMValueRef o0 = global ? V(e, op, op->operands[2]) : NULL, o1 = global ? V(e, op, op->operands[3]) : NULL;
    LLVMValueRef base = V(e, op, dst);
    const Type *m = global ? NULL : dst->type;
    /* per lane: unrolled for a register vec, a loop over the lanes of a lane array */
    int lanes = is_lanes(vec->type);
    for (int64_t j0 = 0; j0 < (lanes ? 1 : f.E); j0++) {
        Loop l;
        LLVMValueRef j = lanes ? loop_begin(e, &l, f.E, "acc") : ci32(e, j0);
        LLVMValueRef row, col, x = lanes ? lanes_load(e, t, src, j, 1) : LLVMBuildExtractElement(e->b, src, j, "");
        mfma_pos(e, &f, j, &row, &col);
        if (global) {
            LLVMValueRef *d = e->dims[dst->id];
            LLVMValueRef gr = LLVMBuildAdd(e->b, o0, row, ""), gc = LLVMBuildAdd(e->b, o1, col, "");
            LLVMValueRef ok = LLVMBuildAnd(e->b, LLVMBuildICmp(e->b, LLVMIntULT, gr, d[0], ""),
                                           LLVMBuildICmp(e->b, LLVMIntULT, gc, d[1], ""), "");
            LLVMValueRef c[2] = {gr, gc};
            LLVMValueRef off = LLVMBuildMul(e->b, rowmajor(e, d, 2, c), ci64(e, es), "");
            ok = LLVMBuildAnd(e->b, ok, LLVMBuildICmp(e->b, LLVMIntULE, off, ci64(e, 0x7FFFFFFF), ""), "");
            LLVMValueRef voff = LLVMBuildSelect(e->b, ok, LLVMBuildTrunc(e->b, off, i32t(e), ""), LLVMConstInt(i32t(e), BUF_OOB, 0), "");
            buf_store(e, to_carrier(e, x, t, 1), e->rsrc[dst->id], voff);
        } else {
            LLVMValueRef o = LLVMBuildMul(e->b, LLVMBuildAdd(e->b, LLVMBuildMul(e->b, row, ci32(e, f.N), ""), col, ""),
                                          ci32(e, es), "");
            mem_store(e, t, x, lds_gep(e, base, swizzle(e, o, m)));
        }
        if (lanes) loop_end(e, &l);
    }
}

/* ---------------------------------------------------------------- barriers and warp-pipeline ops */

static void call_void(Emit *e, const char *name)
{
    LLVMValueRef fn = LLVMGetNamedFunction(e->mod, name);
    LLVMBuildCall2(e->b, LLVMGlobalGetValueType(fn), fn, NULL, 0, "");
}

static void sched_barrier(Emit *e)
{
    LLVMValueRef z = ci32(e, 0);
    intrinsic(e, "llvm.amdgcn.sched.barrier", NULL, 0, &z, 1);
}

static void s_barrier(Emit *e) { intrinsic(e, "llvm.amdgcn.s.barrier", NULL, 0, NULL, 0); }

static void emit_pipeline_op(Emit *e, const Op *op)
{
    switch (op->code) {
    case OP_AMD_SETPRIO: {
        int64_t p = ir_attr_int(op, "prio", -1);
        if (p < 0 || p > 3) {
            error_at(e, op, "'amd_setprio' needs prio 0..3, got %lld", (long long)p);
            return;
        }
        LLVMValueRef a = LLVMConstInt(LLVMInt16TypeInContext(e->ctx), (unsigned long long)p, 0);
        intrinsic(e, "llvm.amdgcn.s.setprio", NULL, 0, &a, 1);
        return;
    }
    case OP_AMD_STAGE_BARRIER:
        sched_barrier(e);
        if (ir_attr_int(op, "lds_wait", 0)) call_void(e, "tilec.block_barrier");   /* release fence = s_waitcnt lgkmcnt(0) */
        else s_barrier(e);
        sched_barrier(e);
        return;
    case OP_AMD_COND_BARRIER: {
        const char *g = ir_attr_str(op, "group", "");
        int high = strcmp(g, "high") == 0;
        if (!high && strcmp(g, "low") != 0) {
            error_at(e, op, "'amd_cond_barrier' needs group \"high\" or \"low\", got \"%s\"", g);
            return;
        }
        LLVMValueRef grp = LLVMBuildUDiv(e->b, e->tlin, ci32(e, AMD_PIPELINE_GROUP_THREADS), "pipeline.group");
        LLVMValueRef p = LLVMBuildICmp(e->b, high ? LLVMIntNE : LLVMIntEQ, grp, ci32(e, 0), high ? "warp.high" : "warp.low");
        LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "cond_barrier");
        LLVMBasicBlockRef bc = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "cond_barrier.cont");
        LLVMBuildCondBr(e->b, p, bb, bc);
        LLVMPositionBuilderAtEnd(e->b, bb);
        s_barrier(e);
        LLVMBuildBr(e->b, bc);
        LLVMPositionBuilderAtEnd(e->b, bc);
        return;
    }
    default: ir_unreachable("not a pipeline op");
    }
}

/* ---------------------------------------------------------------- control flow */

static void emit_block(Emit *e, const Block *b, Flow *f);

/* The slots of values carried by structured flow (if results, loop-carried values): an alloca of the
 * value, or a lane array the value is copied into. `at` locates errors. */
static LLVMValueRef *make_slots(Emit *e, const Op *at, Value *const *vals, uint32_t n)
{
    LLVMValueRef *s = ARENA_ARRAY(&e->arena, LLVMValueRef, n ? n : 1);
    for (uint32_t i = 0; i < n; i++) {
        const Type *t = vals[i]->type;
        if (is_lanes(t)) {
            s[i] = new_lanes(e, at, t);
            if (!s[i]) return NULL;
        } else {
            s[i] = alloca_of(e, lty(e, t), nm(vals[i]));
        }
    }
    return s;
}

static void store_slots(Emit *e, const Op *op, LLVMValueRef *slots, Value *const *vals, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (is_lanes(vals[i]->type)) lanes_copy(e, vals[i]->type, slots[i], V(e, op, vals[i]));
        else LLVMBuildStore(e->b, V(e, op, vals[i]), slots[i]);
    }
}

/* The value of a slot: a result of if/for/loop reads it (a lane array is the slot itself: the op runs
 * again only after every use of this value, by SSA), a block argument of a loop copies it (a lane
 * array into one of its own, as the body's yield may write the slot while the argument is read). */
static LLVMValueRef read_slot(Emit *e, const Op *at, LLVMValueRef slot, const Value *v, int arg)
{
    if (!is_lanes(v->type)) return load_slot(e, slot, v);
    if (!arg) return slot;
    LLVMValueRef a = new_lanes(e, at, v->type);
    if (a) lanes_copy(e, v->type, a, slot);
    return a;
}

static int ends_in_terminator(const Block *b)
{
    return b && b->last && (ir_op_info[b->last->code].props & IR_PTERM);
}

static void emit_if(Emit *e, const Op *op, Flow *outer)
{
    LLVMValueRef *slots = make_slots(e, op, op->results, op->nresults);
    if (!slots) return;
    LLVMBasicBlockRef bt = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "if.then");
    LLVMBasicBlockRef be = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "if.else");
    LLVMBasicBlockRef bm = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "if.end");
    LLVMBuildCondBr(e->b, V(e, op, op->operands[0]), bt, be);
    Flow f = {op, slots, bm, NULL, outer->loop};
    for (int r = 0; r < 2; r++) {
        LLVMPositionBuilderAtEnd(e->b, r ? be : bt);
        const Block *b = op->regions[r].first;
        emit_block(e, b, &f);
        if (!ends_in_terminator(b)) LLVMBuildBr(e->b, bm);
    }
    LLVMPositionBuilderAtEnd(e->b, bm);
    for (uint32_t i = 0; i < op->nresults; i++) e->val[op->results[i]->id] = read_slot(e, op, slots[i], op->results[i], 0);
}

static void emit_for(Emit *e, const Op *op, Flow *outer)
{
    const Block *b = op->regions[0].first;
    if (op->noperands < 3 || !b || b->nargs != op->noperands - 2 || op->nresults != op->noperands - 3) {
        error_at(e, op, "malformed 'for'");
        return;
    }
    Value *iv = b->args[0];
    const Type *it = iv->type;
    LLVMValueRef ivs = alloca_of(e, lty(e, it), nm(iv));
    if (!ir_type_is_int(it) || it->kind == TY_I1 || op->operands[0]->type != it || op->operands[1]->type != it ||
        op->operands[2]->type != it) {
        error_at(e, op, "'for' needs bounds, step and induction variable of one integer type");
        return;
    }
    LLVMValueRef *slots = make_slots(e, op, b->args + 1, b->nargs - 1);
    if (!slots) return;
    LLVMBuildStore(e->b, V(e, op, op->operands[0]), ivs);
    store_slots(e, op, slots, op->operands + 3, op->noperands - 3);
    LLVMBasicBlockRef bh = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "for.head");
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "for.body");
    LLVMBasicBlockRef bl = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "for.latch");
    LLVMBasicBlockRef bx = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "for.exit");
    LLVMBuildBr(e->b, bh);
    LLVMPositionBuilderAtEnd(e->b, bh);
    LLVMValueRef i = load_slot(e, ivs, iv);
    LLVMValueRef c = LLVMBuildICmp(e->b, ir_type_is_signed(it) ? LLVMIntSLT : LLVMIntULT, i, V(e, op, op->operands[1]), "");
    LLVMBuildCondBr(e->b, c, bb, bx);
    LLVMPositionBuilderAtEnd(e->b, bb);
    e->val[iv->id] = i;
    for (uint32_t a = 1; a < b->nargs; a++) e->val[b->args[a]->id] = read_slot(e, op, slots[a - 1], b->args[a], 1);
    Flow f = {op, slots, bl, bx, outer->loop};
    f.loop = &f;
    emit_block(e, b, &f);
    if (!ends_in_terminator(b)) LLVMBuildBr(e->b, bl);
    LLVMPositionBuilderAtEnd(e->b, bl);
    LLVMValueRef i2 = LLVMBuildLoad2(e->b, lty(e, it), ivs, "");
    LLVMBuildStore(e->b, LLVMBuildAdd(e->b, i2, V(e, op, op->operands[2]), ""), ivs);
    LLVMBuildBr(e->b, bh);
    LLVMPositionBuilderAtEnd(e->b, bx);
    for (uint32_t r = 0; r < op->nresults; r++) e->val[op->results[r]->id] = read_slot(e, op, slots[r], op->results[r], 0);
}

static void emit_loop(Emit *e, const Op *op, Flow *outer)
{
    (void)outer;
    const Block *b = op->regions[0].first;
    if (!b || b->nargs != op->noperands || op->nresults != op->noperands) {
        error_at(e, op, "malformed 'loop'");
        return;
    }
    LLVMValueRef *slots = make_slots(e, op, b->args, b->nargs);
    if (!slots) return;
    store_slots(e, op, slots, op->operands, op->noperands);
    LLVMBasicBlockRef bh = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "loop.head");
    LLVMBasicBlockRef bx = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "loop.exit");
    LLVMBuildBr(e->b, bh);
    LLVMPositionBuilderAtEnd(e->b, bh);
    for (uint32_t a = 0; a < b->nargs; a++) e->val[b->args[a]->id] = read_slot(e, op, slots[a], b->args[a], 1);
    Flow f = {op, slots, bh, bx, NULL};
    f.loop = &f;
    emit_block(e, b, &f);
    if (!ends_in_terminator(b)) LLVMBuildBr(e->b, bh);
    LLVMPositionBuilderAtEnd(e->b, bx);
    for (uint32_t r = 0; r < op->nresults; r++) e->val[op->results[r]->id] = read_slot(e, op, slots[r], op->results[r], 0);
}

static void emit_terminator(Emit *e, const Op *op, Flow *f)
{
    switch (op->code) {
    case OP_RETURN:
        LLVMBuildRetVoid(e->b);
        return;
    case OP_YIELD:
        if (!f->op) {
            error_at(e, op, "'yield' outside of a region");
            return;
        }
        if (f->op->code == OP_IF || f->op->code == OP_FOR || f->op->code == OP_LOOP)
            store_slots(e, op, f->slots, op->operands, op->noperands);
        LLVMBuildBr(e->b, f->next);
        return;
    case OP_BREAK: case OP_CONTINUE:
        if (!f->loop) {
            error_at(e, op, "'%s' outside of a loop", opname(op));
            return;
        }
        store_slots(e, op, f->loop->slots, op->operands, op->noperands);
        LLVMBuildBr(e->b, op->code == OP_BREAK ? f->loop->exit : f->loop->next);
        return;
    default: ir_unreachable("not a terminator");
    }
}

/* elect at block level: thread 0 runs the region. */
static void emit_elect(Emit *e, const Op *op, Flow *outer)
{
    LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "elect");
    LLVMBasicBlockRef bm = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "elect.end");
    LLVMBuildCondBr(e->b, LLVMBuildICmp(e->b, LLVMIntEQ, e->tlin, ci32(e, 0), ""), bb, bm);
    LLVMPositionBuilderAtEnd(e->b, bb);
    Flow f = {op, NULL, bm, NULL, outer->loop};
    emit_block(e, op->regions[0].first, &f);
    if (!ends_in_terminator(op->regions[0].first)) LLVMBuildBr(e->b, bm);
    LLVMPositionBuilderAtEnd(e->b, bm);
}

/* ---------------------------------------------------------------- ops */

/* ---------------------------------------------------------------- layouts (ir/layout.c; docs/IR.md "Layouts")
 * reduce, broadcast, reshape, ld_lanes, st_lanes, iota_lanes on register vecs (at most REG_LANES
 * lanes: a located error beyond). A reduction combines a thread's lanes, then the lanes of a wave
 * with ds_bpermute butterflies, then the waves through the scratch LDS tile (the first lane of each
 * part stores it; s_barrier; lane l of every wave loads part l modulo the parts rounded up to a
 * power of two and the wave butterflies them; s_barrier); a rank-1 tile's scalar goes through the
 * scratch also when replica threads must take it. */

static int op_layout(Emit *e, const Op *op, Layout *L, const Value *big)
{
    const char *why = NULL;
    if (layout_of_op(L, op, &why)) {
        error_at(e, op, "'%s' has a malformed layout: %s", opname(op), why);
        return -1;
    }
    if (big && is_lanes(big->type)) {
        error_at(e, op, "'%s' of %lld values per thread: AMD targets lower it for at most %d (use more threads or a "
                        "smaller tile)", opname(op), (long long)big->type->shape[0], REG_LANES);
        return -1;
    }
    return 0;
}

/* The coordinate along dim d that the thread's factors give (i32). */
static LLVMValueRef lay_thread_coord(Emit *e, const Layout *L, int d)
{
    LLVMValueRef acc = ci32(e, 0);
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane || f->dim != d) continue;
        LLVMValueRef x = LLVMBuildURem(e->b, LLVMBuildUDiv(e->b, e->tlin, ci32(e, f->src), ""), ci32(e, f->n), "");
        acc = LLVMBuildAdd(e->b, acc, LLVMBuildMul(e->b, x, ci32(e, f->stride), ""), "");
    }
    return acc;
}

/* i1: the thread is the first of its replicas. */
static LLVMValueRef lay_first(Emit *e, const Layout *L)
{
    LLVMValueRef p = LLVMConstInt(LLVMInt1TypeInContext(e->ctx), 1, 0);
    for (int i = 0; i < L->nf; i++) {
        const LayFactor *f = &L->f[i];
        if (f->lane || f->dim >= 0) continue;
        LLVMValueRef x = LLVMBuildURem(e->b, LLVMBuildUDiv(e->b, e->tlin, ci32(e, f->src), ""), ci32(e, f->n), "");
        p = LLVMBuildAnd(e->b, p, LLVMBuildICmp(e->b, LLVMIntEQ, x, ci32(e, 0), ""), "");
    }
    return p;
}

static LLVMValueRef red_combine(Emit *e, const char *kind, const Type *t, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[2] = {a, b};
    LLVMTypeRef at = LLVMTypeOf(a);
    int sum = strcmp(kind, "sum") == 0, mx = strcmp(kind, "max") == 0;
    if (ir_type_is_float(t)) return sum ? LLVMBuildFAdd(e->b, a, b, "") : intrinsic(e, mx ? "llvm.maxnum" : "llvm.minnum", &at, 1, args, 2);
    if (sum) return LLVMBuildAdd(e->b, a, b, "");
    int sg = ir_type_is_signed(t);
    return intrinsic(e, mx ? (sg ? "llvm.smax" : "llvm.umax") : (sg ? "llvm.smin" : "llvm.umin"), &at, 1, args, 2);
}

static LLVMValueRef red_identity(Emit *e, const char *kind, const Type *t)
{
    LLVMTypeRef lt = scalar_type(e, t->kind);
    int mx = strcmp(kind, "max") == 0, b64 = ir_type_bits(t) == 64;
    if (strcmp(kind, "sum") == 0) return LLVMConstNull(lt);
    if (ir_type_is_float(t)) return LLVMConstReal(lt, mx ? -HUGE_VAL : HUGE_VAL);
    if (ir_type_is_signed(t))
        return LLVMConstInt(lt, mx ? (b64 ? 0x8000000000000000ull : 0x80000000ull) : (b64 ? 0x7FFFFFFFFFFFFFFFull : 0x7FFFFFFFull), 1);
    return mx ? LLVMConstNull(lt) : LLVMConstAllOnes(lt);
}

/* x combined with the value of the lane `xr` away in the wave (ds_bpermute, 32 bits at a time). */
static LLVMValueRef red_bfly(Emit *e, const char *kind, const Type *t, LLVMValueRef x, int64_t xr)
{
    LLVMValueRef lane = LLVMBuildAnd(e->b, e->tlin, ci32(e, AMD_WAVE_SIZE - 1), "");
    LLVMValueRef addr = LLVMBuildShl(e->b, LLVMBuildXor(e->b, lane, ci32(e, xr), ""), ci32(e, 2), "");
    int words = ir_type_bits(t) / 32;
    LLVMTypeRef wt = words == 2 ? LLVMVectorType(i32t(e), 2) : i32t(e);
    LLVMValueRef w = LLVMBuildBitCast(e->b, x, wt, ""), o = LLVMGetUndef(wt);
    for (int k = 0; k < words; k++) {
        LLVMValueRef part = words == 2 ? LLVMBuildExtractElement(e->b, w, ci32(e, k), "") : w;
        LLVMValueRef args[2] = {addr, part};
        LLVMValueRef r = intrinsic(e, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2);
        o = words == 2 ? LLVMBuildInsertElement(e->b, o, r, ci32(e, k), "") : r;
    }
    return red_combine(e, kind, t, x, LLVMBuildBitCast(e->b, o, LLVMTypeOf(x), ""));
}

static void emit_reduce(Emit *e, const Op *op)
{
    const Value *src = op->operands[0], *res = op->results[0];
    Layout P, R;
    if (op_layout(e, op, &P, src) || op_layout(e, op, &P, res)) return;
    int scalar = ir_type_is_scalar(res->type);   /* a rank-1 tile's: every thread of the group takes it */
    const Type *t = scalar ? res->type : res->type->elem;
    const char *kind = ir_attr_str(op, "kind", "sum");
    int axis = (int)ir_attr_int(op, "axis", 0), wave = AMD_WAVE_SIZE;
    layout_slice(&R, &P, axis);
    if (src->type->shape[0] != P.lanes || (scalar ? R.lanes != 1 : res->type->shape[0] != R.lanes) || R.lanes > REG_LANES) {
        error_at(e, op, "'reduce': its vecs do not have the lanes of its layout");
        return;
    }
    LLVMValueRef sv = V(e, op, src);
    LLVMValueRef *acc = ARENA_ARRAY(&e->arena, LLVMValueRef, R.lanes);
    for (int64_t j = 0; j < P.lanes; j++) {
        int64_t r = layout_slice_lane(&P, axis, j);
        LLVMValueRef x = LLVMBuildExtractElement(e->b, sv, ci32(e, j), "");
        acc[r] = acc[r] ? red_combine(e, kind, t, acc[r], x) : x;
    }
    int64_t parts = 1;
    for (int i = 0; i < P.nf; i++) {
        const LayFactor *f = &P.f[i];
        if (f->lane || f->dim != axis) continue;
        if ((f->src & (f->src - 1)) || (f->n & (f->n - 1))) {
            error_at(e, op, "'reduce' across a factor of %lld threads (not a power of two)", (long long)f->n);
            return;
        }
        for (int64_t x = f->src; x < f->src * f->n && x < wave; x <<= 1)
            for (int64_t r = 0; r < R.lanes; r++) acc[r] = red_bfly(e, kind, t, acc[r], x);
        int64_t hi = f->src * f->n;
        if (hi > wave) parts *= hi / (f->src > wave ? f->src : wave);
    }
    if (layout_reduce_parts(&P, axis, wave, scalar)) {   /* warps, and a scalar's replica threads */
        int64_t p2 = 1, es = ir_type_bits(t) / 8;
        while (p2 < parts) p2 <<= 1;
        if (op->noperands != 2 || op->operands[1]->type->kind != TY_SMEM || p2 > wave) {
            error_at(e, op, "'reduce' across %lld waves needs its scratch smem operand (lower-tiles adds it)", (long long)parts);
            return;
        }
        LLVMValueRef scratch = V(e, op, op->operands[1]), writer = lay_first(e, &P), part = ci32(e, 0), w = ci32(e, 1);
        Layout Rs = R;   /* the result's layout without the axis (a scalar's: [1]) */
        if (!scalar) layout_squeeze(&Rs, &R, axis);
        int64_t stride[IR_MAX_RANK], n = 1;
        for (int d = Rs.rank - 1; d >= 0; d--) {
            stride[d] = n;
            n *= Rs.shape[d];
        }
        LLVMValueRef flat = ci32(e, 0);
        for (int d = 0; d < Rs.rank; d++)
            flat = LLVMBuildAdd(e->b, flat, LLVMBuildMul(e->b, lay_thread_coord(e, &Rs, d), ci32(e, stride[d]), ""), "");
        for (int i = 0; i < P.nf; i++) {
            const LayFactor *f = &P.f[i];
            if (f->lane || f->dim != axis) continue;
            int64_t lo = f->src > wave ? f->src : wave, hi = f->src * f->n;
            if (f->src < wave) {   /* the lowest lane of the wave's part writes */
                int64_t m = (hi < wave ? hi : wave) / f->src;
                LLVMValueRef x = LLVMBuildURem(e->b, LLVMBuildUDiv(e->b, e->tlin, ci32(e, f->src), ""), ci32(e, m), "");
                writer = LLVMBuildAnd(e->b, writer, LLVMBuildICmp(e->b, LLVMIntEQ, x, ci32(e, 0), ""), "");
            }
            if (hi <= wave) continue;
            LLVMValueRef x = LLVMBuildURem(e->b, LLVMBuildUDiv(e->b, e->tlin, ci32(e, lo), ""), ci32(e, hi / lo), "");
            part = LLVMBuildAdd(e->b, part, LLVMBuildMul(e->b, x, w, ""), "");
            w = ci32(e, LLVMConstIntGetSExtValue(w) * (hi / lo));
        }
        LLVMTypeRef et = scalar_type(e, t->kind);
        LLVMValueRef *slot = ARENA_ARRAY(&e->arena, LLVMValueRef, R.lanes);
        LLVMBasicBlockRef bw = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "red.write");
        LLVMBasicBlockRef bj = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "red.written");
        for (int64_t r = 0; r < R.lanes; r++) {   /* element index into the scratch: (flat element) * parts */
            int64_t c[IR_MAX_RANK], lf = 0;
            layout_lane_coords(&Rs, r, c);
            for (int d = 0; d < Rs.rank; d++) lf += c[d] * stride[d];
            slot[r] = LLVMBuildMul(e->b, LLVMBuildAdd(e->b, flat, ci32(e, lf), ""), ci32(e, parts), "");
        }
        LLVMBuildCondBr(e->b, writer, bw, bj);
        LLVMPositionBuilderAtEnd(e->b, bw);
        for (int64_t r = 0; r < R.lanes; r++) {
            LLVMValueRef ix = LLVMBuildAdd(e->b, slot[r], part, "");
            LLVMBuildStore(e->b, acc[r], LLVMBuildGEP2(e->b, et, scratch, &ix, 1, ""));
        }
        LLVMBuildBr(e->b, bj);
        LLVMPositionBuilderAtEnd(e->b, bj);
        call_void(e, "tilec.block_barrier");
        LLVMValueRef q = LLVMBuildAnd(e->b, e->tlin, ci32(e, p2 - 1), "");
        LLVMValueRef has = LLVMBuildICmp(e->b, LLVMIntULT, q, ci32(e, parts), "");
        LLVMValueRef qi = LLVMBuildSelect(e->b, has, q, ci32(e, 0), "");
        for (int64_t r = 0; r < R.lanes; r++) {
            LLVMValueRef ix = LLVMBuildAdd(e->b, slot[r], qi, "");
            LLVMValueRef x = LLVMBuildLoad2(e->b, et, LLVMBuildGEP2(e->b, et, scratch, &ix, 1, ""), "");
            acc[r] = LLVMBuildSelect(e->b, has, x, red_identity(e, kind, t), "");
            for (int64_t xr = 1; xr < p2; xr <<= 1) acc[r] = red_bfly(e, kind, t, acc[r], xr);
        }
        call_void(e, "tilec.block_barrier");
        (void)es;
    }
    if (scalar) {
        e->val[res->id] = acc[0];
        return;
    }
    LLVMValueRef out = LLVMGetUndef(lty(e, res->type));
    for (int64_t r = 0; r < R.lanes; r++) out = LLVMBuildInsertElement(e->b, out, acc[r], ci32(e, r), "");
    e->val[res->id] = out;
}

static void emit_broadcast(Emit *e, const Op *op)
{
    const Value *src = op->operands[0], *res = op->results[0];
    if (op->code == OP_RESHAPE) {   /* the same lanes */
        if (src->type->shape[0] != res->type->shape[0]) {
            error_at(e, op, "'reshape' of a vec must keep its lanes");
            return;
        }
        e->val[res->id] = V(e, op, src);
        return;
    }
    Layout R;
    const char *why = NULL;
    if (op_layout(e, op, &R, res) || op_layout(e, op, &R, src)) return;
    int64_t *map = ARENA_ARRAY(&e->arena, int64_t, R.lanes);
    if (layout_broadcast_map(op, &R, res->type->shape[0], src->type->shape[0], map, &why)) {
        error_at(e, op, "'broadcast': %s", why);
        return;
    }
    LLVMValueRef sv = V(e, op, src), out = LLVMGetUndef(lty(e, res->type));
    for (int64_t j = 0; j < R.lanes; j++)
        out = LLVMBuildInsertElement(e->b, out, LLVMBuildExtractElement(e->b, sv, ci32(e, map[j]), ""), ci32(e, j), "");
    e->val[res->id] = out;
}

/* ld_lanes, st_lanes, iota_lanes: per lane, the element's coordinates; one buffer access per lane
 * (outside the view, or a replica's store, at BUF_OOB: dropped, a load reads 0). */
static void emit_lanes(Emit *e, const Op *op)
{
    int store = op->code == OP_ST_LANES, iota = op->code == OP_IOTA_LANES;
    const Value *vec = store ? op->operands[0] : op->results[0];
    Layout L;
    if (op_layout(e, op, &L, vec)) return;
    if (vec->type->shape[0] != L.lanes) {
        error_at(e, op, "'%s': its vec does not have the lanes of its layout", opname(op));
        return;
    }
    LLVMValueRef tc[IR_MAX_RANK];
    for (int d = 0; d < L.rank; d++) tc[d] = lay_thread_coord(e, &L, d);
    LLVMValueRef out = store ? NULL : LLVMGetUndef(lty(e, vec->type));
    if (iota) {
        int dim = (int)ir_attr_int(op, "dim", 0);
        for (int64_t j = 0; j < L.lanes; j++) {
            int64_t c[IR_MAX_RANK];
            layout_lane_coords(&L, j, c);
            out = LLVMBuildInsertElement(e->b, out, LLVMBuildAdd(e->b, tc[dim], ci32(e, c[dim]), ""), ci32(e, j), "");
        }
        e->val[vec->id] = out;
        return;
    }
    const Value *view = op->operands[store];
    if (view->type->kind != TY_VIEW || !e->dims[view->id] || view->type->rank != L.rank ||
        op->noperands != (uint32_t)(store + 1 + L.rank) || view->type->elem != vec->type->elem) {
        error_at(e, op, "malformed '%s'", opname(op));
        return;
    }
    const Type *t = vec->type->elem;
    int s = mem_bytes(t);
    LLVMValueRef *dims = e->dims[view->id], rsrc = e->rsrc[view->id], oob = LLVMConstInt(i32t(e), BUF_OOB, 0);
    LLVMValueRef first = store ? lay_first(e, &L) : NULL, sv = store ? V(e, op, vec) : NULL;
    for (int d = 0; d < L.rank; d++) tc[d] = LLVMBuildAdd(e->b, V(e, op, op->operands[store + 1 + d]), tc[d], "");
    for (int64_t j = 0; j < L.lanes; j++) {
        int64_t lc[IR_MAX_RANK];
        layout_lane_coords(&L, j, lc);
        LLVMValueRef c[IR_MAX_RANK], in = first;
        for (int d = 0; d < L.rank; d++) {
            c[d] = LLVMBuildAdd(e->b, tc[d], ci32(e, lc[d]), "");
            in = and_opt(e, in, LLVMBuildICmp(e->b, LLVMIntULT, c[d], dims[d], ""));
        }
        LLVMValueRef byte = LLVMBuildTrunc(e->b, LLVMBuildMul(e->b, rowmajor(e, dims, L.rank, c), ci64(e, s), ""), i32t(e), "");
        LLVMValueRef voff = LLVMBuildSelect(e->b, in, byte, oob, "");
        if (store) {
            buf_store(e, to_carrier(e, LLVMBuildExtractElement(e->b, sv, ci32(e, j), ""), t, 1), rsrc, voff);
            continue;
        }
        out = LLVMBuildInsertElement(e->b, out, from_carrier(e, buf_load(e, rsrc, voff, s), t, 1), ci32(e, j), "");
    }
    if (!store) e->val[vec->id] = out;
}

static void emit_op(Emit *e, const Op *op, Flow *f)
{
    switch (op->code) {
    case OP_CONST: {
        const Value *r = op->results[0];
        int64_t iv = 0;
        double fv = 0;
        LLVMTypeRef t = lty(e, r->type);
        if ((!ir_type_is_scalar(r->type) && r->type->kind != TY_PARITY) || !t) {
            error_at(e, op, "'const' of type %s has no AMD form", ir_type_kind_name(r->type->kind));
            return;
        }
        ir_op_is_const(op, &iv, &fv);
        Attr *a = ir_attr_find(op, "value");
        if (ir_type_is_float(r->type)) e->val[r->id] = LLVMConstReal(t, a && a->kind == ATTR_INT ? (double)a->i : fv);
        else e->val[r->id] = LLVMConstInt(t, (unsigned long long)(a && a->kind == ATTR_INT ? a->i : iv), 1);
        return;
    }
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM: case OP_NEG: case OP_AND: case OP_OR:
    case OP_XOR: case OP_NOT: case OP_SHL: case OP_SHR: case OP_MIN: case OP_MAX: case OP_ABS: case OP_SQRT:
    case OP_EXP: case OP_EXP2: case OP_LOG2: case OP_LOG: case OP_RSQRT: case OP_TANH: case OP_FMA: case OP_CMP:
    case OP_SELECT: case OP_CAST:
        emit_elementwise(e, op);
        return;
    case OP_THREAD_ID: case OP_BLOCK_ID: case OP_BLOCK_DIM: case OP_GRID_DIM: case OP_LANE_ID: case OP_WARP_ID:
        emit_geometry(e, op);
        return;
    case OP_PTR_ADD: {
        const Value *p = op->operands[0], *i = op->operands[1];
        if (p->type->kind != TY_PTR || !lty(e, p->type) || !ir_type_is_int(i->type) || ir_type_bits(i->type) < 32) {
            error_at(e, op, "'ptr_add' needs a global or shared pointer and an i32/i64 offset");
            return;
        }
        LLVMValueRef ix = V(e, op, i);
        if (ir_type_bits(i->type) == 32) ix = i->type->kind == TY_U32 ? LLVMBuildZExt(e->b, ix, i64t(e), "") : LLVMBuildSExt(e->b, ix, i64t(e), "");
        e->val[op->results[0]->id] = LLVMBuildGEP2(e->b, elem_mem_type(e, p->type->elem), V(e, op, p), &ix, 1, nm(op->results[0]));
        return;
    }
    case OP_LOAD:
        if (op->operands[0]->type->kind != TY_PTR || !lty(e, op->operands[0]->type)) break;
        e->val[op->results[0]->id] = mem_load(e, op->results[0]->type, V(e, op, op->operands[0]));
        return;
    case OP_STORE:
        if (op->operands[1]->type->kind != TY_PTR || !lty(e, op->operands[1]->type)) break;
        mem_store(e, op->operands[0]->type, V(e, op, op->operands[0]), V(e, op, op->operands[1]));
        return;
    case OP_ATOMIC: case OP_ATOMIC_LOAD: case OP_ATOMIC_STORE: case OP_FENCE:
        emit_atomic(e, op);
        return;
    case OP_CLOCK:   /* s_memtime (the shader clock), or s_memrealtime (a constant 100 MHz clock) in ns */
        if (strcmp(ir_attr_s(op, A_CLOCK_kind), "ns")) {
            e->val[op->results[0]->id] = intrinsic(e, "llvm.readcyclecounter", NULL, 0, NULL, 0);
        } else {
            LLVMValueRef t = intrinsic(e, "llvm.amdgcn.s.memrealtime", NULL, 0, NULL, 0);
            e->val[op->results[0]->id] = LLVMBuildMul(e->b, t, ci64(e, 10), "");
        }
        return;
    case OP_BARRIER:
        call_void(e, "tilec.block_barrier");
        return;
    case OP_MAKE_VIEW: {
        const Value *r = op->results[0];
        int rank = r->type->rank;
        if (op->noperands != (uint32_t)(1 + rank)) {
            error_at(e, op, "malformed 'make_view'");
            return;
        }
        LLVMValueRef base = V(e, op, op->operands[0]);
        LLVMValueRef *d = ARENA_ARRAY(&e->arena, LLVMValueRef, rank);
        LLVMValueRef bytes = ci64(e, mem_bytes(r->type->elem));
        for (int i = 0; i < rank; i++) {
            d[i] = V(e, op, op->operands[1 + i]);
            bytes = LLVMBuildMul(e->b, bytes, LLVMBuildZExt(e->b, d[i], i64t(e), ""), "");
        }
        LLVMValueRef lim = ci64(e, 0x7FFFFFFF);
        LLVMValueRef xs[2] = {bytes, lim};
        LLVMTypeRef t64 = i64t(e);
        LLVMValueRef nrec = LLVMBuildTrunc(e->b, intrinsic(e, "llvm.umin", &t64, 1, xs, 2), i32t(e), "");
        LLVMTypeRef pt = LLVMTypeOf(base);
        LLVMValueRef args[4] = {base, LLVMConstInt(LLVMInt16TypeInContext(e->ctx), 0, 0), nrec, ci32(e, BUF_FLAGS)};
        e->rsrc[r->id] = intrinsic(e, "llvm.amdgcn.make.buffer.rsrc", &pt, 1, args, 4);
        e->dims[r->id] = d;
        e->val[r->id] = base;
        return;
    }
    case OP_VIEW_DIM: {
        const Value *v = op->operands[0];
        int64_t d = ir_attr_int(op, "dim", -1);
        if (!e->dims[v->id] || d < 0 || d >= v->type->rank) {
            error_at(e, op, "'view_dim': dim %lld out of range", (long long)d);
            return;
        }
        e->val[op->results[0]->id] = e->dims[v->id][d];
        return;
    }
    case OP_VIEW_ELEM: {
        const Value *v = op->operands[0];
        int rank = v->type->rank;
        if (!e->dims[v->id] || op->noperands != (uint32_t)(1 + rank)) {
            error_at(e, op, "'view_elem' needs one index per view dim");
            return;
        }
        LLVMValueRef c[IR_MAX_RANK];
        for (int d = 0; d < rank; d++) c[d] = V(e, op, op->operands[1 + d]);
        LLVMValueRef lin = rowmajor(e, e->dims[v->id], rank, c);
        e->val[op->results[0]->id] = LLVMBuildGEP2(e->b, elem_mem_type(e, v->type->elem), V(e, op, v), &lin, 1, "");
        return;
    }
    case OP_SPLAT: {
        const Value *r = op->results[0];
        if (r->type->kind != TY_VEC) {
            error_at(e, op, "cannot emit 'splat' to a tile: tiles must be lowered by lower-tiles first");
            return;
        }
        if (op->operands[0]->type != r->type->elem) {
            error_at(e, op, "'splat' of a value that is not the vec's element");
            return;
        }
        LLVMValueRef x = V(e, op, op->operands[0]);
        if (!is_lanes(r->type)) {
            e->val[r->id] = splat_value(e, x, r->type->shape[0], 1);
            return;
        }
        e->splat[r->id] = x;   /* its lanes are made where they are needed (splat_lanes) */
        return;
    }
    case OP_LD_BLOCKED: case OP_ST_BLOCKED: emit_blocked_mem(e, op); return;
    case OP_IOTA_BLOCKED: emit_iota_blocked(e, op); return;
    case OP_REDUCE: emit_reduce(e, op); return;
    case OP_BROADCAST: case OP_RESHAPE: emit_broadcast(e, op); return;
    case OP_LD_LANES: case OP_ST_LANES: case OP_IOTA_LANES: emit_lanes(e, op); return;
    case OP_LD_SMEM_BLOCKED: case OP_ST_SMEM_BLOCKED: emit_smem_blocked(e, op); return;
    case OP_IF: emit_if(e, op, f); return;
    case OP_FOR: emit_for(e, op, f); return;
    case OP_LOOP: emit_loop(e, op, f); return;
    case OP_YIELD: case OP_BREAK: case OP_CONTINUE: case OP_RETURN: emit_terminator(e, op, f); return;
    case OP_SHARED_ALLOC: {
        int64_t off = ir_attr_int(op, "offset", -1);
        if (ir_type_smem_is_dynamic(op->results[0]->type)) {
            error_at(e, op, "dynamic shared tiles (T[] dynamic) are not supported on AMD targets yet");
            return;
        }
        if (!e->lds || off < 0 || off >= e->k->smem_bytes) {
            error_at(e, op, "'shared_alloc' has no offset inside the kernel's shared memory (run smem-layout)");
            return;
        }
        e->val[op->results[0]->id] = lds_gep(e, e->lds, ci32(e, off));
        return;
    }
    case OP_SMEM_STAGE: case OP_SMEM_ELEM: emit_smem_addr(e, op); return;
    case OP_MMA_ACC: emit_mfma(e, op); return;
    case OP_ST_ACC: case OP_ST_SMEM_ACC: emit_st_acc(e, op); return;
    case OP_MMA_COMMIT: case OP_MMA_WAIT: return;   /* MFMA is synchronous: its result is ready when it is used */
    case OP_ELECT: emit_elect(e, op, f); return;
    case OP_SHFL: emit_shfl(e, op); return;
    case OP_VOTE: emit_vote(e, op); return;
    case OP_AMD_SETPRIO: case OP_AMD_STAGE_BARRIER: case OP_AMD_COND_BARRIER: emit_pipeline_op(e, op); return;
    case OP_STAGE:
        error_at(e, op, "'stage' was not lowered: run the warp-pipeline pass");
        return;
    case OP_WARPS:
        error_at(e, op, "'warps' (warp roles) is not supported on AMD targets: its tile layouts assume 32-thread warps, "
                        "a gfx9 wavefront has 64");
        return;
    case OP_SMEM_LEN:
        error_at(e, op, "dynamic shared tiles (T[] dynamic) are not supported on AMD targets yet");
        return;
    default:
        break;
    }
    /* ops AMD targets do not have are caught by ir_verify_targets before a back end runs; a caller
     * of the back end that skipped it gets the same message from ops.def's table */
    if (op->code < OP_COUNT && !(ir_op_targets[ir_op_info[op->code].targets].mask & TGT_AMD))
        error_at(e, op, "'%s' is %s", opname(op), ir_op_targets[ir_op_info[op->code].targets].what);
    else
        error_at(e, op, "cannot emit '%s' for AMD (a tile-level op not lowered, or an op with no AMD lowering)", opname(op));
}

/* Emission stops at the first error: what follows could use values the failed op did not make. */
static void emit_block(Emit *e, const Block *b, Flow *f)
{
    for (const Op *op = b ? b->first : NULL; op && e->errors == 0; op = op->next) {
        emit_op(e, op, f);
        if (ir_op_info[op->code].props & IR_PTERM) return;
    }
}

/* ---------------------------------------------------------------- kernels and the module */

static int is_view_base(const Kernel *k, const Value *v)
{
    for (const Op *op = k->body.first ? k->body.first->first : NULL; op; op = op->next)
        if (op->code == OP_MAKE_VIEW && op->noperands && op->operands[0] == v) return 1;
    return 0;
}

static void add_enum_attr(Emit *e, LLVMValueRef fn, unsigned idx, const char *name, uint64_t v)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(fn, idx, LLVMCreateEnumAttribute(e->ctx, kind, v));
}

static void add_str_attr(Emit *e, LLVMValueRef fn, const char *k, const char *v)
{
    LLVMAddAttributeAtIndex(fn, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(e->ctx, k, (unsigned)strlen(k), v, (unsigned)strlen(v)));
}

/* One located error for a value with no AMD form: at its op, or (a block argument) at the op whose
 * region it belongs to. */
static void check_value(Emit *e, const Op *at, const Value *v, const char *what)
{
    const char *why = v && v->type ? no_amd_form(v->type) : "a value without a type";
    if (!why) return;
    StrBuf ts;
    sb_init(&ts);
    if (v && v->type) ir_type_print(v->type, &ts);
    error_at(e, at, "'%s': %s of type %s has no AMD form: %s", opname(at), what, ts.data ? ts.data : "?", why);
    sb_free(&ts);
}

static void check_block(Emit *e, const Block *b, const Op *owner)
{
    for (uint32_t i = 0; owner && i < b->nargs; i++) check_value(e, owner, b->args[i], "a block argument");
    for (const Op *op = b->first; op && e->errors < 20; op = op->next) {
        for (uint32_t i = 0; i < op->noperands; i++)
            if (op->operands[i] && op->operands[i]->id < e->k->nvalues) e->uses[op->operands[i]->id]++;
        for (uint32_t i = 0; i < op->nresults; i++) check_value(e, op, op->results[i], "a result");
        const Type *t = op->code == OP_SHARED_ALLOC && op->nresults == 1 ? op->results[0]->type : NULL;
        if (t && t->kind == TY_SMEM && !ir_type_smem_is_dynamic(t)) {   /* smem-layout's offset and size */
            int64_t st = t->stages > 1 ? t->stages : 1, bytes = ir_type_smem_bytes(t);
            int64_t end = ir_attr_int(op, "offset", 0) + round_up(bytes, ir_attr_int(op, "align", 16)) * (st - 1) + bytes;
            if (end > LDS_BYTES)
                error_at(e, op, "'shared_alloc': the kernel's shared memory reaches byte %lld with this tile, past the %d "
                                "KiB of LDS a workgroup has", (long long)end, LDS_BYTES / 1024);
        }
        for (uint32_t r = 0; r < op->nregions; r++)
            for (const Block *rb = op->regions[r].first; rb; rb = rb->next) check_block(e, rb, op);
    }
}

/* Before anything of kernel k is emitted: its parameters are scalars (i1 passed as a byte) or global
 * pointers, and every value has an AMD form (no_amd_form). lty and the op emitters rely on that. The
 * legality check of ops (ir_verify_targets) has run; this is the same for the types of values, which
 * legal ops (const, select, for, if, ptr_add) can carry. Returns the number of errors. */
static int check_kernel(Emit *e, const Kernel *k)
{
    int before = e->errors;
    Op kop = {0};
    kop.code = OP_COUNT;
    kop.loc = k->loc;
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i].value->type;
        const char *why = no_amd_form(t);
        if (!why && !ir_type_is_scalar(t) && t->kind != TY_PTR) why = "only global pointers and scalars are passed";
        if (!why && t->kind == TY_PTR && t->space != AS_GLOBAL) why = "a kernel parameter points to global memory";
        if (why)
            error_at(e, &kop, "parameter '%s' of kernel '%s' has no AMD form: %s", k->params[i].name, k->name, why);
    }
    e->uses = ARENA_ARRAY(&e->arena, uint32_t, k->nvalues ? k->nvalues : 1);
    if (k->body.first) check_block(e, k->body.first, NULL);
    if (e->errors == before && k->smem_bytes > LDS_BYTES)
        error_at(e, &kop, "kernel '%s' needs %lld bytes of shared memory, more than the %d KiB of LDS a workgroup has",
                 k->name, (long long)k->smem_bytes, LDS_BYTES / 1024);
    return e->errors - before;
}

static void emit_kernel(Emit *e, const Kernel *k)
{
    e->k = k;
    e->lane_bytes = 0;
    if (check_kernel(e, k)) return;
    e->val = ARENA_ARRAY(&e->arena, LLVMValueRef, k->nvalues ? k->nvalues : 1);
    e->dims = ARENA_ARRAY(&e->arena, LLVMValueRef *, k->nvalues ? k->nvalues : 1);
    e->rsrc = ARENA_ARRAY(&e->arena, LLVMValueRef, k->nvalues ? k->nvalues : 1);
    e->splat = ARENA_ARRAY(&e->arena, LLVMValueRef, k->nvalues ? k->nvalues : 1);
    LLVMTypeRef *pt = ARENA_ARRAY(&e->arena, LLVMTypeRef, k->nparams ? k->nparams : 1);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i].value->type;
        pt[i] = t->kind == TY_I1 ? LLVMInt8TypeInContext(e->ctx) : lty(e, t);
    }
    e->fn = LLVMAddFunction(e->mod, k->name, LLVMFunctionType(LLVMVoidTypeInContext(e->ctx), pt, k->nparams, 0));
    LLVMSetFunctionCallConv(e->fn, LLVMAMDGPUKERNELCallConv);
    int64_t threads = k->block[0] * k->block[1] * k->block[2];
    char fwg[64];
    snprintf(fwg, sizeof fwg, "%lld,%lld", (long long)threads, (long long)threads);
    add_str_attr(e, e->fn, "amdgpu-flat-work-group-size", fwg);
    add_str_attr(e, e->fn, "uniform-work-group-size", "true");
    if (k->min_blocks > 1) {   /* blocks_per_sm(N): N workgroups of 64-lane waves spread over a CU's 4 SIMDs */
        int64_t w = (k->min_blocks * ((threads + 63) / 64) + 3) / 4;
        if (w > 8) {
            Op fake = {0};
            fake.loc = k->loc;
            error_at(e, &fake, "blocks_per_sm(%lld) of %lld threads needs %lld waves per SIMD; a %s SIMD holds 8",
                     (long long)k->min_blocks, (long long)threads, (long long)w, amd_target_name(e->target));
        } else {
            char wpe[32];
            snprintf(wpe, sizeof wpe, "%lld", (long long)w);
            add_str_attr(e, e->fn, "amdgpu-waves-per-eu", wpe);
        }
    }
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i].value->type;
        LLVMValueRef p = LLVMGetParam(e->fn, i);
        LLVMSetValueName2(p, k->params[i].name, strlen(k->params[i].name));
        if (t->kind == TY_PTR && t->space == AS_GLOBAL) {
            add_enum_attr(e, e->fn, i + 1, "noalias", 0);
            add_enum_attr(e, e->fn, i + 1, "nocapture", 0);
            add_enum_attr(e, e->fn, i + 1, "align", is_view_base(k, k->params[i].value) ? 16 : (uint64_t)mem_bytes(t->elem));
        }
    }
    LLVMBasicBlockRef entry = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "entry");
    LLVMBasicBlockRef body = LLVMAppendBasicBlockInContext(e->ctx, e->fn, "body");
    LLVMPositionBuilderAtEnd(e->ab, entry);
    LLVMPositionBuilderAtEnd(e->b, body);
    for (uint32_t i = 0; i < k->nparams; i++) {
        const Type *t = k->params[i].value->type;
        LLVMValueRef p = LLVMGetParam(e->fn, i);
        if (t->kind == TY_I1) p = LLVMBuildICmp(e->b, LLVMIntNE, p, LLVMConstNull(LLVMInt8TypeInContext(e->ctx)), "");
        e->val[k->params[i].value->id] = p;
    }
    e->lds = NULL;
    if (k->smem_bytes > 0) {
        char name[300];
        snprintf(name, sizeof name, "%.200s.lds", k->name);
        LLVMTypeRef at = LLVMArrayType2(LLVMInt8TypeInContext(e->ctx), (uint64_t)k->smem_bytes);
        e->lds = LLVMAddGlobalInAddressSpace(e->mod, at, name, 3);
        LLVMSetInitializer(e->lds, LLVMGetUndef(at));
        LLVMSetLinkage(e->lds, LLVMInternalLinkage);
        LLVMSetAlignment(e->lds, 1024);
    }
    /* the linear thread index x + y*bx + z*bx*by */
    e->tlin = workitem(e, 0);
    if (k->block[1] > 1) e->tlin = LLVMBuildAdd(e->b, e->tlin, LLVMBuildMul(e->b, workitem(e, 1), ci32(e, k->block[0]), ""), "");
    if (k->block[2] > 1)
        e->tlin = LLVMBuildAdd(e->b, e->tlin, LLVMBuildMul(e->b, workitem(e, 2), ci32(e, k->block[0] * k->block[1]), ""), "");
    LLVMSetValueName2(e->tlin, "tid", 3);
    Flow top = {NULL, NULL, NULL, NULL, NULL};
    const Block *b = k->body.first;
    emit_block(e, b, &top);
    if (!ends_in_terminator(b)) LLVMBuildRetVoid(e->b);
    LLVMPositionBuilderAtEnd(e->ab, entry);
    LLVMBuildBr(e->ab, body);
}

/* LLVM's errors (a frame too large, an operation with no lowering) become diagnostics at the kernel
 * they name (else the first), instead of LLVM's default: print and exit the process. */
static void llvm_diag(LLVMDiagnosticInfoRef di, void *ctx)
{
    Emit *e = ctx;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError) return;
    char *d = LLVMGetDiagInfoDescription(di);
    const Kernel *at = e->m->first;
    for (const Kernel *k = e->m->first; k && d; k = k->next) {
        char quoted[300];
        snprintf(quoted, sizeof quoted, "'%.200s'", k->name);
        if (strstr(d, quoted)) {
            at = k;
            break;
        }
    }
    Op kop = {0};
    kop.code = OP_COUNT;
    if (at) kop.loc = at->loc;
    error_at(e, &kop, "LLVM cannot compile the kernel: %s", d ? d : "?");
    LLVMDisposeMessage(d);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_llvm(void)
{
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void take_buffer(LLVMMemoryBufferRef buf, StrBuf *text, unsigned char **bin, size_t *len)
{
    const char *p = LLVMGetBufferStart(buf);
    size_t n = LLVMGetBufferSize(buf);
    if (text) sb_putn(text, p, n);
    if (bin) {
        *bin = malloc(n ? n : 1);
        if (!*bin) ir_unreachable("out of memory");
        memcpy(*bin, p, n);
        *len = n;
    }
    LLVMDisposeMemoryBuffer(buf);
}

static int emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag)
{
    static const Loc no_loc = {NULL, 0, 0};
    double t0 = now_s();
    pthread_once(&init_once, init_llvm);
    Emit E;
    memset(&E, 0, sizeof E);
    Emit *e = &E;
    e->m = m;
    e->target = target;
    e->diag = diag;
    arena_init(&e->arena);
    e->ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(e->ctx, llvm_diag, e);
    const char *triple = "amdgcn-amd-amdhsa";
    char *err = NULL;
    LLVMTargetRef T;
    LLVMTargetMachineRef tm = NULL;
    int olevel = opts ? opts->opt_level : 2;
    if (LLVMGetTargetFromTriple(triple, &T, &err)) {
        diag_error(diag, no_loc, "LLVM has no AMDGPU target: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        goto done;
    }
    tm = LLVMCreateTargetMachine(T, triple, amd_target_name(target), "",
                                 olevel <= 0 ? LLVMCodeGenLevelNone : olevel == 1 ? LLVMCodeGenLevelLess
                                 : olevel == 2 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive,
                                 LLVMRelocPIC, LLVMCodeModelDefault);
    LLVMMemoryBufferRef hb = LLVMCreateMemoryBufferWithMemoryRangeCopy(helper_ir, sizeof helper_ir - 1, "tilec-helpers");
    if (LLVMParseIRInContext(e->ctx, hb, &e->mod, &err)) ir_unreachable("the barrier helper IR does not parse");
    LLVMSetModuleIdentifier(e->mod, m->source ? m->source : "tile", strlen(m->source ? m->source : "tile"));
    LLVMSetSourceFileName(e->mod, m->source ? m->source : "tile", strlen(m->source ? m->source : "tile"));
    LLVMSetTarget(e->mod, triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    LLVMSetModuleDataLayout(e->mod, dl);
    LLVMDisposeTargetData(dl);
    e->b = LLVMCreateBuilderInContext(e->ctx);
    e->ab = LLVMCreateBuilderInContext(e->ctx);
    for (const Kernel *k = m->first; k && e->errors == 0; k = k->next) emit_kernel(e, k);
    if (e->errors) goto done;
    if (LLVMVerifyModule(e->mod, LLVMReturnStatusAction, &err)) {
        diag_error(diag, no_loc, "internal error: the LLVM IR for %s does not verify (a tilec bug): %s",
                   amd_target_name(target), err ? err : "");
        LLVMDisposeMessage(err);
        err = NULL;
        e->errors++;
        goto done;
    }
    LLVMDisposeMessage(err);
    err = NULL;
    char pipeline[32];
    snprintf(pipeline, sizeof pipeline, "default<O%d>", olevel < 0 ? 0 : olevel > 3 ? 3 : olevel);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef perr = LLVMRunPasses(e->mod, pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e->errors) {
        if (perr) LLVMConsumeError(perr);
        goto done;
    }
    if (perr) {
        char *msg = LLVMGetErrorMessage(perr);
        diag_error(diag, no_loc, "internal error: LLVM pass pipeline %s failed: %s", pipeline, msg);
        LLVMDisposeErrorMessage(msg);
        e->errors++;
        goto done;
    }
    char *text = LLVMPrintModuleToString(e->mod);
    sb_puts(&out->llvm, text);
    LLVMDisposeMessage(text);
    LLVMMemoryBufferRef buf;
    if (opts && opts->want_asm) {
        /* code generation changes the module (the structurizer's intrinsics): a copy for the assembly */
        LLVMModuleRef copy = opts->want_object ? LLVMCloneModule(e->mod) : e->mod;
        int bad = LLVMTargetMachineEmitToMemoryBuffer(tm, copy, LLVMAssemblyFile, &err, &buf);
        if (copy != e->mod) LLVMDisposeModule(copy);
        if (bad) {
            diag_error(diag, no_loc, "internal error: AMDGPU code generation failed: %s", err ? err : "");
            e->errors++;
            goto done;
        }
        if (e->errors) {   /* LLVM reported an error (llvm_diag) */
            LLVMDisposeMemoryBuffer(buf);
            goto done;
        }
        take_buffer(buf, &out->asm_text, NULL, NULL);
    }
    if (opts && opts->want_object) {
        if (LLVMTargetMachineEmitToMemoryBuffer(tm, e->mod, LLVMObjectFile, &err, &buf)) {
            diag_error(diag, no_loc, "internal error: AMDGPU code generation failed: %s", err ? err : "");
            e->errors++;
            goto done;
        }
        if (e->errors) {
            LLVMDisposeMemoryBuffer(buf);
            goto done;
        }
        take_buffer(buf, NULL, &out->object, &out->object_len);
    }
done:
    LLVMDisposeMessage(err);
    if (e->b) LLVMDisposeBuilder(e->b);
    if (e->ab) LLVMDisposeBuilder(e->ab);
    if (e->mod) LLVMDisposeModule(e->mod);
    if (tm) LLVMDisposeTargetMachine(tm);
    LLVMContextDispose(e->ctx);
    arena_free(&e->arena);
    out->llvm_seconds += now_s() - t0;
    return e->errors;
}

/* asm_from_llvm's LLVM errors: diagnostics without a place (the module came from text). */
typedef struct AsmDiag {
    DiagCtx *diag;
    int errors;
} AsmDiag;

static void asm_diag(LLVMDiagnosticInfoRef di, void *ctx)
{
    AsmDiag *a = ctx;
    static const Loc no_loc = {NULL, 0, 0};
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError) return;
    char *d = LLVMGetDiagInfoDescription(di);
    diag_error(a->diag, no_loc, "LLVM cannot compile the kernel: %s", d ? d : "?");
    LLVMDisposeMessage(d);
    a->errors++;
}

static int asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag)
{
    AsmDiag ad = {diag, 0};
    static const Loc no_loc = {NULL, 0, 0};
    pthread_once(&init_once, init_llvm);
    const char *triple = "amdgcn-amd-amdhsa";
    char *err = NULL;
    LLVMTargetRef T;
    if (LLVMGetTargetFromTriple(triple, &T, &err)) {
        diag_error(diag, no_loc, "LLVM has no AMDGPU target: %s", err ? err : "?");
        LLVMDisposeMessage(err);
        return 1;
    }
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(ctx, asm_diag, &ad);
    LLVMModuleRef mod = NULL;
    int rc = 0;
    LLVMMemoryBufferRef mb = LLVMCreateMemoryBufferWithMemoryRangeCopy(llvm_ir ? llvm_ir : "", llvm_ir ? len : 0, "tilec-llvm");
    if (LLVMParseIRInContext(ctx, mb, &mod, &err)) {   /* takes the buffer */
        diag_error(diag, no_loc, "internal error: the kept LLVM IR does not parse back: %s", err ? err : "");
        LLVMDisposeMessage(err);
        LLVMContextDispose(ctx);
        return 1;
    }
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(
        T, triple, amd_target_name(target), "",
        opt_level <= 0 ? LLVMCodeGenLevelNone : opt_level == 1 ? LLVMCodeGenLevelLess
        : opt_level == 2 ? LLVMCodeGenLevelDefault : LLVMCodeGenLevelAggressive,
        LLVMRelocPIC, LLVMCodeModelDefault);
    LLVMMemoryBufferRef buf;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMAssemblyFile, &err, &buf)) {
        diag_error(diag, no_loc, "internal error: AMDGPU code generation failed: %s", err ? err : "");
        rc = 1;
    } else if (ad.errors) {
        LLVMDisposeMemoryBuffer(buf);
        rc = 1;
    } else {
        take_buffer(buf, asm_text, NULL, NULL);
    }
    LLVMDisposeMessage(err);
    LLVMDisposeModule(mod);
    LLVMDisposeTargetMachine(tm);
    LLVMContextDispose(ctx);
    return rc;
}

/* The one symbol libtile_amdgcn.so exports: what amd_load.c finds with dlsym. */
const AmdBackend amd_backend = {.abi = AMD_BACKEND_ABI, .emit_module = emit_module, .asm_from_llvm = asm_from_llvm};
