"""The fuzz tier: every public operator, a known-good call with one argument swapped for a bad value.

The good calls and the bad values come from tests/fuzz/fuzzer.py (built from the
schemas, so a new public operator is fuzzed with no new test code).  For each
bad call, judged against PyTorch: where torch raises, onion raises the same
exception type; onion never lets an internal exception out (AttributeError,
NumPy's errors...); and a call that raises leaves every tensor it was given
unchanged.  Hypothesis picks the bad calls, derandomized so each run is the
same; the default run judges every listed bad call and a few drawn ones per good call; ``-m slow``
draws many more.
Calls in known_failures.py are skipped here and checked to still fail below.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))     # fuzzer.py and known_failures.py, by module name

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, Phase, given, settings, strategies as st  # noqa: E402

import fuzzer  # noqa: E402
from known_failures import KNOWN_DRAWN, KNOWN_FAILURES  # noqa: E402

pytestmark = pytest.mark.oracle

GOOD = fuzzer.good_calls()
_SETTINGS = dict(derandomize=True, deadline=None, database=None, print_blob=False, phases=(Phase.generate,),
                 suppress_health_check=list(HealthCheck))
DEFAULT_EXAMPLES = 6


def _check(case_call, drawn=False):
    if fuzzer.known_reason(case_call.id, KNOWN_FAILURES) is not None:
        return
    if drawn and fuzzer.known_reason(case_call.id, KNOWN_DRAWN) is not None:
        return
    v = fuzzer.judge(case_call)
    assert not v.failed, f"{case_call.id}:\n  " + "\n  ".join(v.problems())


def _int_site_cases(good):
    """Hypothesis draws the integer at each int / int[] site (dims, sizes, indices, huge and negative)."""
    sites = [s for s in good.sites if s.type.rstrip("?") in ("int", "int[]")]
    if not sites:
        return None
    # small values, or values far beyond any allocation (a size in between could make either library
    # allocate gigabytes before it fails)
    ints = st.one_of(st.integers(-8, 8), st.integers(2 ** 40, 2 ** 70), st.integers(-2 ** 70, -2 ** 40))

    def build(site, v, w):
        return good.call.replace(site.where, fuzzer.Lit(v if site.type.rstrip("?") == "int" else (v, w))), True
    return st.builds(build, st.sampled_from(sites), ints, ints)


def _strategy(good):
    cases = fuzzer.cases_of(good)
    listed = st.sampled_from([(c.call, False) for c in cases])
    drawn = _int_site_cases(good)
    return listed if drawn is None else st.one_of(listed, drawn)


def test_every_public_operator_has_a_good_call():
    """An operator the tier cannot call is an operator it cannot fuzz: add a hand-written call for it."""
    assert fuzzer.uncovered() == []


def test_good_calls_are_good():
    """The corpus itself agrees with PyTorch: both libraries accept every good call."""
    bad = [g.call.id for g in GOOD if fuzzer.run(torch, g.call)[0] != "ok" or fuzzer.run(fuzzer.onion, g.call)[0] != "ok"]
    assert bad == []


@pytest.mark.parametrize("good", GOOD, ids=[g.call.id for g in GOOD])
def test_bad_calls(good):
    @settings(max_examples=DEFAULT_EXAMPLES, **_SETTINGS)
    @given(_strategy(good))
    def run(drawn_call):
        _check(*drawn_call)
    run()


@pytest.mark.parametrize("good", GOOD, ids=[g.call.id for g in GOOD])
def test_listed_bad_calls(good):
    """Every listed bad call of the good call (all of them, about 10 s for the whole tier)."""
    failures = []
    for case in fuzzer.cases_of(good):
        if fuzzer.known_reason(case.id, KNOWN_FAILURES) is None:
            v = fuzzer.judge(case.call)
            if v.failed:
                failures.append(f"{case.id}: " + "; ".join(v.problems()))
    assert failures == []


@pytest.mark.slow
@pytest.mark.parametrize("good", GOOD, ids=[g.call.id for g in GOOD])
def test_bad_calls_long(good):
    """The long profile (``-m slow``): many drawn integers per good call."""
    @settings(max_examples=100, **_SETTINGS)
    @given(_strategy(good))
    def run(drawn_call):
        _check(*drawn_call)
    run()


@pytest.mark.parametrize("pattern", sorted(KNOWN_FAILURES))
def test_known_failure_still_fails(pattern):
    """Strict: an entry must match at least one listed bad call, and every call it matches must still fail
    (a known failure that starts passing is reported here, so the list shrinks)."""
    matched = fuzzer.matching_cases(pattern)
    assert matched, f"known failure {pattern!r} matches no bad call of the fuzzer any more: remove it"
    now_pass = [c.id for c in matched if not fuzzer.judge(c.call).failed]
    assert now_pass == [], f"known failure {pattern!r}: these calls now behave as PyTorch; narrow or remove it"
