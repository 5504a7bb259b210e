# lit configuration for dlc-opt pass tests and dlc import tests.
import os

import lit.formats

config.name = "dlc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dlc_obj_root, "tests", "lit")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]
config.environment["PATH"] = os.pathsep.join(
    [config.dlc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%python", config.python))
