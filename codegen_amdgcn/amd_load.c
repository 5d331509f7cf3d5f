/* amd_load.c: libtile's side of the AMD back end: finds libtile_amdgcn.so, opens it with dlopen the
 * first time an AMD target is compiled, and calls amd_emit.c through the AmdBackend table it exports.
 *
 * The one idea: libLLVM is mapped into a process only when that process compiles for gfx942 or
 * gfx90a; one that emits PTX or runs the simulator never pays for it. The back end is opened once
 * per process (pthread_once) and never closed (its LLVM has run global constructors). When it cannot
 * be opened the reason is kept, and every AMD compile reports it as an error saying what was looked
 * for where, what dlopen said, and how to get the missing piece. The search order is in amdgcn.h.
 * The handle and that reason are the only global state, written once.
 */
#define _GNU_SOURCE   /* dladdr1 and RTLD_DL_LINKMAP, to name the file libtile was loaded from */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amdgcn.h"

enum { PATH_BYTES = 4096 };

#ifdef TILEC_AMDGCN_DIR
#define INSTALL_DIR TILEC_AMDGCN_DIR
#else
#define INSTALL_DIR "PREFIX/lib/tilec"
#endif

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const AmdBackend *backend;   /* NULL when the back end could not be opened */
static char why[8 * PATH_BYTES];    /* then: the reason, a clause that follows "cannot compile for gfx942: " */

static void say(char *buf, size_t size, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, size - used, fmt, ap);
    va_end(ap);
}

/* Opens one candidate. 0: loaded (backend set); 1: no file there; -1: a file that is not a usable
 * back end (*fail says why). A failed candidate stays open: closing it would run LLVM's destructors
 * for nothing. */
static int try_open(const char *path, char *fail, size_t n)
{
    if (access(path, F_OK) != 0) return 1;
    char here[PATH_BYTES + 2];
    if (!strchr(path, '/')) {   /* a bare name is a file here, not one for dlopen to search the library path for */
        snprintf(here, sizeof here, "./%s", path);
        path = here;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(fail, n, "%s (it needs LLVM 19's libLLVM.so.19.1: install llvm-19, Debian/Ubuntu package libllvm19)",
                 e ? e : path);
        return -1;
    }
    const AmdBackend *b = dlsym(h, AMD_BACKEND_SYMBOL);
    if (!b) {
        snprintf(fail, n, "%s defines no `%s`: it is not tilec's AMD back end", path, AMD_BACKEND_SYMBOL);
        return -1;
    }
    if (!b->abi || strcmp(b->abi, AMD_BACKEND_ABI) != 0) {
        snprintf(fail, n, "%s was built from other sources than this libtile (headers %s, expected %s): "
                 "build and install libtile and the back end together", path, b->abi ? b->abi : "?", AMD_BACKEND_ABI);
        return -1;
    }
    backend = b;
    return 0;
}

/* The directory of the file holding this code: libtile.so, or the executable (or other shared
 * object) that libtile.a was linked into. Empty when it cannot be told. */
static void own_dir(char *dir, size_t n)
{
    Dl_info info;
    struct link_map *lm = NULL;
    char exe[PATH_BYTES];
    const char *file = NULL;
    dir[0] = 0;
    if (dladdr1(&load_once, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name && lm->l_name[0]) {
        file = lm->l_name;
    } else {   /* the main program, whose link map has no name */
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k <= 0) return;
        exe[k] = 0;
        file = exe;
    }
    const char *slash = strrchr(file, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == file) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - file), file);
}

/* What load() works in: on the heap, as the first AMD compile may run on a thread with a small stack. */
typedef struct Search {
    char dir[PATH_BYTES];                /* the directory of libtile's file */
    char cands[5][PATH_BYTES + 64];      /* the places of the search order */
    char fail[2 * PATH_BYTES];           /* why the first file that is there is no usable back end */
    char looked[6 * PATH_BYTES];         /* the places where there is no file */
    char one[2 * PATH_BYTES];            /* why this candidate failed */
} Search;

static void load(void)
{
    Search *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, sizeof why, "the AMD back end could not be loaded: out of memory");
        return;
    }
    const char *env = getenv("TILEC_AMDGCN_LIBRARY");
    if (env && *env) {
        int rc = try_open(env, s->fail, sizeof s->fail);
        if (rc == 1) snprintf(why, sizeof why, "the AMD back end could not be loaded: TILEC_AMDGCN_LIBRARY=%s names no file", env);
        else if (rc < 0) snprintf(why, sizeof why, "the AMD back end (TILEC_AMDGCN_LIBRARY=%s) could not be loaded: %s", env, s->fail);
        free(s);
        return;
    }
    own_dir(s->dir, sizeof s->dir);
    int ncand = 0;
    if (s->dir[0]) {
        snprintf(s->cands[ncand++], sizeof s->cands[0], "%s/" AMD_BACKEND_FILE, s->dir);
        snprintf(s->cands[ncand++], sizeof s->cands[0], "%s/tilec/" AMD_BACKEND_FILE, s->dir);
        snprintf(s->cands[ncand++], sizeof s->cands[0], "%s/../lib/tilec/" AMD_BACKEND_FILE, s->dir);
    }
#ifdef TILEC_AMDGCN_SO
    snprintf(s->cands[ncand++], sizeof s->cands[0], "%s", TILEC_AMDGCN_SO);
#endif
#ifdef TILEC_AMDGCN_DIR
    snprintf(s->cands[ncand++], sizeof s->cands[0], "%s/" AMD_BACKEND_FILE, INSTALL_DIR);
#endif
    int rc = 1;
    for (int i = 0; i < ncand && rc != 0; i++) {
        int seen = 0;   /* the build tree's copy is also the one next to the build's tilec */
        for (int j = 0; j < i; j++) seen |= strcmp(s->cands[i], s->cands[j]) == 0;
        if (seen) continue;
        s->one[0] = 0;
        rc = try_open(s->cands[i], s->one, sizeof s->one);
        if (rc < 0 && !s->fail[0]) snprintf(s->fail, sizeof s->fail, "%s", s->one);
        if (rc > 0) say(s->looked, sizeof s->looked, "%s%s", s->looked[0] ? ", " : "", s->cands[i]);
    }
    if (rc != 0 && s->fail[0])
        snprintf(why, sizeof why, "the AMD back end (" AMD_BACKEND_FILE ") could not be loaded: %s", s->fail);
    else if (rc != 0)
        snprintf(why, sizeof why, "the AMD back end (" AMD_BACKEND_FILE ") could not be loaded: there is none (looked for "
                 "%s); `make` builds it where llvm-19-dev is installed (AMD=1, the default; not with AMD=0) and "
                 "`make install` puts it in %s; or set TILEC_AMDGCN_LIBRARY to its path",
                 s->looked[0] ? s->looked : "it nowhere", INSTALL_DIR);
    free(s);
}

static const AmdBackend *get_backend(void)
{
    pthread_once(&load_once, load);
    return backend;
}

int amd_emit_module(const Module *m, AmdTarget target, const AmdOptions *opts, AmdOutput *out, DiagCtx *diag)
{
    const AmdBackend *b = get_backend();
    if (b) return b->emit_module(m, target, opts, out, diag);
    Loc at = {0};
    if (m && m->first) at = m->first->loc;
    diag_error(diag, at, "cannot compile for %s: %s", amd_target_name(target), why);
    return 1;
}

int amd_asm_from_llvm(const char *llvm_ir, size_t len, AmdTarget target, int opt_level, StrBuf *asm_text, DiagCtx *diag)
{
    const AmdBackend *b = get_backend();
    if (b) return b->asm_from_llvm(llvm_ir, len, target, opt_level, asm_text, diag);
    Loc none = {0};
    diag_error(diag, none, "no %s assembly: %s", amd_target_name(target), why);
    return 1;
}
