// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -t ptx | filecheck %s --check-prefix=PTX
// (ptxas.mlir assembles this file's PTX.) ptx.fence_proxy_async_shared (dialects/ptx/fence_proxy.py)
// round-trips and prints fence.proxy.async.shared::cta, between generic shared stores and a barrier.

// CHECK:      ptx.st "shared" "u32"[%a, 0], %v : !ptx.reg<r1>, !ptx.reg<r2>
// CHECK-NEXT: ptx.fence_proxy_async_shared
// CHECK-NEXT: ptx.bar_sync 0

// PTX:      st.shared.u32 [%r1], %r2;
// PTX-NEXT: fence.proxy.async.shared::cta;
// PTX-NEXT: bar.sync 0;
ptx.entry "k" [] reqntid [128, 1, 1] {
  %a = ptx.get_register : !ptx.reg<r1>
  %v = ptx.get_register : !ptx.reg<r2>
  ptx.st "shared" "u32"[%a, 0], %v : !ptx.reg<r1>, !ptx.reg<r2>
  ptx.fence_proxy_async_shared
  ptx.bar_sync 0
  ptx.ret
}
