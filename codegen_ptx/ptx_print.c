/* ptx_print.c: the print op as a call of vprintf, CUDA's device printf.
 *
 * The one idea: vprintf(format, args) takes a generic pointer to the format and one to a buffer
 * holding the arguments as C's varargs would pass them: a 32-bit integer in 4 bytes at a multiple
 * of 4, a 64-bit integer or a double (every float is promoted) in 8 at a multiple of 8. The
 * format is a .global byte string of the module, the buffer a .local array of the kernel, one of
 * each per print op; the front end and the verifier have checked the format against the operand
 * types (ir/printf.c), so the layout follows from the types. The call is a plain `call` (a guard
 * makes it divergent). The driver or ptxas resolves vprintf; its output appears on the host at the
 * next synchronisation.
 */
#include <stdio.h>
#include <string.h>

#include "ptx_impl.h"

void ptx_emit_print(Emit *e, const Op *op)
{
    const char *fmt = ir_attr_str(op, "format", "");
    int id = e->nprint++;
    if (id == 0)
        sb_puts(&e->print_decls, "\n// device printf: resolved by ptxas / the driver\n"
                                 ".extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, "
                                 ".param .b64 vprintf_param_1);\n");
    size_t len = strlen(fmt);
    sb_printf(&e->print_decls, ".global .align 1 .b8 __tilec_fmt_%d[%zu] = {", id, len + 1);
    for (size_t i = 0; i <= len; i++) sb_printf(&e->print_decls, "%s%u", i ? ", " : "", (unsigned)(unsigned char)fmt[i]);
    sb_puts(&e->print_decls, "};\n");

    /* the argument buffer */
    uint32_t off = 0;
    const char *buf = NULL;
    if (op->noperands) {
        uint32_t size = 0;
        for (uint32_t i = 0; i < op->noperands; i++) {
            const Type *t = op->operands[i]->type;
            uint32_t w = (t->kind == TY_I1 || t->kind == TY_I32 || t->kind == TY_U32) ? 4 : 8;
            size = (size + w - 1) / w * w + w;
        }
        sb_printf(&e->decl, "\t.local .align 8 .b8 __tilec_print_%d[%u];\n", id, size);
        for (uint32_t i = 0; i < op->noperands; i++) {
            const Value *v = op->operands[i];
            const char *r = ptx_vr(e, v, 0), *st = "b64";
            uint32_t w = 8;
            switch (v->type->kind) {
            case TY_I1: {   /* as 0 or 1 */
                const char *x = ptx_tmp(e, RC_B32);
                ptx_ins(e, "selp.u32 %s, 1, 0, %s", x, r);
                r = x, st = "b32", w = 4;
                break;
            }
            case TY_I32: case TY_U32: st = "b32", w = 4; break;
            case TY_I64: case TY_U64: break;
            case TY_F32: {  /* promoted to double */
                const char *d = ptx_tmp(e, RC_F64);
                ptx_ins(e, "cvt.f64.f32 %s, %s", d, r);
                r = d, st = "f64";
                break;
            }
            case TY_F64: st = "f64"; break;
            default:
                ptx_error_at(e, op, "print of a %s operand (the verifier admits i1, i32, u32, i64, u64, f32, f64)",
                             ir_type_kind_name(v->type->kind));
                return;
            }
            off = (off + w - 1) / w * w;
            ptx_ins(e, "st.local.%s [__tilec_print_%d+%u], %s", st, id, off, r);
            off += w;
        }
        buf = ptx_tmp(e, RC_B64);
        ptx_ins(e, "mov.u64 %s, __tilec_print_%d", buf, id);
        ptx_ins(e, "cvta.local.u64 %s, %s", buf, buf);
    }
    const char *f = ptx_tmp(e, RC_B64);
    ptx_ins(e, "mov.u64 %s, __tilec_fmt_%d", f, id);
    ptx_ins(e, "cvta.global.u64 %s, %s", f, f);
    sb_puts(&e->body, "\t{\n");
    ptx_ins(e, ".param .b64 _pf");
    ptx_ins(e, "st.param.b64 [_pf], %s", f);
    ptx_ins(e, ".param .b64 _pa");
    ptx_ins(e, "st.param.b64 [_pa], %s", buf ? buf : "0");
    ptx_ins(e, ".param .b32 _pr");
    ptx_ins(e, "call (_pr), vprintf, (_pf, _pa)");
    sb_puts(&e->body, "\t}\n");
}
