#!/usr/bin/env python3
"""Writes tile.dict, libFuzzer's dictionary for .tile sources, from the front end's own tables:
the lexer's keywords and type names, the builtin table's function and named-argument names, the
names the pipeline, print, shared-tile and group code compares with, and the language's punctuation. Usage: mkdict.py ROOT OUT"""
import re
import sys

root, out = sys.argv[1], sys.argv[2]
words = set()
lexer = open(root + "/frontend/lexer.re").read()
words.update(re.findall(r'^\s*"([a-z_][a-z_0-9]*)"', lexer, re.M))
builtins = open(root + "/frontend/sema_builtins.c").read()
words.update(re.findall(r'\{\s*(?:NULL|"[a-z_]+")\s*,\s*"([a-z_0-9]+)"', builtins))
for pair in re.findall(r'\{\s*"([a-z_0-9]+)"\s*,\s*"([a-z_0-9]+)"', builtins):
    words.update(pair)
for names in re.findall(r'_named\[\]\s*=\s*\{([^}]*)\}', builtins):
    words.update(re.findall(r'"([a-z_0-9]+)"', names))
# the words the feature files compare names with: attributes (stages, consumers, alternating, tiles),
# methods (start, next, skip, turn), guards (each = warp)
for src in ("sema_pipe.c", "sema_print.c", "sema_shared.c", "sema_groups.c"):
    words.update(re.findall(r'strcmp\([^,()]+, "([a-z_][a-z_0-9]*)"\)', open(root + "/frontend/" + src).read()))
punct = ["(", ")", "{", "}", "[", "]", "<", ">", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->",
         "::", ".", ",", ";", ":", "=", "+=", "*", "/", "%", "&", "|", "^", "~", "!", "..", "//", "/*", "*/",
         "0x", "1e", "1.0", "-1", "2147483648", "4294967296", "9223372036854775808", "1e400", "nan", "inf",
         "thread_id.x", "block_id.x", "block(128)", "cluster(2)", "f32*", "tensor f32[", "shared f32["]
with open(out, "w") as f:
    for w in sorted(words) + punct:
        f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))
print("%s: %d entries" % (out, len(words) + len(punct)))
