"""Sanitizer settings shared by the scripts that build generated code under sanitizers
(tests/onnx/harness_build.py, tests/models/run_model.py): the same flags give the same
DLC_CXXFLAGS, so dlc builds the sanitized runtime once into the cache they share."""
import os

# Exit status of a sanitized program on a report (the harness returns 0 or 1 itself).
SANITIZER_EXITCODE = 86
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "WARNING: ThreadSanitizer", "ERROR: ThreadSanitizer")


def sanitizer_flags(sanitize):
    """Compile and link flags for -fsanitize=LIST: every report is fatal, stacks are usable,
    and -O1 (the sanitizers' recommendation; it follows dlc's own -O3)."""
    if not sanitize:
        return ""
    return "-fsanitize=%s -fno-sanitize-recover=all -fno-omit-frame-pointer -g1 -O1" % sanitize


def sanitizer_env(env=None):
    """`env` (default: this process's) for a sanitized program: leaks detected, every report
    fatal with a known exit status (the caller's own *SAN_OPTIONS come first and are
    overridden)."""
    env = dict(os.environ if env is None else env)
    common = "exitcode=%d:print_stacktrace=1" % SANITIZER_EXITCODE
    for var, extra in (("ASAN_OPTIONS", "detect_leaks=1:" + common),
                       ("UBSAN_OPTIONS", "halt_on_error=1:" + common),
                       ("TSAN_OPTIONS", "halt_on_error=1:" + common)):
        env[var] = ":".join(o for o in (env.get(var, ""), extra) if o)
    return env
