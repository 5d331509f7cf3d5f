/* ptx_nvshmem.c: the NVSHMEM ops (shmem_my_pe, put/get, p/g, put_signal, signal_op, fence,
 * quiet, signal_wait_until) as calls of NVSHMEM's device functions.
 *
 * The one idea: tilec does not implement one-sided communication itself. Each shmem_* op is a call
 * of an NVSHMEM device function, declared `.extern .func` at the top of the module and resolved
 * when the runtime links the kernel with the device-library PTX (made from libnvshmem_device.bc,
 * docs/RUNTIME.md "Multi-GPU"). Parameters follow the PTX ABI LLVM's NVPTX back end gives the C
 * functions: pointers, size_t and uint64_t .b64; int .b32; results in `func_retval0`. Without
 * PtxOptions.shmem_qp the non-QP functions are called (NVSHMEM 3.4.5 has no QP API): the handle is
 * dropped, which is the seed's own fallback to the default queue pairs, and fence/quiet on any
 * handle or PE become the stronger all-PE nvshmem_fence/nvshmem_quiet. With shmem_qp the
 * nvshmemx_qp_* functions (NVSHMEM 3.5.19+) get the handle; fence/quiet pass it through a
 * per-thread .local slot (they take a pointer to an array of handles and a count). PTX forms:
 * `.extern .func`, `.param` blocks and `call`, fence.sc.sys.
 */
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

/* NVSHMEM's TYPENAME of an element type. */
static const char *shmem_typename(const Type *t)
{
    switch (t->kind) {
    case TY_I8: return "schar";
    case TY_I16: return "short";
    case TY_I32: return "int";
    case TY_I64: return "long";
    case TY_U8: return "uchar";
    case TY_U16: return "ushort";
    case TY_U32: return "uint";
    case TY_U64: return "ulong";
    case TY_F16: return "half";
    case TY_BF16: return "bfloat16";
    case TY_F32: return "float";
    case TY_F64: return "double";
    default: return NULL;
    }
}

/* Declares `.extern .func [ret] name(params)` once per module. params: a string of 'w' (.b64) and
 * 'i' (.b32); ret: 0, 'i' or 'w'. */
static void shmem_declare(Emit *e, const char *name, char ret, const char *params)
{
    char key[160];
    snprintf(key, sizeof key, " %s(", name);
    if (e->shmem_decls.data && strstr(e->shmem_decls.data, key)) return;
    sb_puts(&e->shmem_decls, ".extern .func ");
    if (ret) sb_printf(&e->shmem_decls, "(.param .b%d func_retval0) ", ret == 'w' ? 64 : 32);
    sb_printf(&e->shmem_decls, "%s(", name);
    for (int i = 0; params[i]; i++)
        sb_printf(&e->shmem_decls, "%s.param .b%d %s_param_%d", i ? ", " : "", params[i] == 'w' ? 64 : 32, name, i);
    sb_puts(&e->shmem_decls, ");\n");
}

/* call [d =] name(args...): args[i] is a register of width params[i]. */
static void shmem_call_fn(Emit *e, const char *name, char ret, const char *d, const char *params, const char **args)
{
    shmem_declare(e, name, ret, params);
    sb_puts(&e->body, "\t{\n");
    StrBuf list;
    sb_init(&list);
    for (int i = 0; params[i]; i++) {
        int w = params[i] == 'w' ? 64 : 32;
        ptx_ins(e, ".param .b%d _sp%d", w, i);
        ptx_ins(e, "st.param.b%d [_sp%d], %s", w, i, args[i]);
        sb_printf(&list, "%s_sp%d", i ? ", " : "", i);
    }
    if (ret) {
        ptx_ins(e, ".param .b%d _sr", ret == 'w' ? 64 : 32);
        ptx_ins(e, "call (_sr), %s, (%s)", name, list.data ? list.data : "");
        ptx_ins(e, "ld.param.b%d %s, [_sr]", ret == 'w' ? 64 : 32, d);
    } else {
        ptx_ins(e, "call %s, (%s)", name, list.data ? list.data : "");
    }
    sb_puts(&e->body, "\t}\n");
    sb_free(&list);
}

/* One shmem_* op: the NVSHMEM function it calls, by op, element type, group and shmem_qp. */
void ptx_emit_shmem(Emit *e, const Op *op)
{
    int qp = e->opts && e->opts->shmem_qp;
    const char *g = ir_attr_str(op, "group", "thread");
    const char *gs = !strcmp(g, "warp") ? "_warp" : !strcmp(g, "block") ? "_block" : "";
    char name[128];
    const char *a[8];
    Value *const *o = op->operands;
    for (uint32_t i = 0; i < op->noperands && i < 8; i++) a[i] = ptx_vr(e, o[i], 0);
    switch (op->code) {
    case OP_SHMEM_MY_PE: case OP_SHMEM_N_PES:
        shmem_call_fn(e, op->code == OP_SHMEM_MY_PE ? "nvshmem_my_pe" : "nvshmem_n_pes", 'i', ptx_vr(e, op->results[0], 0),
                      "", a);
        return;
    case OP_SHMEM_PUT: case OP_SHMEM_GET: case OP_SHMEM_PUT_SIGNAL: {
        const char *tn = shmem_typename(o[0]->type->elem);
        const char *what = op->code == OP_SHMEM_GET ? "get" : op->code == OP_SHMEM_PUT ? "put" : "put_signal";
        const char *nbi = ir_attr_int(op, "nbi", 0) ? "_nbi" : "";
        if (!tn) {
            ptx_error_at(e, op, "'%s' of %s elements has no NVSHMEM function", ir_op_info[op->code].name,
                         ir_type_kind_name(o[0]->type->elem->kind));
            return;
        }
        if (qp) snprintf(name, sizeof name, "nvshmemx_qp_%s_%s%s%s", tn, what, nbi, gs);
        else snprintf(name, sizeof name, "%s_%s_%s%s%s", *gs ? "nvshmemx" : "nvshmem", tn, what, nbi, gs);
        if (op->code == OP_SHMEM_PUT_SIGNAL) {
            const char *args[8] = {a[0], a[1], a[2], a[3], a[4], ptx_tmp(e, RC_B32), a[5], a[6]};
            ptx_ins(e, "mov.b32 %s, %d", args[5], strcmp(ir_attr_str(op, "sig_op", "set"), "add") ? 9 : 10);
            shmem_call_fn(e, name, 0, NULL, qp ? "wwwwwiii" : "wwwwwii", args);
        } else {
            shmem_call_fn(e, name, 0, NULL, qp ? "wwwii" : "wwwi", a);
        }
        return;
    }
    case OP_SHMEM_P: case OP_SHMEM_G: {
        int w = ir_type_bits(o[0]->type->elem) == 64;
        int isp = op->code == OP_SHMEM_P;
        snprintf(name, sizeof name, "%s_%s_%s", qp ? "nvshmemx_qp" : "nvshmem", w ? "long" : "int", isp ? "p" : "g");
        const char *pv = w ? "w" : "i";
        char params[8];
        if (isp) snprintf(params, sizeof params, "w%si%s", pv, qp ? "i" : "");
        else snprintf(params, sizeof params, "wi%s", qp ? "i" : "");
        shmem_call_fn(e, name, isp ? 0 : (w ? 'w' : 'i'), isp ? NULL : ptx_vr(e, op->results[0], 0), params, a);
        return;
    }
    case OP_SHMEM_SIGNAL_OP: {
        const char *args[5] = {a[0], a[1], ptx_tmp(e, RC_B32), a[2], a[3]};
        ptx_ins(e, "mov.b32 %s, %d", args[2], strcmp(ir_attr_str(op, "sig_op", "set"), "add") ? 9 : 10);
        shmem_call_fn(e, qp ? "nvshmemx_qp_signal_op" : "nvshmemx_signal_op", 0, NULL, qp ? "wwiii" : "wwii", args);
        return;
    }
    case OP_SHMEM_FENCE: case OP_SHMEM_QUIET: {
        const char *what = op->code == OP_SHMEM_FENCE ? "fence" : "quiet";
        if (!qp) { /* every PE, every default queue pair: what the handle falls back to */
            snprintf(name, sizeof name, "nvshmem_%s", what);
            shmem_call_fn(e, name, 0, NULL, "", a);
            return;
        }
        if (!e->shmem_slot) {
            sb_puts(&e->decl, "\t.local .align 4 .b8 __shmem_qp[4];\n");
            e->shmem_slot = 1;
        }
        const char *p = ptx_tmp(e, RC_B64), *one = ptx_tmp(e, RC_B32);
        ptx_ins(e, "st.local.b32 [__shmem_qp], %s", a[1]);
        ptx_ins(e, "mov.u64 %s, __shmem_qp", p);
        ptx_ins(e, "cvta.local.u64 %s, %s", p, p);
        ptx_ins(e, "mov.b32 %s, 1", one);
        const char *args[3] = {a[0], p, one};
        snprintf(name, sizeof name, "nvshmemx_qp_%s%s", what, gs);
        shmem_call_fn(e, name, 0, NULL, "iwi", args);
        return;
    }
    case OP_SHMEM_SIGNAL_WAIT: {
        static const char *const cmps[] = {"eq", "ne", "gt", "le", "lt", "ge"};
        const char *c = ir_attr_str(op, "cmp", "eq");
        int ci = 0;
        for (int i = 0; i < 6; i++)
            if (!strcmp(c, cmps[i])) ci = i;
        const char *args[3] = {a[0], ptx_tmp(e, RC_B32), a[1]};
        ptx_ins(e, "mov.b32 %s, %d", args[1], ci);
        shmem_call_fn(e, "nvshmem_signal_wait_until", 'w', ptx_vr(e, op->results[0], 0), "wiw", args);
        /* NVSHMEM 3.4.5's wait is no acquire for later plain loads: on 2 H200s a receiver read stale
         * (L1) data after it returned in 399 of 400 rounds, none with a fence.sc.sys after it
         * (docs/PERFORMANCE.md, NVSHMEM). The wait acquires here. */
        ptx_ins(e, "fence.sc.sys");
        return;
    }
    default:
        ir_unreachable("ptx_emit_shmem: not an NVSHMEM op");
    }
}
