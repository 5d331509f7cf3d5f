#!/usr/bin/env python3
"""includes.py: the folders of tilec and which may include whose headers, checked from the sources.

Every `#include "..."` of every source file is resolved the way the compiler resolves it (the
including file's folder first, then the Makefile's -I list in order) and turned into an edge
between two folders. An edge that is not written down below fails the test, and so does a cycle
in the list itself: the layering is the list, and the list is a DAG.

Run from the repository root: python3 tests/layout/includes.py
"""
import os
import re
import sys

# Searched in this order, as in the Makefile's CPPFLAGS (build/gen holds the generated parser.h,
# which belongs to frontend/).
INCLUDE_PATH = ["include", "ir", "frontend", "passes", "codegen_ptx", "codegen_amdgcn", "lib",
                "runtime", "runtime/sim", "samples/ref"]
GENERATED = {"parser.h": "frontend"}

# folder -> the folders it may include from. A value of (folder, {headers}) restricts the edge to
# those headers.
ALLOWED = {
    "include": [],
    "ir": ["include"],
    "frontend": ["ir"],
    "passes": ["ir"],
    "codegen_ptx": ["ir", "include"],
    "codegen_amdgcn": ["ir", "include"],
    # the library core: the compile pipeline over every compiler layer
    "lib": ["include", "ir", "frontend", "passes", "codegen_ptx", "codegen_amdgcn"],
    # the runtime sees the core only through its program header
    "runtime": ["include", ("lib", {"program.h"})],
    # the simulator interprets lowered IR text: it parses it with ir/
    "runtime/sim": ["runtime", "ir", "include", ("lib", {"program.h"})],
    "samples/ref": ["include"],
    # the command line: the public API, what the core exports for it, the samples' references
    "cli": ["include", ("lib", {"program.h"}), "samples/ref"],
}
SOURCE_DIRS = list(ALLOWED)
EXT = (".c", ".h", ".re", ".y", ".def")


def folder_of(path):
    d = os.path.dirname(path)
    return d if d in ALLOWED else None


def resolve(including, name):
    if name in GENERATED:
        return os.path.join(GENERATED[name], name)
    here = os.path.join(os.path.dirname(including), name)
    if os.path.exists(here):
        return os.path.normpath(here)
    for d in INCLUDE_PATH:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


def reaches(graph, a, b, seen=None):
    seen = seen or set()
    for n in graph.get(a, []):
        if n == b or (n not in seen and (seen.add(n) or reaches(graph, n, b, seen))):
            return True
    return False


def main():
    errors = []
    graph = {f: [e if isinstance(e, str) else e[0] for e in es] for f, es in ALLOWED.items()}
    for f in graph:
        if reaches(graph, f, f):
            errors.append(f"the allowed edges have a cycle through {f}")
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    nfiles = nedges = 0
    for d in SOURCE_DIRS:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith(EXT) or not os.path.isfile(path):
                continue
            nfiles += 1
            with open(path, encoding="utf-8") as fh:
                for lineno, line in enumerate(fh, 1):
                    m = inc.match(line)
                    if not m:
                        continue
                    target = resolve(path, m.group(1))
                    if target is None:
                        errors.append(f"{path}:{lineno}: \"{m.group(1)}\" is not a header of the tree")
                        continue
                    to = folder_of(target)
                    if to is None or to == d:
                        continue
                    nedges += 1
                    ok = False
                    for e in ALLOWED[d]:
                        if e == to or (not isinstance(e, str) and e[0] == to and os.path.basename(target) in e[1]):
                            ok = True
                    if not ok:
                        errors.append(f"{path}:{lineno}: {d}/ may not include {target} ({to}/): "
                                      f"not an edge of tests/layout/includes.py")
    for e in errors:
        print("includes: " + e, file=sys.stderr)
    if errors:
        return 1
    print(f"includes: {nfiles} files, {nedges} cross-folder includes, all along the allowed edges, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
