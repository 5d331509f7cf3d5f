/* main.c: the `tilec` command line, a thin shell over the C API in tile.h.
 *
 * Reads a file (or stdin for "-"), compiles it with the options given, writes the requested
 * stage to -o (or stdout) and the diagnostics to stderr. Exit status: 0 success, 1 errors in the
 * input (or a tool like ptxas failing), 2 a bad command line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tile.h"

static const char usage[] =
    "usage: tilec FILE.tile [options]      (FILE may be '-' for standard input)\n"
    "\n"
    "options:\n"
    "  -o OUT                  write the output to OUT ('-' or absent: standard output)\n"
    "  --target T              sm_90a (default) or sm_100a\n"
    "  --emit S                ast | ir | ir-lowered | ptx (default) | cubin\n"
    "  -O0 .. -O3              optimisation level (default -O2)\n"
    "  -DNAME=VALUE            override `const NAME = ...;` of the source\n"
    "  --input ir              the input is textual tile IR instead of .tile source\n"
    "  --pipeline P            run this comma-separated pass pipeline instead of the -O default\n"
    "  --verify-each           run the IR verifier after every pass\n"
    "  --print-ir-after-all    print the IR after every pass (to standard error)\n"
    "  --print-ir-after=NAMES  print the IR after the named passes (comma-separated)\n"
    "  --print-ir-before=NAMES print the IR before the named passes\n"
    "  --help, --version\n"
    "\n"
    "passes:\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "tilec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\ntry 'tilec --help'\n");
    return 2;
}

static char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (n == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

/* "--opt=value" or "--opt value" */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *input = NULL, *output = NULL, *emit = "ptx", *v;
    tile_compile_options o = {.target = TILE_TARGET_SM90A, .opt_level = 2};
    tile_define *defs = calloc((size_t)argc, sizeof *defs);
    if (!defs) return 1;
    char **owned = calloc((size_t)argc, sizeof *owned);
    if (!owned) return 1;
    int nowned = 0, rc = 2;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            for (int k = 0; k < pass_count; k++) printf("  %-22s  %s\n", pass_table[k].name, pass_table[k].summary);
            rc = 0;
            goto out;
        } else if (strcmp(a, "--version") == 0) {
            printf("tilec %s (targets: sm_90a, sm_100a)\n", tile_version());
            rc = 0;
            goto out;
        } else if (strcmp(a, "-o") == 0) {
            if (++i >= argc) { rc = usage_error("%s needs an argument", a); goto out; }
            output = argv[i];
        } else if ((v = opt_value(argc, argv, &i, "--target"))) {
            if (strcmp(v, "sm_90a") == 0) o.target = TILE_TARGET_SM90A;
            else if (strcmp(v, "sm_100a") == 0) o.target = TILE_TARGET_SM100A;
            else { rc = usage_error("unknown target '%s' (sm_90a or sm_100a)", v); goto out; }
        } else if ((v = opt_value(argc, argv, &i, "--emit"))) {
            if (strcmp(v, "ast") && strcmp(v, "ir") && strcmp(v, "ir-lowered") && strcmp(v, "ptx") && strcmp(v, "cubin")) {
                rc = usage_error("unknown --emit stage '%s' (ast, ir, ir-lowered, ptx, cubin)", v);
                goto out;
            }
            emit = v;
        } else if ((v = opt_value(argc, argv, &i, "--input"))) {
            if (strcmp(v, "ir") == 0) o.input_ir = 1;
            else if (strcmp(v, "tile") == 0) o.input_ir = 0;
            else { rc = usage_error("unknown --input kind '%s' (tile or ir)", v); goto out; }
        } else if ((v = opt_value(argc, argv, &i, "--pipeline"))) {
            o.pipeline = v;
        } else if ((v = opt_value(argc, argv, &i, "--print-ir-after"))) {
            o.print_ir_after = v;
        } else if ((v = opt_value(argc, argv, &i, "--print-ir-before"))) {
            o.print_ir_before = v;
        } else if (strcmp(a, "--print-ir-after-all") == 0) {
            o.print_ir_after_all = 1;
        } else if (strcmp(a, "--verify-each") == 0) {
            o.verify_each = 1;
        } else if (a[0] == '-' && a[1] == 'O' && a[2] >= '0' && a[2] <= '3' && a[3] == 0) {
            o.opt_level = a[2] - '0';
        } else if (a[0] == '-' && a[1] == 'D' && a[2]) {
            const char *eq = strchr(a + 2, '=');
            if (!eq || eq == a + 2) { rc = usage_error("%s: expected -DNAME=VALUE", a); goto out; }
            char *name = strndup(a + 2, (size_t)(eq - a - 2));
            if (!name) goto out;
            owned[nowned++] = name;
            defs[o.ndefines].name = name;
            defs[o.ndefines].value = eq + 1;
            o.ndefines++;
        } else if (a[0] == '-' && a[1] != 0) {
            rc = usage_error("unknown option '%s'", a);
            goto out;
        } else if (input) {
            rc = usage_error("more than one input file ('%s')", a);
            goto out;
        } else {
            input = a;
        }
    }
    if (!input) { rc = usage_error("%s", "no input file"); goto out; }
    o.defines = defs;
    if (strcmp(emit, "cubin") == 0) o.assemble = 1;
    if (strcmp(emit, "ir") == 0 || strcmp(emit, "ir-lowered") == 0 || strcmp(emit, "ast") == 0) o.stop_after_ir = 1;

    size_t len = 0;
    char *src;
    if (strcmp(input, "-") == 0) {
        src = read_all(stdin, &len);
        input = "<stdin>";
    } else {
        FILE *f = fopen(input, "rb");
        if (!f) {
            fprintf(stderr, "tilec: cannot open '%s': %s\n", input, strerror(errno));
            rc = 1;
            goto out;
        }
        src = read_all(f, &len);
        fclose(f);
    }
    if (!src) {
        fprintf(stderr, "tilec: cannot read '%s'\n", input);
        rc = 1;
        goto out;
    }

    tile_program *p = NULL;
    tile_status st = tile_compile(src, len, input, &o, &p);
    free(src);
    if (!p) {
        fprintf(stderr, "tilec: %s\n", tile_status_string(st));
        rc = st == TILE_ERROR_INVALID_ARGUMENT ? 2 : 1;
        goto out;
    }
    fputs(tile_program_diagnostics(p), stderr);
    const char *dump;
    size_t dlen;
    if (tile_program_emit(p, TILE_STAGE_IR_DUMPS, &dump, &dlen) == TILE_SUCCESS) fwrite(dump, 1, dlen, stderr);

    tile_stage stage = strcmp(emit, "ast") == 0 ? TILE_STAGE_AST
                     : strcmp(emit, "ir") == 0 ? TILE_STAGE_IR
                     : strcmp(emit, "ir-lowered") == 0 ? TILE_STAGE_IR_LOWERED
                     : strcmp(emit, "cubin") == 0 ? TILE_STAGE_CUBIN : TILE_STAGE_PTX;
    rc = 1;
    const char *data;
    size_t n;
    if (st == TILE_SUCCESS && tile_program_emit(p, stage, &data, &n) == TILE_SUCCESS) {
        FILE *f = (!output || strcmp(output, "-") == 0) ? stdout : fopen(output, "wb");
        if (!f) {
            fprintf(stderr, "tilec: cannot write '%s': %s\n", output, strerror(errno));
        } else {
            int ok = fwrite(data, 1, n, f) == n;
            if (f != stdout) ok &= fclose(f) == 0;
            else ok &= fflush(f) == 0;
            if (ok) rc = 0;
            else fprintf(stderr, "tilec: error writing the output\n");
        }
    }
    tile_program_destroy(p);
out:
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(owned);
    free(defs);
    return rc;
}
