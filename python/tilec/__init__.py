"""tilec from Python: compile `.tile` kernels and launch them on NumPy arrays, through libtile.

A thin layer over the C API of include/tile.h, loaded with ctypes (no compiled extension, nothing
beyond the standard library; NumPy is used when arrays are passed):

    import numpy as np, tilec
    prog = tilec.compile("samples/vector_add.tile")            # a path or the source text
    add = prog["vector_add"]
    a, b = np.random.rand(1000).astype(np.float32), np.ones(1000, np.float32)
    c = np.empty_like(a)
    add(a, b, c, 1000, grid=4, device="sim")                   # c now holds a + b

A failed compile raises CompileError (its message the located diagnostics, `.diagnostics` the
records); arguments the kernel's signature refuses raise LaunchError with the runtime's message.
On a device, NumPy arrays are copied in before the launch and every array is copied back after it
completes. docs/PYTHON.md describes the API.

Where libtile.so is found: $TILEC_LIB, else the build tree this package sits in
(<repo>/build/libtile.so), else <prefix>/lib/libtile.so of an installed package
(<prefix>/lib/python3/dist-packages/tilec), else the loader's search path.
"""
import ctypes
import hashlib
import json
import os
import time

__all__ = ["compile", "autotune", "Autotuner", "Program", "Kernel", "Param", "Device", "Stream", "Event", "TileError",
           "CompileError",
           "LaunchError", "TARGETS", "version"]

TARGETS = ("sm_90a", "sm_100a", "gfx942", "gfx90a")
_DTYPES = ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "e4m3", "e5m2")
_KINDS = ("scalar", "pointer", "tensor", "tma")
# NumPy dtype names of the element types an array may carry (bf16 and fp8 travel as their bits:
# uint16 and uint8 arrays)
_NP_OK = {"i1": ("bool", "uint8", "int8"), "i8": ("int8",), "i16": ("int16",), "i32": ("int32",), "i64": ("int64",),
          "u8": ("uint8",), "u16": ("uint16",), "u32": ("uint32",), "u64": ("uint64",), "f16": ("float16",),
          "bf16": ("uint16",), "f32": ("float32",), "f64": ("float64",), "e4m3": ("uint8",), "e5m2": ("uint8",)}
# The element type names of device arrays: torch dtypes (without "torch.") and the NumPy names of
# __cuda_array_interface__'s typestr; bf16 and fp8 tensors carry their own names.
_DEV_OK = {"i1": ("bool", "uint8", "int8"), "i8": ("int8",), "i16": ("int16",), "i32": ("int32",), "i64": ("int64",),
           "u8": ("uint8",), "u16": ("uint16",), "u32": ("uint32",), "u64": ("uint64",), "f16": ("float16",),
           "bf16": ("bfloat16", "uint16", "int16"), "f32": ("float32",), "f64": ("float64",),
           "e4m3": ("float8_e4m3fn", "uint8"), "e5m2": ("float8_e5m2", "uint8")}
_SUCCESS, _ERROR_COMPILE, _ERROR_LAUNCH_ARGS, _NOT_READY = 0, 2, 13, 16


_torch_dtypes = {}   # torch dtype -> its name without "torch."


def _is_torch(v):
    return type(v).__module__.startswith("torch")


def _device_array(v):
    """(address, dtype name, shape, strides in elements, CUDA device ordinal) of an array in GPU
    memory (a CUDA torch tensor, or an object with __cuda_array_interface__), or None for anything
    else."""
    if _is_torch(v) and hasattr(v, "data_ptr"):
        if not getattr(v, "is_cuda", False):
            return None
        dt = _torch_dtypes.get(v.dtype)
        if dt is None:
            dt = _torch_dtypes[v.dtype] = str(v.dtype).replace("torch.", "")
        return v.data_ptr(), dt, tuple(v.shape), tuple(v.stride()), v.get_device()
    cai = getattr(v, "__cuda_array_interface__", None)
    if (not isinstance(cai, dict) or "data" not in cai) and hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
        try:   # a DLPack producer (JAX, CuPy, ...) in CUDA memory: read through torch, without a copy
            if v.__dlpack_device__()[0] == 2:   # kDLCUDA
                import torch
                return _device_array(torch.from_dlpack(v))
        except ImportError:
            pass
        return None
    if not isinstance(cai, dict) or "data" not in cai:
        return None
    import numpy   # the typestr's NumPy name ("<f4" -> float32)
    dt = numpy.dtype(cai["typestr"])
    shape = tuple(int(d) for d in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides = _contiguous_strides(shape)
    elif any(b % dt.itemsize for b in strides):
        raise LaunchError("tilec: a __cuda_array_interface__ array with strides %r bytes that are not whole %s elements" %
                          (tuple(strides), dt))
    else:
        strides = tuple(b // dt.itemsize for b in strides)
    return int(cai["data"][0]), str(dt), shape, strides, None


def _contiguous_strides(shape):
    """Row-major strides (in elements) of a shape."""
    out, size = [], 1
    for d in reversed(shape):
        out.insert(0, size)
        size *= d
    return tuple(out)


def _is_contiguous(shape, strides):
    return all(d <= 1 or s == c for d, s, c in zip(shape, strides, _contiguous_strides(shape)))


class _ValueConfig:
    """The base of tilec.gemm.Config and tilec.attention.Config: a configuration that is a value,
    compared and hashed by its key (self._key, set with object.__setattr__ when made), and never
    changed, since the entry points keep their plans by it. _WHAT names the class and its user."""

    _WHAT = ("a configuration", "its entry point")

    def __setattr__(self, name, value):
        raise AttributeError("%s is a value (%s keeps plans by it): make another one" % self._WHAT)

    def key(self):
        return self._key

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


class TileError(Exception):
    """A libtile call failed: the status name and the runtime's message."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class CompileError(TileError):
    """The source has errors. str() is the located diagnostics as tilec prints them; .diagnostics
    holds the records: dicts with severity ("error", "warning", "note"), file, line, col, message."""

    def __init__(self, message, diagnostics, status):
        super().__init__(message, status)
        self.diagnostics = diagnostics


class LaunchError(TileError):
    """The arguments or the launch shape do not fit the kernel (the runtime's message)."""


# ---- the library ------------------------------------------------------------------------------

class _Define(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_char_p)]


class _Options(ctypes.Structure):
    _fields_ = [("target", ctypes.c_int), ("opt_level", ctypes.c_int), ("defines", ctypes.POINTER(_Define)),
                ("ndefines", ctypes.c_int), ("input_ir", ctypes.c_int), ("verify_each", ctypes.c_int),
                ("assemble", ctypes.c_int), ("stop_after_ir", ctypes.c_int), ("pipeline", ctypes.c_char_p),
                ("print_ir_before", ctypes.c_char_p), ("print_ir_after", ctypes.c_char_p),
                ("print_ir_after_all", ctypes.c_int), ("debug_hangs", ctypes.c_int), ("shmem_qp", ctypes.c_int)]


class _Diagnostic(ctypes.Structure):
    _fields_ = [("severity", ctypes.c_int), ("file", ctypes.c_char_p), ("line", ctypes.c_uint),
                ("col", ctypes.c_uint), ("message", ctypes.c_char_p)]


class _ParamInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("rank", ctypes.c_int),
                ("shared", ctypes.c_int), ("dim_params", ctypes.c_int * 5), ("box", ctypes.c_uint * 5),
                ("swizzle", ctypes.c_int), ("spans", ctypes.c_int), ("dim_const", ctypes.c_longlong * 5)]


class _ArgValue(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double), ("ptr", ctypes.c_uint64)]


class _Arg(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("value", _ArgValue),
                ("rank", ctypes.c_int), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64))]


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 256), ("backend", ctypes.c_int), ("cc_major", ctypes.c_int),
                ("cc_minor", ctypes.c_int), ("sm_count", ctypes.c_int), ("max_threads_per_block", ctypes.c_int),
                ("shared_per_block", ctypes.c_size_t), ("shared_per_block_optin", ctypes.c_size_t),
                ("shared_per_sm", ctypes.c_size_t), ("total_memory", ctypes.c_size_t),
                ("stream_priority_least", ctypes.c_int), ("stream_priority_greatest", ctypes.c_int),
                ("driver_version", ctypes.c_int), ("arch", ctypes.c_char * 64)]


class _LaunchConfig(ctypes.Structure):
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("cluster", ctypes.c_uint * 3),
                ("dynamic_shared", ctypes.c_size_t), ("stream", ctypes.c_void_p)]


def _find_lib():
    env = os.environ.get("TILEC_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "build", "libtile.so"),            # the build tree
                 os.path.join(here, "..", "..", "..", "..", "lib", "libtile.so"),  # <prefix>/lib/python3/dist-packages
                 os.path.join(here, "..", "..", "..", "lib", "libtile.so")):      # <prefix>/lib/python3.X/site-packages
        if os.path.exists(cand):
            return os.path.abspath(cand)
    return "libtile.so"


_lib = None


def _L():
    """libtile, loaded (and its prototypes declared) on first use."""
    global _lib
    if _lib is not None:
        return _lib
    path = _find_lib()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise TileError("tilec: cannot load libtile (%s): %s; set TILEC_LIB to its path" % (path, e)) from None
    P, c_int, c_char_p, c_size_t, c_void_p = ctypes.POINTER, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p
    protos = {
        "tile_version": (c_char_p, []),
        "tile_status_string": (c_char_p, [c_int]),
        "tile_last_error": (c_char_p, []),
        "tile_target_parse": (c_int, [c_char_p, P(c_int)]),
        "tile_target_name": (c_char_p, [c_int]),
        "tile_compile": (c_int, [c_char_p, c_size_t, c_char_p, P(_Options), P(c_void_p)]),
        "tile_program_destroy": (None, [c_void_p]),
        "tile_program_diagnostics": (c_char_p, [c_void_p]),
        "tile_program_diagnostic_count": (c_int, [c_void_p]),
        "tile_program_diagnostic": (c_int, [c_void_p, c_int, P(_Diagnostic)]),
        "tile_program_emit": (c_int, [c_void_p, c_int, P(ctypes.c_char_p), P(c_size_t)]),
        "tile_program_kernel_count": (c_int, [c_void_p]),
        "tile_program_kernel_name": (c_char_p, [c_void_p, c_int]),
        "tile_program_kernel_block": (c_int, [c_void_p, c_int, ctypes.c_uint * 3, ctypes.c_uint * 3]),
        "tile_program_kernel_smem": (c_size_t, [c_void_p, c_int]),
        "tile_program_kernel_find": (c_int, [c_void_p, c_char_p]),
        "tile_program_param_count": (c_int, [c_void_p, c_int]),
        "tile_program_param": (c_int, [c_void_p, c_int, c_int, P(_ParamInfo)]),
        "tile_program_target": (c_int, [c_void_p]),
        "tile_backend_parse": (c_int, [c_char_p, P(c_int)]),
        "tile_device_open": (c_int, [c_int, c_int, P(c_void_p)]),
        "tile_device_close": (None, [c_void_p]),
        "tile_device_synchronize": (c_int, [c_void_p]),
        "tile_device_info_get": (c_int, [c_void_p, P(_DeviceInfo)]),
        "tile_malloc": (c_int, [c_void_p, c_size_t, P(ctypes.c_uint64)]),
        "tile_free": (c_int, [c_void_p, ctypes.c_uint64]),
        "tile_memcpy_htod": (c_int, [c_void_p, ctypes.c_uint64, c_void_p, c_size_t]),
        "tile_memcpy_dtoh": (c_int, [c_void_p, c_void_p, ctypes.c_uint64, c_size_t]),
        "tile_module_load": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
        "tile_module_unload": (c_int, [c_void_p]),
        "tile_module_get_kernel": (c_int, [c_void_p, c_char_p, P(c_void_p)]),
        "tile_stream_wrap": (c_int, [c_void_p, c_void_p, P(c_void_p)]),
        "tile_stream_create": (c_int, [c_void_p, ctypes.c_uint, c_int, P(c_void_p)]),
        "tile_stream_destroy": (c_int, [c_void_p]),
        "tile_stream_synchronize": (c_int, [c_void_p]),
        "tile_stream_query": (c_int, [c_void_p]),
        "tile_stream_priority": (c_int, [c_void_p, P(c_int)]),
        "tile_event_create": (c_int, [c_void_p, ctypes.c_uint, P(c_void_p)]),
        "tile_event_destroy": (c_int, [c_void_p]),
        "tile_event_record": (c_int, [c_void_p, c_void_p]),
        "tile_event_synchronize": (c_int, [c_void_p]),
        "tile_event_query": (c_int, [c_void_p]),
        "tile_event_elapsed_ms": (c_int, [c_void_p, c_void_p, P(ctypes.c_float)]),
        "tile_launch": (c_int, [c_void_p, P(_LaunchConfig), P(_Arg), c_int]),
        "tile_kernel_max_resident": (c_int, [c_void_p, P(_LaunchConfig), P(ctypes.c_uint64)]),
        "tile_cache_dir": (c_char_p, []),
    }
    for name, (res, args) in protos.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    _lib = lib
    return lib


def _s(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _check(status, what, cls=TileError):
    if status != _SUCCESS:
        lib = _L()
        msg = _s(lib.tile_last_error()) or _s(lib.tile_status_string(status))
        raise cls("%s: %s" % (what, msg), status)


def version():
    """libtile's version string."""
    return _s(_L().tile_version())


# ---- compiling --------------------------------------------------------------------------------

class Param:
    """One kernel parameter as declared: name, kind ("scalar", "pointer", "tensor", "tma"), dtype
    ("f32", ...), rank (tensor and tma) and, for tma, the box the source declares (`box`: the tile
    one tma op moves, what a grid is computed from), the box of one copy as the map is encoded
    (`copy_box`: its innermost dim one swizzle span when the tile is stored in `spans` column
    spans), and the dims' parameter indices."""

    def __init__(self, info):
        self.name = _s(info.name)
        self.kind = _KINDS[info.kind]
        self.dtype = _DTYPES[info.dtype]
        self.rank = info.rank
        self.copy_box = tuple(info.box[:info.rank]) if self.kind == "tma" else ()
        self.spans = max(1, info.spans) if self.kind == "tma" else 0
        self.box = self.copy_box[:-1] + (self.copy_box[-1] * self.spans,) if self.copy_box else ()
        self.dim_params = tuple(info.dim_params[:info.rank]) if self.kind == "tma" else ()

    def __repr__(self):
        return "Param(%s: %s %s%s)" % (self.name, self.kind, self.dtype, "[%d]" % self.rank if self.rank else "")


def compile(source, *, target=None, defines=None, opt=2, debug_hangs=False, filename=None, assemble=True):
    """Compiles a .tile source (its text, or a path to a file) into a Program.

    target: "sm_90a" (default), "sm_100a", "gfx942", "gfx90a"; defines: {NAME: value} overriding
    top-level consts (as tilec -DNAME=value); opt: 0..3; assemble: for NVIDIA targets, run ptxas
    and load its cubin (the default; False, or no ptxas installed: the driver JIT-compiles the PTX).
    Raises CompileError with the located diagnostics when the source has errors."""
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and source.endswith(".tile")
                                           and os.path.exists(source)):
        filename = filename or os.fspath(source)
        with open(source, "rb") as f:
            text = f.read()
    else:
        text = source.encode() if isinstance(source, str) else bytes(source)
        filename = filename or "<python>"
    lib = _L()
    opts = _Options()
    tgt = ctypes.c_int(0)
    if target is not None:
        _check(lib.tile_target_parse(str(target).encode(), ctypes.byref(tgt)),
               "tilec.compile: target %r (one of %s)" % (target, ", ".join(TARGETS)))
    opts.target = tgt.value
    if not isinstance(opt, int) or not 0 <= opt <= 3:
        raise ValueError("tilec.compile: opt must be 0..3, not %r" % (opt,))
    opts.opt_level = -1 if opt == 0 else opt
    keep = []
    if defines:
        arr = (_Define * len(defines))()
        for i, (k, v) in enumerate(defines.items()):
            keep += [str(k).encode(), str(v).encode()]
            arr[i].name, arr[i].value = keep[-2], keep[-1]
        opts.defines, opts.ndefines = arr, len(defines)
    opts.debug_hangs = 1 if debug_hangs else 0
    # NVIDIA targets: ptxas makes the cubin (what tilec run and gpucheck load); without a ptxas the
    # program keeps its PTX and the driver's JIT compiles it at load
    opts.assemble = 1 if assemble and not str(target or "sm_90a").startswith("gfx") else 0
    prog = ctypes.c_void_p()
    st = lib.tile_compile(text, len(text), filename.encode(), ctypes.byref(opts), ctypes.byref(prog))
    if st == _ERROR_COMPILE or (st != _SUCCESS and prog.value):
        diags = []
        for i in range(lib.tile_program_diagnostic_count(prog)):
            d = _Diagnostic()
            if lib.tile_program_diagnostic(prog, i, ctypes.byref(d)) == _SUCCESS:
                diags.append({"severity": ("error", "warning", "note")[d.severity] if 0 <= d.severity < 3 else "error",
                              "file": _s(d.file), "line": d.line, "col": d.col, "message": _s(d.message)})
        text_diags = _s(lib.tile_program_diagnostics(prog)) or ""
        lib.tile_program_destroy(prog)
        raise CompileError(text_diags.rstrip("\n") or _s(lib.tile_status_string(st)), diags, st)
    _check(st, "tilec.compile")
    return Program(prog)


class Program:
    """A compiled program: its kernels (program["name"]) and its stages as text."""

    def __init__(self, handle):
        self._h = handle
        lib = _L()
        self.target = _s(lib.tile_target_name(lib.tile_program_target(handle)))
        self._kernels = {}
        self._modules = {}
        self._kernel_handles = {}   # id(device) -> {kernel name: handle}
        for i in range(lib.tile_program_kernel_count(handle)):
            name = _s(lib.tile_program_kernel_name(handle, i))
            params = []
            for j in range(lib.tile_program_param_count(handle, i)):
                info = _ParamInfo()
                _check(lib.tile_program_param(handle, i, j, ctypes.byref(info)), "tilec: parameter %d of %s" % (j, name))
                params.append(Param(info))
            block, cluster = (ctypes.c_uint * 3)(), (ctypes.c_uint * 3)()
            lib.tile_program_kernel_block(handle, i, block, cluster)
            self._kernels[name] = Kernel(self, name, params, tuple(block), tuple(cluster))

    def __del__(self):
        try:
            for m in self._modules.values():
                _L().tile_module_unload(m)
            if self._h:
                _L().tile_program_destroy(self._h)
        except Exception:
            pass
        self._h = None

    @property
    def kernels(self):
        """The kernel names, in source order."""
        return list(self._kernels)

    def kernel(self, name):
        if name not in self._kernels:
            raise KeyError("no kernel '%s' in this program (its kernels: %s)" % (name, ", ".join(self._kernels) or "none"))
        return self._kernels[name]

    __getitem__ = kernel

    def emit(self, stage="ptx"):
        """A stage of the compilation as text: "ast", "ir", "ir-lowered", "ptx" (or "llvm", "amdgcn")."""
        stages = {"ast": 0, "ir": 1, "ir-lowered": 2, "ptx": 3, "llvm": 6, "amdgcn": 7}
        if stage not in stages:
            raise ValueError("stage must be one of %s" % ", ".join(stages))
        data, n = ctypes.c_char_p(), ctypes.c_size_t()
        _check(_L().tile_program_emit(self._h, stages[stage], ctypes.byref(data), ctypes.byref(n)),
               "tilec: emit %s" % stage)
        return ctypes.string_at(data, n.value).decode("utf-8", "replace")

    def _index_of(self, name):
        return _L().tile_program_kernel_find(self._h, name.encode())

    def _module(self, device):
        key = id(device)
        if key not in self._modules:
            m = ctypes.c_void_p()
            _check(_L().tile_module_load(device._h, self._h, ctypes.byref(m)), "tilec: load on %s" % device)
            self._modules[key] = m
            self._kernel_handles[key] = {}
            device._programs.append(self)
        return self._modules[key]

    def _kernel_handle(self, device, name):
        """The loaded kernel `name` on device (looked up once per module; dropped with the module when
        the device closes)."""
        m = self._module(device)
        handles = self._kernel_handles[id(device)]
        if name not in handles:
            k = ctypes.c_void_p()
            _check(_L().tile_module_get_kernel(m, name.encode(), ctypes.byref(k)), "tilec: kernel %s" % name)
            handles[name] = k
        return handles[name]


# ---- devices and launches ---------------------------------------------------------------------

class Device:
    """A device of a back end: Device("sim"), Device("cuda", 0). tilec's default devices (one per
    back end and ordinal) are made on first use by a launch with device="sim" or "cuda"."""

    def __init__(self, backend="sim", ordinal=0):
        lib = _L()
        b = ctypes.c_int()
        _check(lib.tile_backend_parse(str(backend).encode(), ctypes.byref(b)), "tilec.Device: backend %r" % backend)
        h = ctypes.c_void_p()
        _check(lib.tile_device_open(b.value, int(ordinal), ctypes.byref(h)), "tilec.Device(%r, %d)" % (backend, ordinal))
        self._h, self.backend, self.ordinal, self._programs = h, backend, ordinal, []
        self._streams = {}   # native stream handle -> tile_stream wrapping it
        self._owned = []     # Streams and Events made by this device, closed with it

    def synchronize(self):
        _check(_L().tile_device_synchronize(self._h), "tilec: synchronize %s" % self)

    @property
    def info(self):
        """The device's properties (tile_device_info_get): a dict with name, cc (major, minor),
        sm_count, shared_per_block_optin, total_memory, driver_version, arch."""
        i = _DeviceInfo()
        _check(_L().tile_device_info_get(self._h, ctypes.byref(i)), "tilec: info of %s" % self)
        return {"name": _s(i.name), "cc": (i.cc_major, i.cc_minor), "sm_count": i.sm_count,
                "shared_per_block_optin": i.shared_per_block_optin, "total_memory": i.total_memory,
                "driver_version": i.driver_version, "arch": _s(i.arch)}

    def _stream(self, native):
        """The tile_stream over native CUDA stream handle `native` (0: the default stream, None)."""
        if not native:
            return None
        if native not in self._streams:
            h = ctypes.c_void_p()
            _check(_L().tile_stream_wrap(self._h, ctypes.c_void_p(native), ctypes.byref(h)),
                   "tilec: stream 0x%x on %s" % (native, self), LaunchError)
            self._streams[native] = h
        return self._streams[native]

    def stream(self, priority=0, non_blocking=False):
        """A new stream of this device (tile_stream_create; the priority is clamped to the device's
        range): pass it as stream= to a launch; .synchronize(), .query(), .priority."""
        return Stream(self, priority, non_blocking)

    def event(self, timing=True):
        """A new event of this device (tile_event_create): .record(stream=None), .synchronize(),
        .query(), .elapsed_ms(end)."""
        return Event(self, timing)

    def close(self):
        """Closes the device (and every module loaded on it, its streams and events)."""
        if self._h:
            for h in self._streams.values():
                _L().tile_stream_destroy(h)
            self._streams = {}
            for o in list(self._owned):
                o.close()
            for p in self._programs:
                p._modules.pop(id(self), None)
                p._kernel_handles.pop(id(self), None)
            _L().tile_device_close(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "Device(%r, %d)" % (self.backend, self.ordinal)


class Stream:
    """A stream of a Device (Device.stream()). A launch on it: kernel(..., stream=s)."""

    def __init__(self, device, priority=0, non_blocking=False):
        h = ctypes.c_void_p()
        _check(_L().tile_stream_create(device._h, 1 if non_blocking else 0, int(priority), ctypes.byref(h)),
               "tilec: stream on %s" % device)
        self._h, self.device = h, device
        device._owned.append(self)

    @property
    def priority(self):
        p = ctypes.c_int()
        _check(_L().tile_stream_priority(self._h, ctypes.byref(p)), "tilec: stream priority")
        return p.value

    def synchronize(self):
        _check(_L().tile_stream_synchronize(self._h), "tilec: synchronize %r" % self)

    def query(self):
        """True when everything queued on the stream has completed."""
        st = _L().tile_stream_query(self._h)
        if st not in (_SUCCESS, _NOT_READY):
            _check(st, "tilec: query %r" % self)
        return st == _SUCCESS

    def close(self):
        if self._h:
            _L().tile_stream_destroy(self._h)
            self._h = None
            if self in self.device._owned:
                self.device._owned.remove(self)

    def __repr__(self):
        return "Stream(%r)" % (self.device,)


class Event:
    """An event of a Device (Device.event()): record it on a stream, wait for it, time between two."""

    def __init__(self, device, timing=True):
        h = ctypes.c_void_p()
        _check(_L().tile_event_create(device._h, 0 if timing else 2, ctypes.byref(h)), "tilec: event on %s" % device)
        self._h, self.device = h, device
        device._owned.append(self)

    def record(self, stream=None):
        if stream is not None and not isinstance(stream, Stream):
            raise TileError("tilec: Event.record takes a tilec.Stream or None (the device's default stream), not %r" %
                            (stream,))
        _check(_L().tile_event_record(self._h, stream._h if stream else None), "tilec: record %r" % self)

    def synchronize(self):
        _check(_L().tile_event_synchronize(self._h), "tilec: synchronize %r" % self)

    def query(self):
        st = _L().tile_event_query(self._h)
        if st not in (_SUCCESS, _NOT_READY):
            _check(st, "tilec: query %r" % self)
        return st == _SUCCESS

    def elapsed_ms(self, end):
        """Milliseconds from this event to `end` (both recorded and complete)."""
        ms = ctypes.c_float()
        _check(_L().tile_event_elapsed_ms(self._h, end._h, ctypes.byref(ms)), "tilec: elapsed time")
        return ms.value

    def close(self):
        if self._h:
            _L().tile_event_destroy(self._h)
            self._h = None
            if self in self.device._owned:
                self.device._owned.remove(self)

    def __repr__(self):
        return "Event(%r)" % (self.device,)


def _torch_current_stream(ordinal):
    """torch's current CUDA stream on device `ordinal`, as a CUstream handle (0: the default stream).
    torch's raw accessor when it has one (what Triton's launcher reads; no Stream object made)."""
    import torch
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(ordinal) if raw else torch.cuda.current_stream(ordinal).cuda_stream


_default_devices = {}


def _device(device):
    if isinstance(device, Device):
        return device
    key = (device, 0) if isinstance(device, str) else tuple(device)
    if key not in _default_devices:
        _default_devices[key] = Device(*key)
    return _default_devices[key]


def _dims(v, what):
    if v is None:
        return (0, 0, 0)
    t = (v,) if isinstance(v, int) else tuple(v)
    if not 1 <= len(t) <= 3 or not all(isinstance(x, int) and x >= 0 for x in t):
        raise LaunchError("tilec: %s must be an int or up to 3 ints >= 0, not %r" % (what, v))
    return t + (1,) * (3 - len(t))


class Kernel:
    """A kernel of a program. Call it with its arguments (by position or by parameter name) and
    the launch shape: kernel(a, b, c, n, grid=(gx, gy, gz), block=None, cluster=None,
    dynamic_shared=0, device="sim"). Scalars are converted to the parameter's type. NumPy arrays
    are copied to the device before the launch and back after it, and the call returns when the
    kernel has completed. Arrays already in GPU memory (CUDA torch tensors, objects with
    __cuda_array_interface__; device="cuda") are passed by address, and a launch with only those
    returns at once, queued on `stream` (a torch.cuda.Stream or a CUstream handle; by default torch's
    current stream on the tensors' device, which is the default stream unless torch has another)."""

    def __init__(self, program, name, params, block, cluster):
        self.program, self.name, self.params, self.block, self.cluster = program, name, params, block, cluster
        self._names = tuple(p.name for p in params)
        self._dtype_ids = tuple(_DTYPES.index(p.dtype) for p in params)
        self._argtype = _Arg * max(1, len(params))

    @property
    def shared_bytes(self):
        """The shared memory the kernel lays out (bytes; the launch raises the kernel's limit to it)."""
        return int(_L().tile_program_kernel_smem(self.program._h, self.program._index_of(self.name)))

    @property
    def signature(self):
        """[(name, kind, dtype, rank)] of the parameters, in order."""
        return [(p.name, p.kind, p.dtype, p.rank) for p in self.params]

    def __repr__(self):
        return "Kernel(%s(%s))" % (self.name, ", ".join("%s: %s %s" % (p.name, p.kind, p.dtype) for p in self.params))

    def max_resident(self, block=None, cluster=None, dynamic_shared=0, device="cuda"):
        """How many blocks of the kernel (clusters, for a cluster launch) the device holds at once with
        that block, cluster and dynamic shared memory: the driver's occupancy over every SM
        (tile_kernel_max_resident). A kernel whose blocks wait for one another needs its whole grid
        resident: launch at most this many. LaunchError for a shape a launch would refuse; TileError
        on the simulator, which runs any grid and cannot tell."""
        dev = _device(device)
        lib = _L()
        cfg = _LaunchConfig()
        cfg.grid[:] = (1, 1, 1)
        cfg.block[:] = _dims(block, "block")
        cfg.cluster[:] = _dims(cluster, "cluster")
        cfg.dynamic_shared = int(dynamic_shared)
        out = ctypes.c_uint64()
        st = lib.tile_kernel_max_resident(self.program._kernel_handle(dev, self.name), ctypes.byref(cfg),
                                          ctypes.byref(out))
        _check(st, "tilec: %s: blocks resident at once" % self.name, LaunchError if st == 14 else TileError)
        return int(out.value)

    def __call__(self, *args, grid=1, block=None, cluster=None, dynamic_shared=0, device="sim", stream=None, **kwargs):
        dev = _device(device)
        lib = _L()
        if len(args) > len(self.params):
            raise LaunchError("tilec: %s takes %d arguments, not %d" % (self.name, len(self.params), len(args)))
        values = dict(zip(self._names, args))
        for k, v in kwargs.items():
            if k not in values and k not in self._names:
                raise LaunchError("tilec: %s has no parameter '%s' (its parameters: %s)" %
                                  (self.name, k, ", ".join(p.name for p in self.params)))
            if k in values:
                raise LaunchError("tilec: %s: parameter '%s' given twice" % (self.name, k))
            values[k] = v
        missing = [p.name for p in self.params if p.name not in values]
        if missing:
            raise LaunchError("tilec: %s: no argument for %s" % (self.name, ", ".join(missing)))
        cargs = self._argtype()
        keep = []      # the shape and stride arrays of tensor arguments, alive until the launch returns
        buffers = []   # (array, host copy, device pointer, bytes)
        on_gpu = False   # an array in GPU memory was passed
        torch_dev = None   # the CUDA device of the first torch tensor, for its current stream
        try:
            for i, p in enumerate(self.params):
                v = values[p.name]
                a = cargs[i]
                a.dtype = self._dtype_ids[i]
                if p.kind == "scalar":
                    if hasattr(v, "shape") and getattr(v, "shape", ()) != ():
                        raise LaunchError("tilec: %s: '%s' is a scalar %s, not an array" % (self.name, p.name, p.dtype))
                    a.kind = 0
                    is_float = isinstance(v, float) or getattr(getattr(v, "dtype", None), "kind", "") == "f"
                    if p.dtype[0] != "f" and is_float:
                        raise LaunchError("tilec: %s: '%s' is %s, not a float (%r)" % (self.name, p.name, p.dtype, v))
                    if p.dtype[0] == "f":
                        a.value.f = float(v)
                    elif p.dtype[0] == "u":
                        a.value.u = int(v) & 0xFFFFFFFFFFFFFFFF
                    else:
                        a.value.i = int(v)
                    continue
                da = _device_array(v)
                if da is not None:
                    ptr, dt, shape, strides, ordinal = da
                    if dev.backend != "cuda":
                        raise LaunchError("tilec: %s: '%s' is in GPU memory, but the launch is on %s; pass "
                                          "device=\"cuda\" or a NumPy array" % (self.name, p.name, dev))
                    if ordinal is not None and ordinal != dev.ordinal:
                        raise LaunchError("tilec: %s: '%s' is on CUDA device %d, the launch on device %d" %
                                          (self.name, p.name, ordinal, dev.ordinal))
                    if dt not in _DEV_OK[p.dtype]:
                        raise LaunchError("tilec: %s: '%s' holds %s elements, but the tensor is %s" %
                                          (self.name, p.name, p.dtype, dt))
                    a.kind = 1
                    a.value.ptr = ptr
                    if 1 <= len(shape) <= 5 and (p.kind == "pointer" or len(shape) == p.rank):
                        # the shape and strides go with the address: a TMA parameter reads a strided view in
                        # place, the runtime checks the kernel's dims against the extents
                        dims = (ctypes.c_int64 * len(shape))(*shape)
                        steps = (ctypes.c_int64 * len(shape))(*strides)
                        keep.append((dims, steps))
                        a.rank, a.shape, a.strides = len(shape), dims, steps
                    elif not _is_contiguous(shape, strides):
                        raise LaunchError("tilec: %s: '%s' is a non-contiguous rank-%d tensor for a rank-%d %s parameter: "
                                          "pass a contiguous one" % (self.name, p.name, len(shape), p.rank, p.kind))
                    on_gpu = True
                    if torch_dev is None and _is_torch(v):
                        torch_dev = ordinal
                    continue
                if not hasattr(v, "__array_interface__"):
                    raise LaunchError("tilec: %s: '%s' is a %s of %s: pass an array (NumPy) or a CUDA tensor, not %s" %
                                      (self.name, p.name, p.kind, p.dtype, type(v).__name__))
                if str(v.dtype) not in _NP_OK[p.dtype]:
                    raise LaunchError("tilec: %s: '%s' holds %s elements, but the array is %s" %
                                      (self.name, p.name, p.dtype, v.dtype))
                host = v
                if not v.flags["C_CONTIGUOUS"]:   # a strided view: the device gets a contiguous copy, written back after
                    import numpy
                    host = numpy.ascontiguousarray(v)
                nbytes = max(1, host.nbytes)
                ptr = ctypes.c_uint64()
                _check(lib.tile_malloc(dev._h, nbytes, ctypes.byref(ptr)), "tilec: allocate %d bytes for '%s'" % (nbytes, p.name))
                buffers.append((v, host, ptr.value, host.nbytes))
                if host.nbytes:
                    _check(lib.tile_memcpy_htod(dev._h, ptr.value, host.ctypes.data, host.nbytes), "tilec: copy '%s' in" % p.name)
                a.kind = 1
                a.value.ptr = ptr.value
            cfg = _LaunchConfig()
            cfg.grid[:] = _dims(grid, "grid")
            cfg.block[:] = _dims(block, "block")
            cfg.cluster[:] = _dims(cluster, "cluster")
            cfg.dynamic_shared = int(dynamic_shared)
            if stream is None and torch_dev is not None and not buffers:
                stream = _torch_current_stream(torch_dev)
            if isinstance(stream, Stream):
                if stream.device is not dev:
                    raise LaunchError("tilec: %s: the stream belongs to %s, the launch is on %s" % (self.name, stream.device,
                                                                                                  dev))
                cfg.stream = stream._h
                native = None
            else:
                native = getattr(stream, "cuda_stream", stream)   # a torch.cuda.Stream, or a CUstream handle
            if native is not None and not isinstance(native, int):
                raise LaunchError("tilec: stream must be a torch.cuda.Stream, an int CUstream handle or None, not %r" %
                                  (stream,))
            if not isinstance(stream, Stream):
                cfg.stream = dev._stream(native) if native else None
            kern = self.program._kernel_handle(dev, self.name)
            st = lib.tile_launch(kern, ctypes.byref(cfg), cargs, len(self.params))
            if st != _SUCCESS:
                _check(st, "tilec: launch %s" % self.name, LaunchError if st in (13, 14, 18) else TileError)
            if on_gpu and not buffers:   # GPU arrays only: the launch runs on, in stream order
                return
            _check(lib.tile_device_synchronize(dev._h), "tilec: %s on %s" % (self.name, dev))
            for arr, host, ptr, n in buffers:
                if n and arr.flags["WRITEABLE"]:
                    _check(lib.tile_memcpy_dtoh(dev._h, host.ctypes.data, ptr, n), "tilec: copy back")
                    if host is not arr:
                        arr[...] = host
        finally:
            for _, _, ptr, _ in buffers:
                lib.tile_free(dev._h, ptr)


# ---- autotuning -------------------------------------------------------------------------------

def _default_key(args, kwargs):
    """What a choice depends on by default: each array's shape and dtype, each scalar's value."""
    def one(v):
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            return ("array", tuple(v.shape), str(v.dtype))
        return ("scalar", repr(v))
    return tuple(one(v) for v in args) + tuple((k, one(v)) for k, v in sorted(kwargs.items()))


class Autotuner:
    """A kernel compiled in several configurations (-D overrides of its consts), the fastest chosen
    per key on the actual arguments. See autotune()."""

    def __init__(self, source, configs, kernel=None, key=None, grid=None, target=None, reps=3, cache=True,
                 verbose=False):
        if not configs:
            raise ValueError("tilec.autotune: no configurations to choose from")
        self.configs = [dict(c) for c in configs]
        self.source, self.kernel_name, self.key, self.grid = source, kernel, key, grid
        self.target, self.reps, self.cache, self.verbose = target, int(reps), cache, verbose
        if isinstance(source, str) and "\n" not in source and source.endswith(".tile") and os.path.exists(source):
            with open(source, "rb") as f:
                text = f.read()
        else:
            text = source.encode() if isinstance(source, str) else bytes(source)
        self._id = hashlib.sha256(text + repr((kernel, target, self.configs)).encode()).hexdigest()[:24]
        self._programs = {}
        self.best = {}             # key -> config index
        self.report = []           # what each tuning measured: (key, [(config, seconds or error)], chosen)

    def _kernel(self, i):
        if i not in self._programs:
            self._programs[i] = compile(self.source, target=self.target, defines=self.configs[i])
        prog = self._programs[i]
        return prog[self.kernel_name or prog.kernels[0]]

    def _grid(self, i, kernel, args, kwargs, grid):
        g = grid if grid is not None else self.grid
        return g(self.configs[i], kernel, *args, **kwargs) if callable(g) else (g if g is not None else 1)

    def _store_path(self):
        d = _s(_L().tile_cache_dir())
        return os.path.join(d, "autotune.json") if d else None

    def _load(self, k):
        path = self._store_path()
        try:
            with open(path) as f:
                i = json.load(f).get(self._id, {}).get(repr(k))
            return i if isinstance(i, int) and 0 <= i < len(self.configs) else None
        except (OSError, ValueError, TypeError, AttributeError):
            return None

    def _save(self, k, i):
        path = self._store_path()
        if not path:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            try:
                with open(path) as f:
                    data = json.load(f)
                if not isinstance(data, dict):
                    data = {}
            except (OSError, ValueError):
                data = {}
            data.setdefault(self._id, {})[repr(k)] = i
            tmp = "%s.%d.tmp" % (path, os.getpid())
            with open(tmp, "w") as f:
                json.dump(data, f)
            os.replace(tmp, path)
        except OSError:
            pass   # the in-memory choice still holds

    def tune(self, *args, grid=None, device="sim", **kwargs):
        """Times every configuration on these arguments (after one warm-up launch each, the
        fastest of `reps` launches) and returns the chosen configuration."""
        k = self.key(*args, **kwargs) if self.key else _default_key(args, kwargs)
        times = []
        for i in range(len(self.configs)):
            try:
                kern = self._kernel(i)
                g = self._grid(i, kern, args, kwargs, grid)
                dev = _device(device)
                kern(*args, grid=g, device=device, **kwargs)
                best = None
                for _ in range(max(1, self.reps)):
                    dev.synchronize()
                    t0 = time.perf_counter()
                    kern(*args, grid=g, device=device, **kwargs)
                    dev.synchronize()   # a launch on GPU arrays returns before the kernel is done
                    dt = time.perf_counter() - t0
                    best = dt if best is None else min(best, dt)
                times.append(best)
            except TileError as e:   # a configuration that does not compile or launch is not chosen
                times.append(e)
        ok = [i for i, t in enumerate(times) if not isinstance(t, Exception)]
        if not ok:
            raise TileError("tilec.autotune: no configuration ran: " + "; ".join(
                "%s: %s" % (self.configs[i], str(t).splitlines()[0]) for i, t in enumerate(times)))
        chosen = min(ok, key=lambda i: times[i])
        self.best[k] = chosen
        self.report.append((k, list(zip(self.configs, times)), self.configs[chosen]))
        if self.cache:
            self._save(k, chosen)
        if self.verbose:
            print("tilec.autotune: %s" % ", ".join("%s %s" % (c, ("%.3f ms" % (t * 1e3)) if not isinstance(t, Exception)
                                                                else "failed") for c, t in self.report[-1][1])
                  + " -> %s" % self.configs[chosen])
        return self.configs[chosen]

    def __call__(self, *args, grid=None, device="sim", **kwargs):
        k = self.key(*args, **kwargs) if self.key else _default_key(args, kwargs)
        if k not in self.best:
            i = self._load(k) if self.cache else None
            if i is not None:
                self.best[k] = i
            else:
                self.tune(*args, grid=grid, device=device, **kwargs)
        i = self.best[k]
        kern = self._kernel(i)
        return kern(*args, grid=self._grid(i, kern, args, kwargs, grid), device=device, **kwargs)

    def chosen(self, *args, **kwargs):
        """The configuration chosen for these arguments' key, or None before tuning."""
        k = self.key(*args, **kwargs) if self.key else _default_key(args, kwargs)
        return self.configs[self.best[k]] if k in self.best else None


def autotune(source, configs, *, kernel=None, key=None, grid=None, target=None, reps=3, cache=True, verbose=False):
    """A kernel tuned over configurations: each config a dict of -D overrides ({"BN": 128, ...}).
    The first call for a key (by default each array's shape and dtype and each scalar's value;
    `key=fn(*args, **kwargs)` to choose) compiles every configuration, times it on the call's
    arguments and keeps the fastest, in memory and in the kernel cache directory
    (`autotune.json`, so a later process starts with it); later calls launch the chosen one.
    `grid` is a launch grid or a function (config, kernel, *args, **kwargs) -> grid, since tile
    sizes usually depend on the configuration. `.report` holds what each tuning measured."""
    return Autotuner(source, configs, kernel=kernel, key=key, grid=grid, target=target, reps=reps, cache=cache,
                     verbose=verbose)
