// RUN: tylo-opt %s | tylo-opt | filecheck %s
// RUN: tylo-opt %s -p tylo-lower-fragments | filecheck %s --check-prefix=LOWER
// The FP64, 4-bit and single-bit MMA plans in the tylo dialect (dialects/tylo/ops.py): the plan
// attribute prints the atom's modifiers after its types (satfinite, and.popc / xor.popc) and
// parses them back; Int4/UInt4/Bit1 A and B are fragments of i32 words in the plan's
// `word_layout` (each word at its first element's coordinate), which tylo-lower-fragments
// passes to tylo.mma_sync as they are: 4 + 2 words at m16n8k64, 1 + 1 at m8n8k128.

// CHECK:      %d = tylo.mma <m16n8k64, s4, u4, s32, satfinite, warps = (1,1), repeat = (1,1), k = 64> %a, %b, %c : !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(2,2)):((128,1),(8,512))>>, !tylo.fragment<i32, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>, !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
// CHECK:      %x0, %x1 = tylo.mma_sync <m8n8k128, b1, b1, s32, xor.popc, warps = (1,1), repeat = (1,1), k = 128>(%w), (%w), (%w, %w) : (i32), (i32), (i32, i32) -> (i32, i32)
// CHECK:      %f = tylo.mma <m8n8k4, f64, f64, f64, warps = (1,1), repeat = (1,1), k = 4> %fa, %fb, %fc : !tylo.fragment<f64, #tylo.ownership<(8,4), ((4,8),1):((8,1),0)>>, !tylo.fragment<f64, #tylo.ownership<(4,8), ((4,8),1):((1,4),0)>>, !tylo.fragment<f64, #tylo.ownership<(8,8), ((4,8),2):((16,1),8)>> -> !tylo.fragment<f64, #tylo.ownership<(8,8), ((4,8),2):((16,1),8)>>

// LOWER:      %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = tylo.mma_sync <m16n8k64, s4, u4, s32, satfinite, warps = (1,1), repeat = (1,1), k = 64>(%w, %w, %w, %w), (%w, %w), (%i, %i, %i, %i) : (i32, i32, i32, i32), (i32, i32), (i32, i32, i32, i32) -> (i32, i32, i32, i32)
// LOWER:      tylo.mma_sync <m8n8k128, b1, b1, s32, xor.popc, warps = (1,1), repeat = (1,1), k = 128>(%w), (%w), (%w, %w)
// LOWER:      tylo.mma_sync <m8n8k4, f64, f64, f64, warps = (1,1), repeat = (1,1), k = 4>(%z), (%z), (%z, %z) : (f64), (f64), (f64, f64) -> (f64, f64)
func.func @k(%w: i32, %i: i32, %z: f64) {
  %a = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(2,2)):((128,1),(8,512))>>
  %b = tylo.splat %w : i32 -> !tylo.fragment<i32, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>
  %c = tylo.splat %i : i32 -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %d = tylo.mma <m16n8k64, s4, u4, s32, satfinite, warps = (1,1), repeat = (1,1), k = 64> %a, %b, %c : !tylo.fragment<i32, #tylo.ownership<(16,64), ((4,8),(2,2)):((128,1),(8,512))>>, !tylo.fragment<i32, #tylo.ownership<(64,8), ((4,8),2):((8,64),32)>>, !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>> -> !tylo.fragment<i32, #tylo.ownership<(16,8), ((4,8),(2,2)):((32,1),(16,8))>>
  %x0, %x1 = tylo.mma_sync <m8n8k128, b1, b1, s32, xor.popc, warps = (1,1), repeat = (1,1), k = 128>(%w), (%w), (%w, %w) : (i32), (i32), (i32, i32) -> (i32, i32)
  %fa = tylo.splat %z : f64 -> !tylo.fragment<f64, #tylo.ownership<(8,4), ((4,8),1):((8,1),0)>>
  %fb = tylo.splat %z : f64 -> !tylo.fragment<f64, #tylo.ownership<(4,8), ((4,8),1):((1,4),0)>>
  %fc = tylo.splat %z : f64 -> !tylo.fragment<f64, #tylo.ownership<(8,8), ((4,8),2):((16,1),8)>>
  %f = tylo.mma <m8n8k4, f64, f64, f64, warps = (1,1), repeat = (1,1), k = 4> %fa, %fb, %fc : !tylo.fragment<f64, #tylo.ownership<(8,4), ((4,8),1):((8,1),0)>>, !tylo.fragment<f64, #tylo.ownership<(4,8), ((4,8),1):((1,4),0)>>, !tylo.fragment<f64, #tylo.ownership<(8,8), ((4,8),2):((16,1),8)>> -> !tylo.fragment<f64, #tylo.ownership<(8,8), ((4,8),2):((16,1),8)>>
  func.return
}
