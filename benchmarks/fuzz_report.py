"""How onion answers bad calls, against PyTorch: the figures of the fuzz tier (issue 7).

    PYTHONPATH=. python benchmarks/fuzz_report.py [--all] [--known] [--list]

Runs every bad call the fuzzer (tests/fuzz/fuzzer.py) makes from the good calls of
every public operator and prints: how many bad calls, the share where onion raises
PyTorch's exception type among the calls torch refuses, the share onion accepts
where torch refuses, internal exceptions leaking out, and failing calls that
modified a tensor.  By default the calls listed in tests/fuzz/known_failures.py
are left out of the figures (they are counted apart); ``--all`` counts them too.
``--known`` re-runs the known-failure list and prints the entries that now pass.
``--list`` prints every failing call with its problem.
"""
from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

import fuzzer  # noqa: E402
from known_failures import KNOWN_FAILURES  # noqa: E402

TARGETS = {"same type": 98.0, "accepted": 1.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--all", action="store_true", help="count the known failures in the figures too")
    ap.add_argument("--known", action="store_true", help="re-run the known failures; print those that now pass")
    ap.add_argument("--list", action="store_true", help="print every failing call")
    args = ap.parse_args(argv)
    if fuzzer.torch is None:
        print("PyTorch is not installed: the fuzz report compares with it")
        return 2
    t0 = time.perf_counter()
    cases = fuzzer.all_cases()
    verdicts, known_v = [], []
    for case in cases:
        v = fuzzer.judge(case.call)
        (known_v if fuzzer.known_reason(case.id, KNOWN_FAILURES) is not None and not args.all else verdicts).append(v)
    elapsed = time.perf_counter() - t0
    refused = [v for v in verdicts if v.torch_outcome == "err"]
    same = [v for v in refused if v.onion_outcome == "err" and v.same_type]
    accepted = [v for v in refused if v.onion_outcome == "ok"]
    stricter = [v for v in verdicts if v.torch_outcome == "ok" and v.onion_outcome == "err"]
    leaks = [v for v in verdicts if v.leak]
    modified = [v for v in verdicts if v.modified]
    pct = (lambda n, d: 100.0 * n / d if d else 100.0)
    print(f"good calls: {len(fuzzer.good_calls())} (public functions {len(fuzzer.public_functions())}, "
          f"methods {len(fuzzer.public_methods())}); bad calls: {len(cases)} in {elapsed:.1f} s")
    print(f"known failures left out: {len(known_v)} calls ({len(KNOWN_FAILURES)} entries)"
          if not args.all else "known failures counted in (--all)")
    print(f"bad calls judged: {len(verdicts)}; torch refuses {len(refused)}")
    print(f"  onion raises torch's exception type: {len(same)}/{len(refused)} = {pct(len(same), len(refused)):.2f}%"
          f"  (target >= {TARGETS['same type']}%)")
    print(f"  onion accepts where torch refuses:   {len(accepted)}/{len(refused)} = "
          f"{pct(len(accepted), len(refused)):.2f}%  (target <= {TARGETS['accepted']}%)")
    print(f"  internal exceptions leaking:         {len(leaks)}  (target 0)")
    print(f"  failing calls that modified a tensor: {len(modified)}  (target 0)")
    print(f"  onion refuses where torch accepts:   {len(stricter)}  (not a target; listed with --list)")
    if args.list:
        by_problem = collections.defaultdict(list)
        for v in verdicts:
            for p in v.problems():
                by_problem[p].append(v.call.id)
        for v in stricter:
            by_problem[f"onion refuses: {v.onion_exc}"].append(v.call.id)
        for p, ids in sorted(by_problem.items()):
            for i in ids:
                print(f"{i}\n    {p}")
    if args.known:
        print("\nknown failures re-run:")
        for pattern, reason in sorted(KNOWN_FAILURES.items()):
            matched = fuzzer.matching_cases(pattern)
            passing = [c.id for c in matched if not fuzzer.judge(c.call).failed]
            if not matched:
                print(f"  MATCHES NOTHING  {pattern}")
            elif passing:
                print(f"  NOW PASSES ({len(passing)}/{len(matched)})  {pattern}  e.g. {passing[0]}")
        print("  (entries not printed still fail as listed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
