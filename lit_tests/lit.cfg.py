# lit configuration: every test runs tylo-opt (xdsl-opt with Tylo registered) or a Python frontend
# script, and checks its output with filecheck.  Run with:  lit lit_tests   (or python -m pytest)
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
try:
    from tylo.runtime.ptxas import find_ptxas

    config.substitutions.append(("%ptxas", find_ptxas()))
except Exception as e:  # noqa: BLE001 - reported as a fatal configuration error below
    lit_config.fatal(f"lit tests need ptxas ({e})")
missing = [tool for tool in ("tylo-opt", "filecheck") if shutil.which(tool, path=config.environment["PATH"]) is None]
if missing:
    lit_config.fatal(f"lit tests need {', '.join(missing)} on PATH: pip install -e '.[test]'")
