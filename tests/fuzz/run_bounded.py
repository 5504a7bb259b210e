"""Runs dlc_fuzz for a bounded time (ctest's fuzz_bounded) and keeps its report short: the
fuzzer's progress lines go to a log file, and on a failure only the report is printed, with
the input that caused it as hex, so that a CI log that keeps only the start and the end of
the output still shows what broke and the input to add to regressions/.

usage: run_bounded.py DLC_FUZZ WORK_DIR [dlc_fuzz arguments...]
"""
import glob
import os
import subprocess
import sys

# The fuzzer's report: everything from the first line that says what went wrong.
REPORT_MARKERS = ("==ERROR", "ERROR:", "SUMMARY:", "ALARM:", "out-of-memory", "timeout",
                  "deadly signal", "Test unit written", "runtime error")


def main():
    fuzz, work, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    artifacts = os.path.join(work, "artifacts")
    os.makedirs(artifacts, exist_ok=True)
    os.makedirs(os.path.join(work, "corpus"), exist_ok=True)
    before = set(glob.glob(os.path.join(artifacts, "*")))
    log_path = os.path.join(work, "fuzz.log")
    with open(log_path, "w") as log:
        code = subprocess.call([fuzz, "-artifact_prefix=" + artifacts + "/", *args],
                               stdout=log, stderr=subprocess.STDOUT)
    with open(log_path, errors="replace") as log:
        lines = log.read().splitlines()
    stats = [l for l in lines if l.startswith("stat::") or l.startswith("Done ")]
    if code == 0:
        print("\n".join(stats))
        return 0
    start = next((i for i, l in enumerate(lines) if any(m in l for m in REPORT_MARKERS)),
                 max(0, len(lines) - 60))
    print("dlc_fuzz failed (exit %d); its report (whole log: %s):" % (code, log_path))
    print("\n".join(lines[start:start + 120]))
    for path in sorted(set(glob.glob(os.path.join(artifacts, "*"))) - before):
        data = open(path, "rb").read()
        print("input %s (%d bytes)%s" % (path, len(data), ":" if len(data) <= 8192 else
                                         ", too long to print"))
        if len(data) <= 8192:
            print(data.hex())
    return 1


if __name__ == "__main__":
    sys.exit(main())
