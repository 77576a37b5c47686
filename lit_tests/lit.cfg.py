# lit configuration: every test runs tylo-opt (xdsl-opt with Tylo registered) or a Python frontend
# script, and checks its output with filecheck.  Run with:  lit lit_tests   (or python -m pytest)
# Layout: dialects/<dialect>/ops.mlir round-trips every op; dialects/<dialect>/*_invalid.mlir and
# passes/<pass>_invalid.mlir hold one refusal per `--split-input-file` chunk, checked with
# --verify-diagnostics (or --parsing-diagnostics); passes/<pass>.mlir, targets/ and frontend/
# check what the passes, the ptx target and the frontend produce.
import os
import shutil
import sys

import lit.formats

config.name = "Tylo"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.environment["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
for var in ("PYTHONPATH", "HOME", "TYLO_PTXAS", "TMPDIR", "TYLO_NO_CACHE", "TYLO_CACHE_DIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%python", sys.executable))
# ptxas is a feature: the tests that assemble (`REQUIRES: ptxas`) are UNSUPPORTED without it,
# and the rest still run.
from tylo.compiler.support.errors import TyloError  # noqa: E402
from tylo.runtime.ptxas import find_ptxas  # noqa: E402

try:
    config.substitutions.append(("%ptxas", find_ptxas()))
    config.available_features.add("ptxas")
except TyloError as e:
    lit_config.note(f"tests that REQUIRE ptxas are UNSUPPORTED: {e}")
missing = [tool for tool in ("tylo-opt", "filecheck") if shutil.which(tool, path=config.environment["PATH"]) is None]
if missing:
    lit_config.fatal(f"lit tests need {', '.join(missing)} on PATH: pip install -e '.[test]'")
