"""What every cli case uses: checks counted into one tally, dlc run as a user runs it, and the
contract of a refusal (exit 1, 'dlc: error: <file>: ...' lines, nothing left behind)."""
import os
import shutil
import subprocess

failures = []
passes = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    (passes if condition else failures).append(what)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def expect_error(dlc, work, name, model_path, must_contain):
    out = os.path.join(work, "out_" + name)
    shutil.rmtree(out, ignore_errors=True)
    r = run(dlc, "compile", model_path, "-o", out)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1, "%s: exit code 1 (got %d)" % (name, r.returncode))
    check(len(lines) >= 1 and all(l.startswith("dlc: error: " + model_path + ": ")
                                  for l in lines),
          "%s: every stderr line is 'dlc: error: <file>: ...' (got %r)" % (name, r.stderr))
    check(all(s in r.stderr for s in must_contain),
          "%s: message mentions %s (got %r)" % (name, must_contain, r.stderr))
    leftovers = os.listdir(out) if os.path.isdir(out) else []
    check(not leftovers, "%s: no output files left behind (found %s)" % (name, leftovers))
