"""Hostile .npy files for `tilec run --in` and `--ref`: each case file is the .npy itself, given to
the scaled-copy kernel of tests/lit/cli/Inputs. Headers that lie about their length or shape, dims
past any memory, truncated data, dtypes and orders tilec does not read, shapes that disagree with
the kernel: each must be a clear error naming the file (exit 1, no source position), never a
crash, an allocation the size of a lie, or a hang.
"""
import os
import struct

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KERNEL = os.path.join(ROOT, "tests", "lit", "cli", "Inputs", "scaled_copy.tile")
KERNEL2 = os.path.join(ROOT, "tests", "lit", "cli", "Inputs", "bump2d.tile")
LIBM = ["/lib/x86_64-linux-gnu/libm.so.6", "/lib/aarch64-linux-gnu/libm.so.6", "/lib64/libm.so.6", "/usr/lib64/libm.so.6",
        "/usr/lib/libm.so.6"]
RUN = "run " + KERNEL + " --device sim --arg a=2 --in x=%s"


def npy(text, data=b"", version=1, hlen=None, magic=b"\x93NUMPY"):
    body = text.encode("latin-1")
    n = len(body) if hlen is None else hlen
    length = struct.pack("<H", n) if version == 1 else struct.pack("<I", n)
    return magic + bytes([version, 0]) + length + body + data


def dict_(descr="<f4", shape="(1000,)", order="False"):
    return "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }\n" % (descr, order, shape)


F4 = b"\0" * 4000


def cases():
    opts = {"located": False}
    yield "header_len_65535", ".npy", npy(dict_(), F4[:8], hlen=65535), RUN, r"header_len_65535.npy: malformed \.npy header: its length 65535 is past the end of the file", opts
    yield "header_len_4g", ".npy", npy(dict_(), version=2, hlen=0xFFFFFFFF), RUN, r"its length 4294967295 is past the end of the file .* or above 1 MiB", opts
    yield "shape_2_70", ".npy", npy(dict_(shape="(1180591620717411303424,)")), RUN, r"shape_2_70\.npy: malformed \.npy header: a dim of 'shape' is not a count below 2\^62", opts
    yield "shape_product_overflow", ".npy", npy(dict_(shape="(1099511627776, 1099511627776)")), RUN, r"shape_product_overflow\.npy: the shape's element count overflows", opts
    yield "shape_2_61", ".npy", npy(dict_(shape="(2305843009213693952,)"), F4), RUN, r"shape_2_61\.npy: truncated \.npy file: shape \(2305843009213693952,\) of '<f4' needs", opts
    yield "shape_negative", ".npy", npy(dict_(shape="(-1,)"), F4), RUN, r"a dim of 'shape' is not a count", opts
    yield "truncated_data", ".npy", npy(dict_(), F4[:3999]), RUN, r"truncated_data\.npy: truncated \.npy file: shape \(1000,\) of '<f4' needs 4000 bytes of data, the file has 3999", opts
    yield "extra_data", ".npy", npy(dict_(), F4 + b"\0"), RUN, r"extra_data\.npy: .*extra bytes after the array", opts
    yield "truncated_header", ".npy", npy(dict_()[:20], hlen=100), RUN, r"truncated_header\.npy: malformed \.npy header: its length 100 is past the end", opts
    yield "truncated_magic", ".npy", b"\x93NUM", RUN, r"truncated_magic\.npy: not a \.npy file", opts
    yield "empty", ".npy", b"", RUN, r"empty\.npy: not a \.npy file", opts
    yield "bad_magic", ".npy", npy(dict_(), F4, magic=b"\x93NUMPZ"), RUN, r"bad_magic\.npy: not a \.npy file", opts
    yield "version_3", ".npy", npy(dict_(), F4, version=3), RUN, r"version_3\.npy: \.npy format version 3\.0; versions 1\.0 and 2\.0 are read", opts
    yield "not_a_dict", ".npy", npy("[1, 2, 3]\n", F4), RUN, r"not_a_dict\.npy: malformed \.npy header: it does not start with '\{'", opts
    yield "unterminated_string", ".npy", npy("{'descr': '<f4\n", F4), RUN, r"unterminated_string\.npy: malformed \.npy header", opts
    yield "unclosed_dict", ".npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,)\n", F4), RUN, r"unclosed_dict\.npy: malformed \.npy header: expected ',' or '\}'", opts
    yield "missing_shape", ".npy", npy("{'descr': '<f4', 'fortran_order': False}\n", F4), RUN, r"missing_shape\.npy: malformed \.npy header: it lacks 'shape'", opts
    yield "unknown_key", ".npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000,), 'x': 1}\n", F4), RUN, r"unknown_key\.npy: malformed \.npy header: unknown key 'x'", opts
    yield "nested_shape", ".npy", npy(dict_(shape="((1000,),)"), F4), RUN, r"nested_shape\.npy: malformed \.npy header: a dim of 'shape'", opts
    yield "text_after", ".npy", npy(dict_() + "junk", F4), RUN, r"text_after\.npy: malformed \.npy header: text after the closing", opts
    yield "nul_in_header", ".npy", npy("{'descr': '<f4'\0, 'fortran_order': False, 'shape': (1000,), }", F4), RUN, r"nul_in_header\.npy: malformed \.npy header", opts
    yield "structured_dtype", ".npy", npy(dict_(descr="x").replace("'x'", "[('a', '<f4')]"), F4), RUN, r"structured dtypes are not supported", opts
    yield "dtype_i4", ".npy", npy(dict_(descr="<i4"), F4), RUN, r"dtype_i4\.npy: dtype '<i4' does not match parameter 'x', of element type f32 \(expected '<f4'\)", opts
    yield "dtype_f8", ".npy", npy(dict_(descr="<f8"), F4 + F4), RUN, r"dtype '<f8' does not match parameter 'x'", opts
    yield "dtype_big_endian", ".npy", npy(dict_(descr=">f4"), F4), RUN, r"dtype_big_endian\.npy: dtype '>f4' is big-endian", opts
    yield "dtype_bogus", ".npy", npy(dict_(descr="<f9"), F4), RUN, r"dtype '<f9' is not a scalar dtype", opts
    yield "rank_2_for_rank_1", ".npy", npy(dict_(shape="(10, 100)"), F4), RUN, r"rank_2_for_rank_1\.npy: shape \(10, 100\) has 2 dims, but 'x' of kernel 'scaled_copy' is a rank-1 tensor", opts
    yield "rank_6", ".npy", npy(dict_(shape="(1, 1, 1, 1, 1, 1000)"), F4), RUN, r"rank_6\.npy: the array has more than 5 dims", opts
    yield "shape_vs_arg", ".npy", npy(dict_(), F4), RUN + " --arg n=999", r"shape_vs_arg\.npy: shape \(1000,\) disagrees with n = 999 \(from --arg n\)", opts
    yield "fortran_order", ".npy", npy(dict_(shape="(10, 100)", order="True"), F4), "run " + KERNEL2 + " --device sim --in x=%s", r"fortran_order\.npy: the array is in Fortran order", opts
    yield "ref_shape_disagrees", ".npy", npy(dict_(shape="(999,)"), F4[:3996]), "run " + KERNEL + " --device sim --arg a=2 --arg n=1000 --ref y=%s", r"ref_shape_disagrees\.npy: shape \(999,\) disagrees with n = 1000", opts
    # names and files the command line gets wrong
    good = npy(dict_(), F4)
    yield "unknown_param", ".npy", good, "run " + KERNEL + " --device sim --arg a=2 --in z=%s", r"--in z: kernel 'scaled_copy' has no buffer parameter of that name; its buffers: x, y", opts
    yield "scalar_param", ".npy", good, "run " + KERNEL + " --device sim --arg a=2 --in n=%s", r"--in n: 'n' is a scalar parameter, not a buffer", opts
    yield "ref_unknown_param", ".npy", good, "run " + KERNEL + " --device sim --arg a=2 --ref q=%s", r"--ref q: kernel 'scaled_copy' has no buffer parameter", opts
    yield "missing_file", ".npy", good, RUN + "_not_there.npy", r"cannot open '.*_not_there\.npy': No such file or directory", opts
    yield "save_unknown", ".npy", good, RUN + " --save w=/dev/null", r"--save w: kernel 'scaled_copy' has no buffer parameter 'w'", opts
    yield "so_missing", ".npy", good, RUN + " --ref /nonexistent/lib.so:fn", r"--ref /nonexistent/lib\.so:fn: cannot load the shared object", opts
    # a shared object every C library has (where it usually lies; tests/lit/cli/run_reference.test builds its own)
    libm = [p for p in LIBM if os.path.isfile(p)]
    if libm:
        yield "so_without_symbol", ".npy", good, RUN + " --ref " + libm[0] + ":no_such_function", r"has no symbol 'no_such_function'", opts
    yield "raw_not_whole", ".npy", F4[:10], "run " + KERNEL + " --device sim --arg a=2 --in x=raw:%s", r"10 bytes is not a whole number of f32 elements", opts
    yield "raw_device", ".npy", good, "run " + KERNEL + " --device sim --arg a=2 --in x=raw:/dev/zero", r"/dev/zero: not a regular file", opts
    yield "npy_device", ".npy", good, "run " + KERNEL + " --device sim --arg a=2 --in x=/dev/zero.npy", r"cannot open '/dev/zero\.npy'", opts
