"""Named, selectable cases for the hand-rolled test scripts (tests/cli, tests/hostile,
tests/train, tests/memory).

A script registers its cases, in the order a full run takes them, then lets this module add
and handle the selection options:

    CASES = Cases()

    @CASES.case("control_flow")          # or @CASES.case: the function's own name
    def _(ctx):
        check_control_flow(ctx.dlc, ctx.work)

    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--dlc")
        args = CASES.parse_args(p, required=["--dlc"])
        ...
        CASES.run(args, ctx)

Options (every script the same):
  -k PATTERN   run only the cases whose name PATTERN matches: a Python regular expression,
               searched anywhere in the name, ignoring case (so a plain substring such as
               `-k mlp` works, and `-k '^mlp$'` picks exactly one case). Given more than once,
               a case runs if any pattern matches. Selected cases run in the full run's order.
               A pattern that matches no case (a typo) fails with exit status 2, as does a
               pattern that is not a valid regular expression.
  --list       print the case names (those -k selects, if given), one a line, and exit 0;
               needs none of the script's other options (no --dlc).
Without -k every case runs, in order, exactly as a script without this module did.

Shared setup: a case selected alone must still work, so a case builds what it needs itself;
setup that several cases share is built lazily, once (functools.cached_property on the
script's context object is the usual way).

Seeded random data: where cases draw from one seeded generator in turn (so what a case draws
depends on what the cases before it drew), register them with Cases(replay_setup=True) and
split each case in two: the function draws its data (the setup) and returns a function that
does the checks. Every case's setup then runs in order, selected or not, and only the selected
cases' checks run, so a case alone sees exactly the data it sees in a full run. (Any case
may return its checks that way; without replay_setup only the selected ones are called.)
"""
import re
import sys
import time


class Cases:
    def __init__(self, replay_setup=False):
        self.replay_setup = replay_setup
        self._cases = []  # (name, function), in run order

    def case(self, name_or_function):
        """Decorator registering a case: @cases.case("name") or @cases.case (the function's
        own name). Returns the function unchanged."""
        if callable(name_or_function):
            return self.add(name_or_function.__name__, name_or_function)
        return lambda function: self.add(name_or_function, function)

    def add(self, name, function):
        if not name or any(name == n for n, _ in self._cases):
            raise ValueError("case name %r is empty or already registered" % name)
        self._cases.append((name, function))
        return function

    def names(self):
        return [n for n, _ in self._cases]

    def select(self, patterns):
        """The names of the cases any of `patterns` matches (all when there are none), in run
        order. Raises re.error for an invalid pattern."""
        if not patterns:
            return self.names()
        compiled = [re.compile(p, re.IGNORECASE) for p in patterns]
        return [n for n in self.names() if any(c.search(n) for c in compiled)]

    def parse_args(self, parser, argv=None, required=()):
        """Adds -k and --list to `parser` and parses. `required` names options (as written,
        "--dlc") that the parser must not mark required itself: they are required unless
        --list is given. --list prints and exits 0; a -k matching nothing exits 2. The result
        carries `selected`, the names of the cases to run."""
        parser.add_argument("-k", dest="patterns", metavar="PATTERN", action="append",
                            default=[],
                            help="run only the cases whose name this regular expression "
                                 "matches (searched, ignoring case; repeatable: any matches)")
        parser.add_argument("--list", action="store_true",
                            help="print the case names (those -k selects) and exit")
        args = parser.parse_args(argv)
        try:
            args.selected = self.select(args.patterns)
        except re.error as e:
            parser.exit(2, "%s: error: -k %r is not a valid regular expression (%s)\n"
                        % (parser.prog, e.pattern, e))
        if args.patterns and not args.selected:
            parser.exit(2, "%s: error: -k %s matches none of the %d cases (--list shows them)\n"
                        % (parser.prog, " -k ".join(repr(p) for p in args.patterns),
                           len(self._cases)))
        if args.list:
            for name in args.selected:
                print(name)
            parser.exit(0)
        missing = [o for o in required
                   if getattr(args, o.lstrip("-").replace("-", "_"), None) is None]
        if missing:
            parser.error("the following arguments are required: " + ", ".join(missing))
        if args.patterns:
            print("selected %d of %d cases: %s" % (len(args.selected), len(self._cases),
                                                   " ".join(args.selected)))
            sys.stdout.flush()
        return args

    def run(self, args, *case_args):
        """Calls the selected cases in order with `case_args`; a case that returns a function
        (its checks) has that called too. With replay_setup every case is called (its setup)
        and must return its checks, which are called only if it is selected."""
        selected = set(args.selected)
        for name, function in self._cases:
            chosen = name in selected
            if not chosen and not self.replay_setup:
                continue
            start = time.monotonic()
            checks = function(*case_args)
            if self.replay_setup and not callable(checks):
                raise TypeError("case %r returned no check function" % name)
            if chosen and callable(checks):
                checks()
            # Where a script's time goes (CI's time budget).
            if chosen:
                print("case %s: %.1f s" % (name, time.monotonic() - start))
                sys.stdout.flush()
