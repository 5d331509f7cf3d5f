#!/bin/sh
# to_host.sh FILE.ll: a gfx942 kernel's LLVM IR (tilec --emit llvm) rewritten for the host: no target,
# every address space the default one, the AMDGPU intrinsics calls to host.c's functions, AMDGPU
# attributes dropped. llc compiles the result for the CPU. The x86 back end narrows f32 to bf16 with
# a call to __truncsfbf2 (compiler-rt, not in libgcc): defined here, rounding to nearest even.
sed -E -e '/^target (datalayout|triple)/d' -e 's/, addrspace\([0-9]+\)//g' -e 's/ addrspace\([0-9]+\)//g' \
  -e 's/ immarg//g' -e 's/amdgpu_kernel //' -e 's/ memory\([^)]*\)//g' -e 's/syncscope\("[a-z-]*"\) //g' \
  -e 's/"target-cpu"="[^"]*"//g' -e 's/"target-features"="[^"]*"//g' -e 's/"amdgpu[^"]*"="[^"]*"//g' \
  -e 's/"uniform-work-group-size"="[^"]*"//g' \
  -e 's/@llvm\.amdgcn\.workitem\.id\.x/@h_tid_x/g' -e 's/@llvm\.amdgcn\.workgroup\.id\.x/@h_bid_x/g' \
  -e 's/@llvm\.amdgcn\.make\.buffer\.rsrc\.p[0-9]+(\.p[0-9]+)?/@h_rsrc/g' \
  -e 's/@llvm\.amdgcn\.raw\.ptr\.buffer\.load\./@h_bl_/g' -e 's/@llvm\.amdgcn\.raw\.ptr\.buffer\.store\./@h_bs_/g' \
  -e 's/@llvm\.amdgcn\.s\.barrier/@h_barrier/g' "$1"
cat <<'LL'

define bfloat @__truncsfbf2(float %x) {
  %u = bitcast float %x to i32
  %hi = lshr i32 %u, 16
  %odd = and i32 %hi, 1
  %bias = add i32 %odd, 32767
  %r = add i32 %u, %bias
  %nan = fcmp uno float %x, 0.0
  %q = lshr i32 %r, 16
  %qnan = or i32 %hi, 64
  %h32 = select i1 %nan, i32 %qnan, i32 %q
  %h = trunc i32 %h32 to i16
  %b = bitcast i16 %h to bfloat
  ret bfloat %b
}
LL
