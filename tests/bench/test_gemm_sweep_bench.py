"""bench/gemm_sweep.py without a GPU: its shape list is the issue's, its table, geometric mean,
minimum and goal verdicts read right from made-up timings, and its arguments parse (and bad
ones are refused)."""

from __future__ import annotations

import math

import pytest
from bench_scripts import load

bench = load("gemm_sweep")
Shape, Row = bench.Shape, bench.Row


def test_the_shape_list():
    sweep = bench.shapes()
    assert len(sweep) == 5 * 8 + 2 and len(set(sweep)) == len(sweep)
    assert {s.M for s in sweep if s.name != "square"} == {128, 512, 2048, 8192, 16384}
    assert {(s.N, s.K) for s in sweep if s.name.startswith("8b")} == {
        (6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)}
    assert {(s.N, s.K) for s in sweep if s.name.startswith("70b")} == {
        (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)}
    assert [s[:3] for s in sweep if s.name == "square"] == [(4096,) * 3, (8192,) * 3]
    assert Shape(16384, 57344, 8192, "70b gate/up") in sweep
    assert Shape(8192, 8192, 8192, "square").flop == 2 * 8192 ** 3
    assert bench.shapes(("8b",), (128, 512)) == [
        Shape(M, N, K, f"8b {p}") for p, (N, K) in bench.MODELS["8b"].items() for M in (128, 512)]


def test_the_quick_subset_is_six_shapes_of_the_sweep():
    assert len(bench.QUICK) == 6 and set(bench.QUICK) <= set(bench.shapes())
    assert Shape(8192, 8192, 8192, "square") in bench.QUICK
    assert {s.name.split()[0] for s in bench.QUICK} == {"8b", "70b", "square"}


def test_graph_calls_make_about_a_millisecond():
    assert bench.graph_calls(2 * 8192 ** 3) == 1
    assert bench.graph_calls(2 * 128 * 4096 * 4096) == 50   # 4.3 GFLOP: 7 us at 600 TFLOP/s
    n = bench.graph_calls(2 * 2048 * 4096 * 4096)           # 0.11 ms a call
    assert 8 <= n <= 10 and n * 2 * 2048 * 4096 ** 2 / 600e9 >= bench.GRAPH_MS


def row(M, N, K, name, tylo, tn, nn, failed=()):
    return Row(Shape(M, N, K, name), {"tylo": tylo, "cuBLAS TN": tn, "cuBLAS NN": nn}, failed)


def test_the_ratio_is_over_the_better_cublas_form():
    assert row(128, 4096, 4096, "8b o", 600, 500, 400).ratio == 1.2
    assert row(128, 4096, 4096, "8b o", 600, 400, 750).ratio == 0.8
    assert Row(Shape(128, 4096, 4096, "8b o"), {}, ()).ratio is None


def test_the_summary_judges_the_goals():
    rows = [row(128, 4096, 4096, "8b o", 550, 500, 400),          # 1.1
            row(512, 6144, 4096, "8b qkv", 960, 800, 700),        # 1.2
            row(8192, 8192, 8192, "square", 720, 700, 720)]       # 1.0
    lines = bench.summary(rows)
    geomean = (1.1 * 1.2 * 1.0) ** (1 / 3)
    assert lines[0] == "checks: all ok"
    assert lines[1] == (f"tylo/cuBLAS over 3 shapes: geometric mean {geomean:.3f}x "
                        "(goal >= 1.05: met)")
    assert lines[2] == "minimum 1.000x at M=8192 N=8192 K=8192 (square) (goal >= 0.95: met)"
    assert lines[3] == "8192^3 1.000x (goal >= 1.0: met)"
    rows[2] = row(8192, 8192, 8192, "square", 680, 700, 720)      # 0.944
    rows.append(row(2048, 57344, 8192, "70b gate/up", 600, 710, 690, failed=("tylo",)))
    lines = bench.summary(rows)
    assert lines[0] == "checks: FAILED at 2048x57344x8192 (tylo)"
    assert lines[1].endswith("(goal >= 1.05: missed)")
    assert math.isclose(float(lines[1].split("mean ")[1].split("x")[0]),
                        (1.1 * 1.2 * 680 / 720 * 600 / 710) ** 0.25, abs_tol=1e-3)
    assert lines[2] == ("minimum 0.845x at M=2048 N=57344 K=8192 (70b gate/up) "
                        "(goal >= 0.95: missed)")
    assert lines[3] == "8192^3 0.944x (goal >= 1.0: missed)"


def test_the_summary_without_the_square_or_timings():
    lines = bench.summary([row(128, 4096, 4096, "8b o", 550, 500, 400)])
    assert lines[3] == "8192^3 - (goal >= 1.0: not measured)"
    assert bench.summary([Row(Shape(128, 4096, 4096, "8b o"), {}, ())]) == ["checks: all ok"]


def test_the_tables():
    names = ["tylo", "cuBLAS TN", "cuBLAS NN"]
    r = row(2048, 28672, 4096, "8b gate/up", 701.25, 650.0, 640.0, failed=("cuBLAS NN",))
    md = bench.header(names, "md") + [bench.line(bench.cells(r, names), names, "md")]
    assert md == ["| M | N | K | shape | tylo | cuBLAS TN | cuBLAS NN | tylo/cuBLAS | check |",
                  "|---:|---:|---:|---|---:|---:|---:|---:|---|",
                  "| 2048 | 28672 | 4096 | 8b gate/up | 701.2 | 650.0 | 640.0 | 1.079 | "
                  "FAILED cuBLAS NN |"]
    text = bench.header(names, "text") + [bench.line(bench.cells(r, names), names, "text")]
    assert [len(t.split()) for t in text] == [11, 12]
    assert text[1].split()[:5] == ["2048", "28672", "4096", "8b", "gate/up"]
    assert text[1].index("8b gate/up") == text[0].index("shape")           # left-aligned
    assert text[1].index("1.079") + 5 == text[0].index("tylo/cuBLAS") + 11  # right-aligned
    checked = Row(Shape(128, 4096, 4096, "8b o"), {}, ())
    assert bench.cells(checked, names)[4:] == ["-", "-", "-", "-", "ok"]


def test_the_arguments():
    args, sweep = bench.arguments([])
    assert sweep == bench.shapes() and args.table == "text" and not args.triton
    args, sweep = bench.arguments(["--models", "70b", "--m", "128,16384", "--table", "md",
                                   "--triton", "--check-only"])
    assert [(s.M, s.name) for s in sweep] == [(M, f"70b {p}") for p in bench.MODELS["70b"]
                                              for M in (128, 16384)]
    assert args.table == "md" and args.triton and args.check_only
    assert bench.arguments(["--models", "square"])[1] == bench.shapes(("square",))
    assert bench.arguments(["--quick"])[1] == bench.QUICK


@pytest.mark.parametrize("argv, words", [
    (["--models", "8b,13b"], "unknown 13b"),
    (["--m", "0,128"], "positive token counts"),
    (["--quick", "--m", "128"], "--quick runs its own six shapes"),
    (["--table", "html"], "invalid choice"),
])
def test_bad_arguments_are_refused(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        bench.arguments(argv)
    assert e.value.code == 2 and words in capsys.readouterr().err


def test_no_hopper_no_timing(capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: main would time")
    assert bench.main(["--quick"]) == 0
    assert "no Hopper GPU" in capsys.readouterr().out


def test_the_checks_on_the_emulator(monkeypatch):
    torch = pytest.importorskip("torch")
    shape = Shape(130, 256, 72, "tiny")  # tails of M and K
    assert bench.measure(torch, shape, False, True, device="cpu") == Row(shape, {}, ())
    real = torch.matmul
    monkeypatch.setattr(torch, "matmul", lambda a, b: real(a, b).index_fill_(0, torch.tensor([3]), 0))
    assert bench.measure(torch, shape, False, True, device="cpu").failed == ("cuBLAS TN", "cuBLAS NN")


def test_the_block_mode_runs_deepseek_v3_shapes():
    sweep = bench.deepseek_shapes()
    assert len(sweep) == 2 * 5 + 1 and sweep[-1] == Shape(4096, 4096, 4096, "square")
    assert {(s.N, s.K) for s in sweep[:-1]} == {
        (2112, 7168), (24576, 1536), (7168, 16384), (4096, 7168), (7168, 2048)}
    assert {s.M for s in sweep[:-1]} == {128, 4096}
    args, shapes = bench.arguments(["--dtype", "block"])
    assert args.dtype == "block" and shapes == sweep
    assert bench.arguments(["--dtype", "fp8", "--quick"])[1] == bench.QUICK


def test_the_fp8_ratios_and_goals():
    fp8 = Row(Shape(512, 6144, 4096, "8b qkv"), {"tylo": 900, "torch": 1000}, (), "fp8")
    assert fp8.ratio == 0.9
    lines = bench.summary([fp8, Row(Shape(8192, 8192, 8192, "square"),
                                    {"tylo": 1100, "torch": 1000}, (), "fp8")])
    assert lines[1].startswith("tylo/torch over 2 shapes: geometric mean 0.995x")
    assert lines[1].endswith("(goal >= 1.0: missed)")
    assert lines[2] == "minimum 0.900x at M=512 N=6144 K=4096 (8b qkv) (goal >= 1.0: missed)"
    assert lines[3] == "8192^3 1.100x (goal >= 1.0: met)"
    block = Row(Shape(128, 2112, 7168, "dsv3"),
                {"tylo block": 700, "tylo tensor": 800, "torch block": 600}, (), "block")
    assert block.ratio == 700 / 800   # over our per-tensor kernel, not torch's
    lines = bench.summary([block])
    assert lines[1] == "block/tensor over 1 shapes: geometric mean 0.875x (no goal)"
    assert lines[2] == "minimum 0.875x at M=128 N=2112 K=7168 (dsv3) (goal >= 0.9: missed)"
    assert len(lines) == 3   # no 8192^3 goal
    names = list(bench.MODES["block"].cases)
    no_torch = Row(block.shape, {"tylo block": 700, "tylo tensor": 800}, (), "block")
    assert bench.cells(no_torch, names)[4:] == ["700.0", "800.0", "-", "-", "0.875", "ok"]
    assert bench.columns(names, "block")[-2] == "block/tensor"


@pytest.mark.parametrize("argv, words", [
    (["--dtype", "block", "--m", "128"], "--dtype block runs DeepSeek-V3's shapes"),
    (["--dtype", "block", "--quick"], "--dtype block runs DeepSeek-V3's shapes"),
    (["--dtype", "fp8", "--triton"], "triton's kernel is bf16"),
    (["--dtype", "int8"], "invalid choice"),
])
def test_bad_fp8_arguments_are_refused(argv, words, capsys):
    with pytest.raises(SystemExit) as e:
        bench.arguments(argv)
    assert e.value.code == 2 and words in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["fp8", "block"])
def test_the_fp8_checks_on_the_emulator(dtype, monkeypatch):
    torch = pytest.importorskip("torch")
    shape = Shape(130, 256, 256, "tiny")  # a tail of M
    row = bench.measure(torch, shape, False, True, device="cpu", dtype=dtype)
    assert row == Row(shape, {}, (), dtype)
    import tylo.ops

    real = tylo.ops.scaled_matmul
    monkeypatch.setattr(tylo.ops, "scaled_matmul",
                        lambda *a: real(*a).index_fill_(0, torch.tensor([3]), math.nan))
    failed = bench.measure(torch, shape, False, True, device="cpu", dtype=dtype).failed
    assert failed == (("tylo",) if dtype == "fp8" else ("tylo block", "tylo tensor"))
    if dtype == "block":  # the ping-pong case launches the kernel itself: a launch that
        monkeypatch.undo()  # writes nothing leaves its poisoned output, and only it fails
        from tylo.ops.kernels import gemm_fp8_blockwise

        monkeypatch.setattr(gemm_fp8_blockwise.GemmBlockwise, "__call__", lambda self: None)
        failed = bench.measure(torch, shape, False, True, device="cpu", dtype=dtype).failed
        assert failed == ("tylo block pp",)
