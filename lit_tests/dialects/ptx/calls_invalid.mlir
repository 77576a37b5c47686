// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of a verifier of the ptx ops in
// dialects/ptx/calls.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.pred' is not a parameter type
ptx.extern_func "vprintf" ["b64", "pred"] -> ["b32"]

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: '.b12' is not a return type
ptx.extern_func "vprintf" ["b64", "b64"] -> ["b12"]

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: 'ptx.extern_func' expects parent op 'builtin.module'
ptx.entry "k" [] {
  ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
  ptx.ret
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: the string holds a NUL byte, which would end it early
ptx.global_string "$str0" = "a\00b"

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: 'str 0' is not a PTX identifier
ptx.global_string "str 0" = "a"

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: Redefinition of symbol "$str0"
builtin.module {
  ptx.global_string "$str0" = "a"
  ptx.global_string "$str0" = "b"
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: @vprintf is not a ptx.extern_func of the module
builtin.module {
  ptx.entry "k" [] {
    %a = ptx.get_register : !ptx.reg<rd1>
    ptx.call_uni @vprintf(%a, %a) : (!ptx.reg<rd1>, !ptx.reg<rd1>)
    ptx.ret
  }
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: @vprintf takes 2 arguments, the call passes 1
builtin.module {
  ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
  ptx.entry "k" [] {
    %a = ptx.get_register : !ptx.reg<rd1>
    ptx.call_uni @vprintf(%a) : (!ptx.reg<rd1>)
    ptx.ret
  }
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: argument 1 (.param .b64) must be a .b64 register, got .b32 (%r1)
builtin.module {
  ptx.extern_func "vprintf" ["b64", "b64"] -> ["b32"]
  ptx.entry "k" [] {
    %a = ptx.get_register : !ptx.reg<rd1>
    %r = ptx.get_register : !ptx.reg<r1>
    ptx.call_uni @vprintf(%a, %r) : (!ptx.reg<rd1>, !ptx.reg<r1>)
    ptx.ret
  }
}
