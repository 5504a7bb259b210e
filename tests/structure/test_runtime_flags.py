#!/usr/bin/python3
"""dlc compiles the CPU runtime without -DDLC_CHECK_MEMORY whatever $DLC_CXXFLAGS says, so a
checked build shares the plain build's runtime objects (compiler/toolchain/Toolchain.cpp,
runtimeCommand). That holds only while no runtime source tests the macro: it switches code
in generated sources alone."""
import os
import re
import sys

RUNTIME = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "runtime")
TEST = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif)\b.*\bDLC_CHECK_MEMORY\b", re.M)


def main():
    found = []
    for name in sorted(os.listdir(RUNTIME)):
        if name.endswith((".cpp", ".h")):
            with open(os.path.join(RUNTIME, name), encoding="utf-8") as f:
                if TEST.search(f.read()):
                    found.append("runtime/" + name)
    for path in found:
        print("FAIL %s tests DLC_CHECK_MEMORY, which the runtime is never built with" % path)
    print("%d runtime sources test DLC_CHECK_MEMORY" % len(found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
