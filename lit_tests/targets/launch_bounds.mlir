// RUN: tylo-opt %s -t ptx | filecheck %s
// RUN: tylo-opt %s | tylo-opt | filecheck %s --check-prefix=IR
// REQUIRES: ptxas
// RUN: tylo-opt %s -t ptx > %t.ptx && %ptxas -arch=sm_90a %t.ptx -o %t.cubin
// The entry's occupancy directives (dialects/ptx/entry.py, tylo.launch_bounds): .maxnreg and
// .minnctapersm (PTX ISA 11.4.1, 11.4.4) print after .reqntid, round-trip through print and
// parse, and ptxas assembles them for sm_90a.
// CHECK:      .reqntid 256, 1, 1
// CHECK-NEXT: .maxnreg 128
// CHECK-NEXT: .minnctapersm 2
// CHECK-NEXT: {
// IR: ptx.entry "k" [] reqntid [256, 1, 1] minnctapersm 2 maxnreg 128
builtin.module attributes {ptx.version = "8.4", ptx.target = "sm_90a"} {
  ptx.entry "k" [] reqntid [256, 1, 1] minnctapersm 2 maxnreg 128 {
    ptx.bar_sync 0
    ptx.ret
  }
}
