"""Tests of the `ctensor` tool: exit codes, output formats (JSON schema, CSV),
that `check` covers every registered op and catches a deliberately broken
kernel, and usage errors (exit 2).

Run by ctest (tool_pytest) with CT_TOOL=<build>/tools/ctensor,
CT_LIBRARY=<build>/src/libctensor.so and the plugins CT_LOOPBACK (a device
type), CT_DOC_PLUGIN (the op of docs/writing-a-plugin.md) and CT_CUSTOM_OPS
(examples/plugin_custom_op: an NN op with examples); CT_CACHE_DIR
points the limits cache at a scratch folder so the tests never touch the
user's cache.

The roofline tests use the tool's two testing hooks: CT_L3_BYTES (the L3 size
the tool goes by, instead of the machine's) and CT_BENCH_LIMIT_SCALE (rows are
judged against the limits times this factor, so a row over its limit can be
made on any machine). No test compares a time with a threshold.
"""
import csv
import ctypes
import importlib.util
import json
import os
import subprocess

import pytest

TOOL = os.environ.get("CT_TOOL", "")
LIB = os.environ.get("CT_LIBRARY", "")
pytestmark = pytest.mark.skipif(not os.path.exists(TOOL), reason=f"CT_TOOL={TOOL!r} is not a built ctensor tool")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    e = dict(os.environ)
    e["CT_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    for hook in ("CT_DEBUG_PERTURB", "CT_L3_BYTES", "CT_BENCH_LIMIT_SCALE", "CT_BENCH_CALL_BUDGET"):
        e.pop(hook, None)
    return e


def run(args, env, check_rc=None):
    p = subprocess.run([TOOL, *args], env=env, capture_output=True, text=True, timeout=600)
    if check_rc is not None:
        assert p.returncode == check_rc, f"ctensor {' '.join(args)}: rc {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def op_count():
    lib = ctypes.CDLL(LIB)
    lib.ct_op_count.restype = ctypes.c_int32
    return lib.ct_op_count()


def require(obj, schema, where="$"):
    """A small JSON schema: {key: type or (type, subschema)}; lists check every element."""
    for key, want in schema.items():
        assert key in obj, f"{where}: missing key {key!r}"
        typ, sub = want if isinstance(want, tuple) and len(want) == 2 and isinstance(want[1], dict) else (want, None)
        assert isinstance(obj[key], typ), f"{where}.{key}: {type(obj[key]).__name__}, expected {typ}"
        if sub is not None:
            items = obj[key] if isinstance(obj[key], list) else [obj[key]]
            for k, it in enumerate(items):
                require(it, sub, f"{where}.{key}[{k}]")


NUM = (int, float)
NUM_OR_NULL = (int, float, type(None))


# ---- usage errors: exit 2 and the usage text ---------------------------------

@pytest.mark.parametrize("args", [
    [], ["frobnicate"], ["check", "--bogus"], ["bench", "--size", "abc"], ["bench", "--size"],
    ["check", "--op", "no_such_op"], ["check", "--dtype", "float128"], ["info", "--op", "exp"],
    ["ops", "--category", "nope"], ["check", "--device", "tpu:7"], ["bench", "--quick=1"],
])
def test_bad_arguments_exit_2_with_usage(args, env):
    p = run(args, env, check_rc=2)
    assert "usage: ctensor" in p.stderr
    assert p.stderr.startswith("ctensor: "), p.stderr[:200]


def test_help_exits_0(env):
    p = run(["--help"], env, check_rc=0)
    assert "usage: ctensor" in p.stdout and "check" in p.stdout


# ---- info --------------------------------------------------------------------

def test_info_json_and_limits_cache(env, tmp_path):
    out = tmp_path / "info.json"
    p = run(["info", "--quick", "--json", str(out)], env, check_rc=0)
    assert "ctensor " in p.stdout and "limits:" in p.stdout
    info = json.loads(out.read_text())
    require(info, {"tool": str, "version": str, "abi_major": int, "op_count": int, "backends": list,
                   "devices": (list, {"index": int, "label": str, "name": str, "backend": str,
                                      "compute_units": int, "default_threads": int, "memory_bytes": int,
                                      "limits": (dict, {"bandwidth_Bps": NUM_OR_NULL, "peak_flops": NUM_OR_NULL,
                                                        "cached": bool})})})
    assert info["op_count"] == op_count()
    cpu = [d for d in info["devices"] if d["label"].startswith("cpu")]
    assert cpu and cpu[0]["limits"]["bandwidth_Bps"] > 1e8 and cpu[0]["limits"]["peak_flops"] > 1e9
    # the second run reads the cache; --remeasure measures again
    again = tmp_path / "again.json"
    run(["info", "--json", str(again)], env, check_rc=0)
    assert json.loads(again.read_text())["devices"][0]["limits"]["cached"] is True
    assert os.path.exists(os.path.join(env["CT_CACHE_DIR"], "limits.tsv"))
    fresh = tmp_path / "fresh.json"
    run(["info", "--quick", "--remeasure", "--json", str(fresh)], env, check_rc=0)
    assert json.loads(fresh.read_text())["devices"][0]["limits"]["cached"] is False


# ---- ops ---------------------------------------------------------------------

def test_ops_lists_the_whole_registry(env, tmp_path):
    out = tmp_path / "ops.json"
    p = run(["ops", "--json", str(out)], env, check_rc=0)
    ops = json.loads(out.read_text())
    require(ops, {"tool": str, "op_count": int,
                  "ops": (list, {"id": int, "name": str, "category": str, "kind": str, "summary": str,
                                 "dtypes": dict})})
    assert len(ops["ops"]) == ops["op_count"] == op_count()
    assert f"{op_count()} ops listed" in p.stdout
    exp = next(o for o in ops["ops"] if o["name"] == "exp")
    assert "float32" in exp["dtypes"]["cpu:0"] and "int8" not in exp["dtypes"]["cpu:0"]
    nn = tmp_path / "nn.json"
    run(["ops", "--category", "nn", "--json", str(nn)], env, check_rc=0)
    assert {o["category"] for o in json.loads(nn.read_text())["ops"]} == {"nn"}


# ---- check -------------------------------------------------------------------

CHECK_SCHEMA = {"tool": str, "version": str, "seed": int, "op_count": int, "ops_checked": int, "pairs": int,
                "pairs_failed": int,
                "results": (list, {"device": str, "op": str, "dtype": str, "cases": int,
                                   "worst_over_tolerance": NUM_OR_NULL, "status": str, "message": str})}


def test_check_covers_every_op_and_passes(env, tmp_path):
    out = tmp_path / "check.json"
    p = run(["check", "--quick", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    require(res, CHECK_SCHEMA)
    n = op_count()
    assert res["ops_checked"] == n == res["op_count"]
    assert f"checked {n} ops of ct_op_count() = {n}" in p.stdout
    assert res["pairs_failed"] == 0
    assert {r["status"] for r in res["results"]} == {"PASS"}
    assert all(r["cases"] > 0 for r in res["results"])
    assert len({r["op"] for r in res["results"]}) == n  # every op ran for at least one dtype


@pytest.mark.parametrize("op,extra", [("exp", []), ("add", ["--dtype", "int32"]), ("sum", []),
                                      ("conv2d", ["--quick"]), ("layer_norm", ["--quick"])])
def test_check_catches_a_broken_kernel(op, extra, env, tmp_path):
    bad = dict(env, CT_DEBUG_PERTURB=op)
    out = tmp_path / "bad.json"
    p = run(["check", "--op", op, "--json", str(out), *extra], bad, check_rc=1)
    res = json.loads(out.read_text())
    assert res["pairs_failed"] >= 1
    assert any(r["op"] == op and r["status"] == "FAIL" for r in res["results"])
    assert "FAIL" in p.stdout
    # and the same op passes without the fault
    run(["check", "--op", op, *extra], env, check_rc=0)


def test_check_one_dtype_and_seed(env, tmp_path):
    out = tmp_path / "c.json"
    run(["check", "--op", "div", "--dtype", "float16", "--seed", "7", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    assert res["seed"] == 7 and [r["dtype"] for r in res["results"]] == ["float16"]


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_check_the_wide_unsigned_dtypes(dtype, env, tmp_path):
    out = tmp_path / "u.json"
    run(["check", "--quick", "--dtype", dtype, "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    ran = {r["op"] for r in res["results"]}
    assert {r["dtype"] for r in res["results"]} == {dtype} and res["pairs_failed"] == 0
    # every op whose rule takes integers: arithmetic, bits, comparisons, reductions, scans, casts
    assert {"neg", "abs", "sign", "bitwise_not", "clamp", "where", "fma", "cast", "add", "floor_div", "mod", "pow",
            "right_shift", "less", "maximum", "sum", "prod", "argmax", "mean", "var", "cumsum", "cumprod"} <= ran
    assert not ran & {"exp", "softmax", "matmul", "conv2d", "max_pool2d"}  # float-only and NN ops: not defined


# ---- bench -------------------------------------------------------------------

BENCH_ROW = {"device": str, "op": str, "dtype": str, "shape": str, "input_domain": str, "time_s": NUM_OR_NULL, "bytes": NUM,
             "gbps": NUM_OR_NULL, "fraction": NUM_OR_NULL, "bound": str, "status": str}


def test_bench_json_csv_and_plain_output(env, tmp_path):
    js, cs = tmp_path / "b.json", tmp_path / "b.csv"
    p = run(["bench", "--quick", "--op", "add", "--size", "65536", "--json", str(js), "--csv", str(cs)], env,
            check_rc=0)
    res = json.loads(js.read_text())
    require(res, {"tool": str, "version": str, "quick": bool,
                  "devices": (list, {"label": str, "limits": dict}), "rows": (list, BENCH_ROW)})
    rows = [r for r in res["rows"] if r["op"] == "add"]
    assert rows and rows[0]["status"] == "ok" and rows[0]["time_s"] > 0 and 0 < rows[0]["fraction"] < 10
    with open(cs) as f:
        table = list(csv.DictReader(f))
    assert table and table[0]["op"] == "add"
    assert "\r" not in p.stderr  # not a terminal: no progress bar
    assert "add" in p.stdout


def _has(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.parametrize("op", ["add", "batch_norm"])
def test_compare_times_numpy_and_pytorch_or_says_why(op, env, tmp_path):
    """--compare: NumPy beside a category 1/2 row, PyTorch's CPU op beside every
    row where torch is installed (else one line saying why not), in the
    table and the JSON; CT_BENCH_TORCH=0 leaves PyTorch out."""
    if not _has("numpy"):
        pytest.skip("NumPy is not installed for this Python: --compare has no script baselines to show")
    for torch_env in ("1", "0"):
        e = dict(env, CT_BENCH_TORCH=torch_env, CT_PYTHON=os.environ.get("CT_PYTHON", "python3"))
        js, cs = tmp_path / f"c{torch_env}.json", tmp_path / f"c{torch_env}.csv"
        p = run(["bench", "--quick", "--compare", "--op", op, "--size", "65536", "--json", str(js), "--csv", str(cs)],
                e, check_rc=0)
        row = [r for r in json.loads(js.read_text())["rows"] if r["op"] == op and r["device"] == "cpu:0"][0]
        base = row["baselines"]
        if op == "add":
            assert base["numpy"]["time_s"] > 0, base
        else:
            assert "numpy" not in base  # NumPy has no batch_norm
        with open(cs) as f:
            table = list(csv.DictReader(f))
        assert "pytorch_ratio" in table[0]
        if torch_env == "1" and _has("torch"):
            assert base["pytorch"]["time_s"] > 0 and "threads" in base["pytorch"]["note"], base
            assert "pytorch" in p.stdout and "geometric mean of the pytorch ratios" in p.stdout
        else:
            assert "pytorch" not in base
            why = "CT_BENCH_TORCH=0" if torch_env == "0" else "not installed"
            assert "PyTorch baselines skipped: torch" in p.stdout and why in p.stdout, p.stdout


def test_bench_matmul_is_compute_bound(env, tmp_path):
    js = tmp_path / "m.json"
    run(["bench", "--quick", "--op", "matmul", "--json", str(js)], env, check_rc=0)
    row = json.loads(js.read_text())["rows"][0]
    assert row["bound"] == "compute" and row["flops"] > 0 and row["gflops"] > 0


# ---- bench: the roofline (limits measured in the run, rows judged against them) --

MiB = 1 << 20
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IN_CACHE = "working set fits in cache: "


def bench(args, env, tmp_path, name="b", **extra):
    """ctensor bench ARGS --json, with extra environment; (process, JSON)."""
    js = tmp_path / f"{name}.json"
    p = run(["bench", *args, "--json", str(js)], dict(env, **extra), check_rc=0)
    return p, json.loads(js.read_text())


def close(a, b, rel=1e-4):
    return abs(a - b) <= rel * abs(b)


def test_bench_json_and_csv_carry_work_limits_and_l3(env, tmp_path):
    n = 1 << 20
    cs = tmp_path / "r.csv"
    p, res = bench(["--quick", "--op", "add,sum,matmul", "--size", str(n), "--csv", str(cs)], env, tmp_path,
                   CT_L3_BYTES=str(8 * MiB))
    assert res["l3_bytes"] == 8 * MiB and res["l3_source"] == "CT_L3_BYTES"
    assert "L3 cache 8 MiB (CT_L3_BYTES)" in p.stdout and "limits, the best of this run's probes" in p.stdout
    (dev,) = [d for d in res["devices"] if d["label"] == "cpu:0"]
    lim = dev["limits"]
    require(lim, {"bandwidth_Bps": NUM, "peak_flops": NUM, "bandwidth_probe": str, "peak_probe": str, "scale": NUM,
                  "cached_floor": (dict, type(None)),
                  "probes": (list, {"when": str, "full": bool, "bandwidth_Bps": NUM, "peak_flops": NUM})})
    # measured in this run: before the ops, between the categories, after them
    whens = [pr["when"] for pr in lim["probes"]]
    assert whens[0] == "before the ops" and whens[-1] == "after the ops" and "after broadcast_reduce" in whens
    # the limits are the best of the probes and the cached floor
    floor = lim["cached_floor"] or {"bandwidth_Bps": 0, "peak_flops": 0}
    assert lim["scale"] == 1
    assert lim["bandwidth_Bps"] == max([floor["bandwidth_Bps"]] + [pr["bandwidth_Bps"] for pr in lim["probes"]])
    assert lim["peak_flops"] == max([floor["peak_flops"]] + [pr["peak_flops"] for pr in lim["probes"]])
    rows = {r["op"]: r for r in res["rows"]}
    assert rows["add"]["bytes"] == 3 * 4 * n and rows["add"]["flops"] == 0
    assert rows["sum"]["bytes"] == 4 * n + 4  # the input and the float32 scalar
    m = 512
    assert rows["matmul"]["flops"] == 2 * m ** 3 and rows["matmul"]["bytes"] == 3 * 4 * m * m
    for r in rows.values():
        assert r["status"] == "ok" and r["working_set_bytes"] >= r["bytes"]
        # anyone can redo the arithmetic: rate = work / time, fraction = rate / limit
        assert close(r["gbps"] * 1e9, r["bytes"] / r["time_s"])
        if r["bound"] == "compute":
            assert r["limit"] == lim["peak_flops"] and close(r["gflops"] * 1e9, r["flops"] / r["time_s"])
            assert close(r["fraction"], r["flops"] / r["time_s"] / r["limit"])
        else:
            assert r["limit"] == lim["bandwidth_Bps"]
            assert close(r["fraction"], r["bytes"] / r["time_s"] / r["limit"])
        assert r["over_limit"] == (r["fraction"] > 1)
    with open(cs) as f:
        table = {r["op"]: r for r in csv.DictReader(f)}
    for op, r in rows.items():
        c = table[op]
        assert int(c["bytes"]) == r["bytes"] and float(c["flops"]) == r["flops"]
        assert int(c["working_set_bytes"]) == r["working_set_bytes"] and close(float(c["limit"]), r["limit"])
        assert (c["flag"] or None) == r["flag"]


def test_rows_over_their_limit_are_flagged_with_the_reason(env, tmp_path):
    args = ["--quick", "--op", "add,matmul,layer_norm", "--size", str(1 << 20)]
    # limits scaled far down: every row is over; out of cache the reason is the limit
    p, res = bench(args, env, tmp_path, "small_l3", CT_L3_BYTES=str(1 * MiB), CT_BENCH_LIMIT_SCALE="1e-6")
    assert res["devices"][0]["limits"]["scale"] == 1e-6
    rows = {r["op"]: r for r in res["rows"]}
    for r in rows.values():
        assert r["over_limit"] is True and r["fraction"] > 1 and r["flag"] == "limit under-measured", r
        line = next(x for x in p.stdout.splitlines() if x.startswith(r["op"] + " "))
        assert "%!" in line and line.endswith("! limit under-measured"), line
    assert "3 row(s) above 100% of their limit" in p.stdout
    assert "scaled by 1e-06 (CT_BENCH_LIMIT_SCALE)" in p.stdout
    # the scale is never cached: the limits there are the measured ones
    cached = (open(os.path.join(env["CT_CACHE_DIR"], "limits.tsv")).read().split("\n")[0]).split("\t")
    assert float(cached[1]) > 1e8 and float(cached[2]) > 1e9
    # a memory-bound row whose working set fits in the L3 says so; a
    # compute-bound row's reason stays the limit
    p, res = bench(args, env, tmp_path, "big_l3", CT_L3_BYTES=str(64 * MiB), CT_BENCH_LIMIT_SCALE="1e-6")
    rows = {r["op"]: r for r in res["rows"]}
    assert rows["add"]["flag"] == IN_CACHE + "12 MiB < L3 64 MiB"
    assert rows["layer_norm"]["flag"].startswith(IN_CACHE) and rows["layer_norm"]["over_limit"]
    assert rows["matmul"]["flag"] == "limit under-measured"
    assert "! " + IN_CACHE + "12 MiB < L3 64 MiB" in p.stdout
    # unscaled, an in-cache row carries the note whatever its fraction
    _, res = bench(args, env, tmp_path, "plain", CT_L3_BYTES=str(64 * MiB))
    rows = {r["op"]: r for r in res["rows"]}
    assert rows["add"]["flag"] == IN_CACHE + "12 MiB < L3 64 MiB"
    assert rows["matmul"]["flag"] in (None, "limit under-measured")
    assert (rows["matmul"]["flag"] is None) == (rows["matmul"]["fraction"] <= 1)


def test_default_sizes_exceed_the_l3(env, tmp_path):
    l3 = 8 * MiB
    p, res = bench(["--quick", "--op", "add,sum,relu,cumsum"], env, tmp_path, CT_L3_BYTES=str(l3))
    _, i8 = bench(["--quick", "--op", "add", "--dtype", "int8"], env, tmp_path, "i8", CT_L3_BYTES=str(l3))
    rows = res["rows"] + i8["rows"]
    assert {r["op"] for r in rows} == {"add", "sum", "relu", "cumsum"}
    operands = {"add": 3, "relu": 2, "cumsum": 2}  # tensors of equal size; sum: one input and a scalar
    for r in rows:
        # not flagged as fitting in the cache (a noisy host may flag a row's limit as under-measured: timing)
        assert r["status"] == "ok" and (r["flag"] is None or IN_CACHE not in r["flag"]), r
        one = r["bytes"] // operands.get(r["op"], 1)
        assert one >= 1.25 * l3 and r["working_set_bytes"] > l3, r  # every operand, int8 too, exceeds the L3
    assert IN_CACHE not in p.stdout


def test_a_row_whose_call_would_take_too_long_runs_on_fewer_elements_and_says_so(env, tmp_path):
    # igamma: tens of ns per element, over 10x its memory time. CT_L3_BYTES = 16 MiB: the default
    # --quick size is 6 Mi float32 elements per operand. CT_BENCH_CALL_BUDGET = 1 ns: the row runs
    # on the least, 1 Mi.
    args = ["--quick", "--op", "igamma,add"]
    p, res = bench(args, env, tmp_path, "cut", CT_L3_BYTES=str(16 * MiB), CT_BENCH_CALL_BUDGET="1e-9")
    rows = {r["op"]: r for r in res["rows"]}
    r = rows["igamma"]
    assert r["status"] == "ok" and r["shape"] == str(1 << 20) and r["bytes"] == 3 * 4 * (1 << 20), r
    assert r["size_note"].startswith("1048576 elements, not 6291456: a call there would take ~"), r
    assert r["size_note"].endswith(" ns per element)"), r
    # the row says why it fits in the cache, in the table too
    assert r["flag"] == r["size_note"] + "; " + IN_CACHE + "12 MiB < L3 16 MiB", r
    line = next(x for x in p.stdout.splitlines() if x.startswith("igamma "))
    assert r["size_note"] in line, line
    assert "note: 1 row(s) ran on fewer elements than the default" in p.stdout
    # add is bound by memory: never cut, whatever the budget
    assert rows["add"]["shape"] == str(6 << 20) and rows["add"]["size_note"] is None, rows["add"]
    # within its budget the row runs on the default size
    _, res = bench(["--quick", "--op", "igamma"], env, tmp_path, "whole", CT_L3_BYTES=str(16 * MiB),
                   CT_BENCH_CALL_BUDGET="1000")
    (r,) = res["rows"]
    assert r["shape"] == str(6 << 20) and r["size_note"] is None, r


def test_default_sizes_exceed_the_l3_the_machine_reports(env, tmp_path):
    _, res = bench(["--quick", "--op", "sum"], env, tmp_path)
    if res["l3_bytes"] == 0:
        pytest.skip("this machine reports no L3 or L2 size")
    assert res["l3_source"] != "CT_L3_BYTES"
    (r,) = res["rows"]
    assert r["bytes"] - 4 >= 1.25 * res["l3_bytes"] and (r["flag"] is None or IN_CACHE not in r["flag"])


def test_cached_limits_are_a_floor_not_the_answer(env, tmp_path):
    cache = tmp_path / "cache"
    e = dict(env, CT_CACHE_DIR=str(cache), CT_L3_BYTES=str(8 * MiB))
    run(["info", "--quick"], e, check_rc=0)
    path = cache / "limits.tsv"
    key, bw, peak, *rest = path.read_text().rstrip("\n").split("\t")
    args = ["--quick", "--op", "relu", "--size", str(1 << 20)]

    def with_floor(factor):
        path.write_text("\t".join([key, str(float(bw) * factor), str(float(peak) * factor), *rest]) + "\n")
        return bench(args, e, tmp_path, f"floor{factor}")

    # A floor far above anything measurable: the rows are judged against it.
    _, res = with_floor(1000.0)
    lim = res["devices"][0]["limits"]
    assert lim["bandwidth_Bps"] == lim["cached_floor"]["bandwidth_Bps"] == pytest.approx(float(bw) * 1000, rel=1e-5)
    assert lim["bandwidth_probe"].startswith("cached floor")
    # A floor far below (measured on a busy machine): the run measures again and
    # its figures are the answer, and the cache rises to them.
    p, res = with_floor(0.001)
    lim = res["devices"][0]["limits"]
    assert "measuring the limits again" in p.stderr
    assert [pr["full"] for pr in lim["probes"]][:2] == [False, True]
    assert lim["bandwidth_Bps"] > 100 * lim["cached_floor"]["bandwidth_Bps"]
    assert float(path.read_text().split("\t")[1]) == pytest.approx(lim["bandwidth_Bps"], rel=1e-5)
    # --remeasure: the full probe, no floor
    _, res = bench(args + ["--remeasure"], e, tmp_path, "re")
    lim = res["devices"][0]["limits"]
    assert lim["cached_floor"] is None and lim["probes"][0]["full"] is True


def load_plot_module():
    spec = importlib.util.spec_from_file_location("plot_bench", os.path.join(ROOT, "bench", "plot_bench.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_plot_never_draws_a_bar_past_the_line(env, tmp_path):
    plot = load_plot_module()
    over = plot.row_display({"status": "ok", "fraction": 2.5, "flag": "limit under-measured"})
    assert over == {"value": 100.0, "over": True, "text": " 250% ! limit under-measured"}
    cached = plot.row_display({"status": "ok", "fraction": 1.29, "flag": IN_CACHE + "24 MiB < L3 320 MiB"})
    assert cached["value"] == 100.0 and cached["over"] and IN_CACHE + "24 MiB < L3 320 MiB" in cached["text"]
    under = plot.row_display({"status": "ok", "fraction": 0.5, "flag": IN_CACHE + "24 MiB < L3 320 MiB"})
    assert under["value"] == 50.0 and not under["over"] and "(" + IN_CACHE in under["text"]
    assert plot.row_display({"status": "ok", "fraction": 0.75, "flag": None}) == \
        {"value": 75.0, "over": False, "text": " 75%"}
    # the whole plot of a run with rows over their limit draws (where matplotlib is installed)
    pytest.importorskip("matplotlib")
    png = tmp_path / "p.png"
    bench(["--quick", "--op", "add,matmul", "--size", str(1 << 20), "--plot", str(png)], env, tmp_path,
          CT_BENCH_LIMIT_SCALE="1e-6")
    assert png.stat().st_size > 1000


# ---- plugins: the loopback test backend (tests/backends/loopback) ------------

LOOPBACK = os.environ.get("CT_LOOPBACK", "")
needs_loopback = pytest.mark.skipif(not os.path.exists(LOOPBACK),
                                    reason=f"CT_LOOPBACK={LOOPBACK!r} is not the built loopback plugin")


@needs_loopback
def test_plugin_adds_the_loopback_devices(env, tmp_path):
    out = tmp_path / "info.json"
    p = run(["--plugin", LOOPBACK, "info", "--json", str(out)], env, check_rc=0)
    info = json.loads(out.read_text())
    loop = [d for d in info["devices"] if d["backend"] == "loopback"]
    assert [d["label"] for d in loop] == ["loopback:0", "loopback:1"]
    assert all(d["device_type"] == 12 for d in loop)  # CT_EXT_DEV, DLPack's kDLExtDev
    assert "loopback" in info["backends"] and "loopback:1" in p.stdout
    # the option after the command, and CT_PLUGIN_PATH, do the same
    p = run(["ops", f"--plugin={LOOPBACK}", "--device", "loopback:1"], env, check_rc=0)
    assert "loopback:1: float32 float64" in p.stdout
    p = run(["ops", "--device", "loopback"], dict(env, CT_PLUGIN_PATH=LOOPBACK), check_rc=0)
    assert "loopback:0:" in p.stdout and "cpu:0" not in p.stdout


@needs_loopback
def test_check_on_the_loopback_devices(env, tmp_path):
    out = tmp_path / "check.json"
    p = run(["--plugin", LOOPBACK, "check", "--quick", "--device", "loopback", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    require(res, dict(CHECK_SCHEMA, pairs_refused=int,
                      refused=(list, {"device": str, "op": str, "dtype": str, "message": str})))
    assert {r["device"] for r in res["results"]} == {"loopback:0", "loopback:1"}
    assert res["pairs_failed"] == 0 and {r["status"] for r in res["results"]} == {"PASS"}
    assert all(r["cases"] > 0 for r in res["results"])
    ran = {(r["op"], r["dtype"]) for r in res["results"] if r["device"] == "loopback:0"}
    want = {(op, dt) for op in ("neg", "abs", "exp", "relu", "add", "mul", "maximum", "less", "sum", "max", "softmax")
            for dt in ("float32", "float64")}
    want |= {("cast", dt) for dt in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                     "float16", "bfloat16", "float32", "float64")}
    assert ran == want
    assert res["pairs"] == 2 * len(want)
    # what the devices refuse is counted and says why, loudly
    assert res["pairs_refused"] == len(res["refused"]) > 0
    sin = next(r for r in res["refused"] if r["op"] == "sin" and r["dtype"] == "float32")
    assert "loopback" in sin["message"] and "sin" in sin["message"]
    assert f"loopback:0: {len(want)} op x dtype pairs ran" in p.stdout


@needs_loopback
def test_check_catches_a_broken_plugin_kernel(env, tmp_path):
    bad = dict(env, CT_LOOPBACK_PERTURB="add")
    out = tmp_path / "bad.json"
    p = run(["--plugin", LOOPBACK, "check", "--device", "loopback:1", "--op", "add", "--json", str(out)], bad,
            check_rc=1)
    res = json.loads(out.read_text())
    assert res["pairs_failed"] == 2 and "FAIL" in p.stdout
    # the CPU's add is not the plugin's: it still passes with the fault on
    run(["--plugin", LOOPBACK, "check", "--device", "cpu", "--op", "add", "--dtype", "float32"], bad, check_rc=0)


@needs_loopback
def test_a_check_that_runs_nothing_fails(env):
    p = run(["--plugin", LOOPBACK, "check", "--device", "loopback", "--op", "matmul"], env, check_rc=1)
    assert "no op x dtype pair ran" in p.stdout


@pytest.mark.parametrize("plugin,why", [("/nonexistent/libnothing.so", "no such file"),
                                        (LIB, "already in this process")])
def test_a_bad_plugin_is_a_usage_error(plugin, why, env):
    p = run(["--plugin", plugin, "info"], env, check_rc=2)
    assert why in p.stderr and "usage: ctensor" in p.stderr


@needs_loopback
def test_a_plugin_loaded_twice_is_refused(env):
    p = run(["--plugin", LOOPBACK, "--plugin", LOOPBACK, "info"], env, check_rc=2)
    assert "is loaded already" in p.stderr and "loopback" in p.stderr


PLUGIN_SCHEMA = {"name": str, "version": str, "path": str, "abi_version": str, "num_ops": int, "num_devices": int,
                 "num_kernel_tables": int, "ops": list}


@needs_loopback
def test_info_lists_the_loaded_plugins(env, tmp_path):
    out = tmp_path / "info.json"
    p = run(["--plugin", LOOPBACK, "info", "--json", str(out)], env, check_rc=0)
    info = json.loads(out.read_text())
    require(info, {"plugin_abi": str, "plugins": (list, PLUGIN_SCHEMA), "plugin_failures": list})
    (lb,) = info["plugins"]
    assert lb["name"] == "loopback" and lb["version"] == "1.0.0"
    assert os.path.samefile(lb["path"], LOOPBACK) and lb["abi_version"] == info["plugin_abi"]
    assert (lb["num_ops"], lb["num_devices"], lb["num_kernel_tables"], lb["ops"]) == (0, 1, 1, [])
    assert info["plugin_failures"] == []
    assert "plugins loaded: 1" in p.stdout
    assert f"loopback 1.0.0 (ABI {lb['abi_version']}) from {lb['path']}" in p.stdout
    assert "0 ops, 1 device type, 1 kernel table" in p.stdout
    # without plugins: an empty list
    plain = tmp_path / "plain.json"
    p = run(["info", "--json", str(plain)], env, check_rc=0)
    assert json.loads(plain.read_text())["plugins"] == [] and "plugins loaded: 0" in p.stdout


@needs_loopback
def test_info_lists_a_failed_plugin_path_entry_and_exits_2(env, tmp_path):
    out = tmp_path / "info.json"
    missing = str(tmp_path / "libmissing.so")
    p = run(["info", "--json", str(out)], dict(env, CT_PLUGIN_PATH=f"{missing}:{LOOPBACK}"), check_rc=2)
    info = json.loads(out.read_text())
    assert [x["name"] for x in info["plugins"]] == ["loopback"]  # the others still load
    (f,) = info["plugin_failures"]
    assert f["path"] == missing and f["status"] == "CT_ERR_NOT_FOUND" and "no such file" in f["message"]
    assert "did not load: 1" in p.stdout and missing in p.stdout
    assert "CT_PLUGIN_PATH" in p.stderr and "usage: ctensor" not in p.stderr
    # every other command: a usage error, as before
    p = run(["ops"], dict(env, CT_PLUGIN_PATH=missing), check_rc=2)
    assert "CT_PLUGIN_PATH" in p.stderr and "no such file" in p.stderr and "usage: ctensor" in p.stderr


# ---- a plugin that adds an op: the example of docs/writing-a-plugin.md ---------

DOC_PLUGIN = os.environ.get("CT_DOC_PLUGIN", "")
needs_doc_plugin = pytest.mark.skipif(not os.path.exists(DOC_PLUGIN),
                                      reason=f"CT_DOC_PLUGIN={DOC_PLUGIN!r} is not the built example plugin")


@needs_doc_plugin
def test_ops_marks_a_plugins_ops(env, tmp_path):
    out = tmp_path / "ops.json"
    p = run(["--plugin", DOC_PLUGIN, "ops", "--json", str(out)], env, check_rc=0)
    ops = json.loads(out.read_text())
    assert ops["op_count"] == op_count() + 1 and len(ops["ops"]) == ops["op_count"]
    mine = [o for o in ops["ops"] if o["plugin"] is not None]
    assert [(o["name"], o["plugin"], o["kind"], o["category"]) for o in mine] == \
        [("isru", "isru", "unary", "elementwise")]
    assert mine[0]["id"] == op_count()  # the first id after the built-ins
    assert mine[0]["dtypes"]["cpu:0"] == ["float32", "float64"]
    assert all(o["plugin"] is None for o in ops["ops"] if o["name"] != "isru")
    line = next(x for x in p.stdout.splitlines() if x.strip().startswith("isru"))
    assert "[plugin isru]" in line and "x / sqrt(1 + x^2)" in line
    assert "1 from plugins" in p.stdout
    info = tmp_path / "info.json"
    run(["--plugin", DOC_PLUGIN, "info", "--json", str(info)], env, check_rc=0)
    (lib,) = json.loads(info.read_text())["plugins"]
    assert (lib["name"], lib["num_ops"], lib["ops"], lib["num_kernel_tables"]) == ("isru", 1, ["isru"], 1)


@needs_doc_plugin
def test_check_compares_a_plugin_op_with_its_own_reference(env, tmp_path):
    out = tmp_path / "check.json"
    p = run(["--plugin", DOC_PLUGIN, "check", "--op", "isru", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    assert [(r["op"], r["dtype"], r["status"]) for r in res["results"]] == \
        [("isru", "float32", "PASS"), ("isru", "float64", "PASS")]
    assert all(r["cases"] >= 4 for r in res["results"]) and res["pairs_failed"] == 0
    assert "isru" in p.stdout
    # and a wrong result is caught (core's fault injection works on a plugin op too)
    bad = tmp_path / "bad.json"
    p = run(["--plugin", DOC_PLUGIN, "check", "--op", "isru", "--json", str(bad)],
            dict(env, CT_DEBUG_PERTURB="isru"), check_rc=1)
    assert json.loads(bad.read_text())["pairs_failed"] == 2 and "FAIL" in p.stdout
    # through CT_PLUGIN_PATH the same
    run(["check", "--op", "isru", "--quick"], dict(env, CT_PLUGIN_PATH=DOC_PLUGIN), check_rc=0)


@needs_doc_plugin
def test_the_whole_check_covers_a_plugins_op(env, tmp_path):
    out = tmp_path / "check.json"
    run(["--plugin", DOC_PLUGIN, "check", "--quick", "--category", "elementwise", "--json", str(out)], env,
        check_rc=0)
    res = json.loads(out.read_text())
    assert "isru" in {r["op"] for r in res["results"]} and res["pairs_failed"] == 0


# ---- a plugin's NN op: gemm_relu of examples/plugin_custom_op ----------------
# Its descriptor is the plugin's own: check and bench make its calls from the
# plugin's examples (CTOpDesc.example, ct_op_example).

CUSTOM_OPS = os.environ.get("CT_CUSTOM_OPS", "")
needs_custom_ops = pytest.mark.skipif(not os.path.exists(CUSTOM_OPS),
                                      reason=f"CT_CUSTOM_OPS={CUSTOM_OPS!r} is not the built example plugin")


@needs_custom_ops
def test_check_runs_a_plugin_nn_op_from_its_examples(env, tmp_path):
    out = tmp_path / "check.json"
    p = run(["--plugin", CUSTOM_OPS, "check", "--op", "gemm_relu", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    assert [(r["op"], r["dtype"], r["status"]) for r in res["results"]] == [("gemm_relu", "float32", "PASS")]
    assert res["results"][0]["cases"] == 3 and res["pairs_failed"] == 0  # the plugin's three small examples
    assert "no NN cases" not in p.stdout
    # a wrong result is caught: the reference is the plugin's, not the kernel's
    bad = tmp_path / "bad.json"
    p = run(["--plugin", CUSTOM_OPS, "check", "--op", "gemm_relu", "--json", str(bad)],
            dict(env, CT_DEBUG_PERTURB="gemm_relu"), check_rc=1)
    (r,) = json.loads(bad.read_text())["results"]
    assert r["status"] == "FAIL" and "example 0" in r["message"] and "FAIL" in p.stdout


@needs_custom_ops
def test_the_whole_quick_check_covers_both_plugin_ops(env, tmp_path):
    out = tmp_path / "check.json"
    run(["--plugin", CUSTOM_OPS, "check", "--quick", "--category", "nn", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    assert ("gemm_relu", "PASS") in {(r["op"], r["status"]) for r in res["results"]}
    out2 = tmp_path / "check2.json"
    run(["--plugin", CUSTOM_OPS, "check", "--quick", "--op", "bias_gelu,gemm_relu", "--json", str(out2)], env,
        check_rc=0)
    res = json.loads(out2.read_text())
    assert {r["op"] for r in res["results"]} == {"bias_gelu", "gemm_relu"} and res["pairs_failed"] == 0


@needs_custom_ops
def test_bench_runs_a_plugin_nn_op_from_its_large_example(env, tmp_path):
    js = tmp_path / "b.json"
    run(["--plugin", CUSTOM_OPS, "bench", "--quick", "--op", "gemm_relu", "--json", str(js)], env, check_rc=0)
    (row,) = json.loads(js.read_text())["rows"]
    assert row["status"] == "ok" and row["time_s"] > 0
    assert row["shape"] == "4096x64,64x1024,1024"  # a, b, bias of the plugin's example
    assert row["bytes"] == 4 * (4096 * 64 + 64 * 1024 + 1024 + 4096 * 1024)
    assert row["bound"] == "-" and row["fraction"] is None  # its FLOPs are not known: no %limit
