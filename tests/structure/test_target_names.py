#!/usr/bin/python3
"""Target choices live in the targets (compiler/target/): outside them and the driver, which
maps --target to a target, no compiler, pass, dialect or tool source names a target in a
string literal ("cpu", "cuda") to compare with, or as an enumerator (Target::Cuda). A new target then touches its own files and
the registry, not every place that once asked `target == "cuda"`."""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCANNED = ["compiler", "passes", "dialects", "tools"]
# The driver maps --target's words to targets; the command line documents and parses them.
ALLOWED = {"compiler/driver/Driver.cpp", "compiler/driver/Driver.h", "tools/dlc/dlc.cpp"}
ALLOWED_FOLDER = "compiler/target/"
# A literal to compare with, or an enumerator standing for a target.
TARGET_LITERAL = re.compile(r'"(cpu|cuda|CPU|CUDA)"|\bTarget::(Cpu|Cuda|CPU|CUDA)\b')


def main():
    found = []
    for top in SCANNED:
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if not f.endswith((".cpp", ".h", ".inc", ".td")):
                    continue
                path = os.path.join(folder, f)
                rel = os.path.relpath(path, ROOT)
                if rel in ALLOWED or rel.startswith(ALLOWED_FOLDER):
                    continue
                with open(path, encoding="utf-8") as source:
                    for n, line in enumerate(source, 1):
                        if TARGET_LITERAL.search(line.split("//")[0]):
                            found.append("%s:%d: %s" % (rel, n, line.strip()))
    for line in found:
        print("target name outside compiler/target and the driver: " + line)
    print("%s: %d sources name a target outside compiler/target and the driver"
          % ("FAIL" if found else "ok", len(found)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
