"""tylo-opt reports a user's mistake in one line (exit status 1), not as a Python traceback."""

import os
import subprocess
import sys

import pytest

VALID = "func.func @k() {\n  func.return\n}\n"
UNKNOWN_OP = 'func.func @k() {\n  "ptx.bogus"() : () -> ()\n}\n'


def opt(tmp_path, text: str, *args: str, traceback: bool = False):
    path = tmp_path / "in.mlir"
    path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k != "TYLO_OPT_TRACEBACK"}
    if traceback:
        env["TYLO_OPT_TRACEBACK"] = "1"
    return subprocess.run([sys.executable, "-m", "tylo.passes.opt", str(path), *args],
                          capture_output=True, text=True, env=env)


@pytest.mark.parametrize("text, args, message", [
    (VALID, ("-p", "no-such-pass"), "tylo-opt: error: ValueError: Unrecognized passes: ['no-such-pass']"),
    (VALID, ("-t", "ptx"), "func.func at module level has no PTX form; lower the module"),
    (UNKNOWN_OP, (), "Operation ptx.bogus is not registered"),
])
def test_errors_are_one_line(tmp_path, text, args, message):
    run = opt(tmp_path, text, *args)
    assert run.returncode == 1
    assert message in run.stderr and "Traceback" not in run.stderr


def test_traceback_on_request(tmp_path):
    run = opt(tmp_path, VALID, "-p", "no-such-pass", traceback=True)
    assert run.returncode != 0 and "Traceback" in run.stderr


UNDEFINED = "func.func @k(%a: i32) {\n  %0 = arith.addi %a, %a : i32\n  %1 = arith.addi %0, %zz : i32\n  func.return\n}\n"
INVALID = ('func.func @k(%p: !tylo.ptr<f32, global>) {\n  %c = arith.constant 0 : i32\n'
           '  %v = "tylo.load_element"(%p, %c) : (!tylo.ptr<f32, global>, i32) -> f16\n  func.return\n}\n')


def test_undefined_value_is_reported_at_its_first_use(tmp_path):
    run = opt(tmp_path, UNDEFINED)
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1
    assert f"{tmp_path / 'in.mlir'}:3:23: value %zz is used but never defined" in run.stderr


def test_invalid_op_is_reported_at_its_line(tmp_path):
    run = opt(tmp_path, INVALID)
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1
    assert (f"{tmp_path / 'in.mlir'}:3:3: tylo.load_element: operand 'tile' at position 0 does not "
            "verify") in run.stderr


def test_verify_diagnostics_keeps_xdsl_output(tmp_path):
    run = opt(tmp_path, INVALID, "--verify-diagnostics")
    assert run.returncode == 0  # xDSL's diagnostic: the IR with the op marked, for lit's CHECKs
    assert "| Operation does not verify: operand 'tile' at position 0 does not verify" in run.stdout
