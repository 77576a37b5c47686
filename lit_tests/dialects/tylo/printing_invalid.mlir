// RUN: tylo-opt %s --verify-diagnostics --split-input-file | filecheck %s
// Each chunk (split at the dashed lines) breaks one rule of the verifier of tylo.print in
// dialects/tylo/printing.py.
// For each chunk tylo-opt prints a dashed line and then the refusal's message, so the
// CHECK / CHECK-NEXT pair binds each message to its own chunk. The valid forms are in ops.mlir.
// The first chunk is an empty module, so that every case follows a dashed line.
builtin.module {}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: the format has 2 conversion(s) and the print 1 value(s)
func.func @k(%i: i32) {
  tylo.print "%d %d\0A" %i : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: conversion 0 '%d' reads an i32, value 0 is an f64
func.func @k(%d: f64) {
  tylo.print "%d\0A" %d : f64
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: conversion 0 '%lld' reads an i64, value 0 is an i32
func.func @k(%i: i32) {
  tylo.print "%lld\0A" %i : i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: value 0 is f32; printf arguments are i32, i64 or f64 (promote narrower values first)
func.func @k(%f: f32) {
  tylo.print "%f\0A" %f : f32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: format: '%s' is not a conversion of an int, long long or double
func.func @k(%l: i64) {
  tylo.print "%s\0A" %l : i64
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: format: '%*d': '*' reads its width or precision from an argument
func.func @k(%i: i32) {
  tylo.print "%*d\0A" %i, %i : i32, i32
  func.return
}

// -----
// CHECK:      {{^// -+$}}
// CHECK-NEXT: format: '%' at the end of the format starts no conversion
func.func @k() {
  tylo.print "100%"
  func.return
}
