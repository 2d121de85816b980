"""ONNX backend node tests (onnx.backend.test.case.node) run through ctensor.

One test per ONNX node test directory whose node is an op that onnx_runner
maps onto ctensor calls (plus the *_expanded function-body graphs made only of
such ops); the test id is the directory name.  The
data is generated once by the installed onnx wheel into $CT_ONNX_DATA
(default build/onnx-node-data) and reused while the onnx version is the same.

Tolerances are ONNX's (rtol=1e-3, atol=1e-7, or the case's own); dtype and
shape must match; ints and bool must be equal.

onnx_skips.txt lists the cases ctensor cannot run (a feature it lacks), as
`test_name: reason`.  A case on the list is still run: it is skipped when it
raises Unsupported (the mapping cannot express it) or NotImplementedError
(ctensor: op x dtype not supported); it FAILS when it passes (stale entry) or
computes a wrong result.  An unsupported case missing from the list fails, and
so does a list entry naming no case.  Proposals for the list:
    python3 onnx_runner.py --propose
A summary line (passed / skipped / failed, ops covered) is printed at the end.
"""

from __future__ import annotations

import collections
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import onnx_runner as R  # noqa: E402

ct = pytest.importorskip("ctensor")

SKIP_FILE = os.path.join(HERE, "onnx_skips.txt")
DATA_DIR, MANIFEST = R.ensure_data()
CASES = R.selected_cases(MANIFEST)
SKIPS = R.load_skips(SKIP_FILE)

# name -> (outcome, detail); read by the summary plugin below
RESULTS: dict[str, tuple[str, str]] = {}


@pytest.mark.parametrize("case", CASES)
def test_onnx_node(case):
    info = MANIFEST[case]
    model, sets = R.load_case(os.path.join(DATA_DIR, case))
    reason = SKIPS.get(case)
    RESULTS[case] = ("failed", "")
    try:
        for inputs, outputs in sets:
            got = R.run_node(model, inputs)
            R.compare(got, outputs, rtol=info.get("rtol", 1e-3), atol=info.get("atol", 1e-7))
    except (R.Unsupported, NotImplementedError) as e:
        why = f"{type(e).__name__}: {e}"
        if reason is None:
            pytest.fail(f"{case} is not supported ({why}) but is not in onnx_skips.txt; "
                        f"add `{case}: <the missing feature>`", pytrace=False)
        RESULTS[case] = ("skipped", reason)
        pytest.skip(f"{reason}  [{why}]")
    if reason is not None:
        pytest.fail(f"stale entry in onnx_skips.txt: {case} passes now "
                    f"(listed as: {reason}); remove it", pytrace=False)
    RESULTS[case] = ("passed", "")


def test_onnx_skip_list_names_existing_cases():
    """Every onnx_skips.txt entry must name a case that is run here."""
    unknown_data = sorted(k for k in SKIPS if k not in MANIFEST)
    unmapped = sorted(k for k in SKIPS if k in MANIFEST and k not in set(CASES))
    msg = []
    if unknown_data:
        msg.append(f"no such ONNX node test: {', '.join(unknown_data)}")
    if unmapped:
        msg.append(f"not a case of mapped ops (not run here): {', '.join(unmapped)}")
    assert not msg, "stale onnx_skips.txt entries: " + "; ".join(msg)


# ---- summary line -------------------------------------------------------------


class _Summary:
    def pytest_terminal_summary(self, terminalreporter):
        if not RESULTS:
            return
        by = collections.Counter(o for o, _ in RESULTS.values())
        ops = {op for k, (o, _) in RESULTS.items() if o == "passed"
               for op in R.case_ops(MANIFEST[k])}
        tr = terminalreporter
        line = (f"ONNX node tests: {by['passed']} passed, {by['skipped']} skipped "
                f"(on the list), {by['failed']} failed, ops covered: {len(ops)}")
        tr.write_sep("-", "ONNX node tests")
        tr.write_line(line)
        if tr.config.option.verbose > 0:
            reasons = collections.Counter(d for o, d in RESULTS.values() if o == "skipped")
            for r, c in reasons.most_common():
                tr.write_line(f"  {c:4d} skipped: {r}")
            tr.write_line(f"  ops covered: {', '.join(sorted(ops))}")


@pytest.fixture(autouse=True, scope="module")
def _onnx_summary(request):
    pm = request.config.pluginmanager
    if not pm.has_plugin("ctensor-onnx-node-summary"):
        pm.register(_Summary(), "ctensor-onnx-node-summary")
    yield
