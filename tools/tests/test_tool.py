"""Tests of the `ctensor` tool: exit codes, output formats (JSON schema, CSV),
that `check` covers every registered op and catches a deliberately broken
kernel, and usage errors (exit 2).

Run by ctest (tool_pytest) with CT_TOOL=<build>/tools/ctensor,
CT_LIBRARY=<build>/src/libctensor.so and the plugins CT_LOOPBACK (a device
type) and CT_DOC_PLUGIN (the op of docs/writing-a-plugin.md); CT_CACHE_DIR
points the limits cache at a scratch folder so the tests never touch the
user's cache.
"""
import csv
import ctypes
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
    e.pop("CT_DEBUG_PERTURB", None)
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

BENCH_ROW = {"device": str, "op": str, "dtype": str, "shape": str, "time_s": NUM_OR_NULL, "bytes": NUM,
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


def test_bench_matmul_is_compute_bound(env, tmp_path):
    js = tmp_path / "m.json"
    run(["bench", "--quick", "--op", "matmul", "--json", str(js)], env, check_rc=0)
    row = json.loads(js.read_text())["rows"][0]
    assert row["bound"] == "compute" and row["flops"] > 0 and row["gflops"] > 0


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
        [("softsign", "softsign", "unary", "elementwise")]
    assert mine[0]["id"] == op_count()  # the first id after the built-ins
    assert mine[0]["dtypes"]["cpu:0"] == ["float32", "float64"]
    assert all(o["plugin"] is None for o in ops["ops"] if o["name"] != "softsign")
    line = next(x for x in p.stdout.splitlines() if x.strip().startswith("softsign"))
    assert "[plugin softsign]" in line and "x / (1 + |x|)" in line
    assert "1 from plugins" in p.stdout
    info = tmp_path / "info.json"
    run(["--plugin", DOC_PLUGIN, "info", "--json", str(info)], env, check_rc=0)
    (lib,) = json.loads(info.read_text())["plugins"]
    assert (lib["name"], lib["num_ops"], lib["ops"], lib["num_kernel_tables"]) == ("softsign", 1, ["softsign"], 1)


@needs_doc_plugin
def test_check_compares_a_plugin_op_with_its_own_reference(env, tmp_path):
    out = tmp_path / "check.json"
    p = run(["--plugin", DOC_PLUGIN, "check", "--op", "softsign", "--json", str(out)], env, check_rc=0)
    res = json.loads(out.read_text())
    assert [(r["op"], r["dtype"], r["status"]) for r in res["results"]] == \
        [("softsign", "float32", "PASS"), ("softsign", "float64", "PASS")]
    assert all(r["cases"] >= 4 for r in res["results"]) and res["pairs_failed"] == 0
    assert "softsign" in p.stdout
    # and a wrong result is caught (core's fault injection works on a plugin op too)
    bad = tmp_path / "bad.json"
    p = run(["--plugin", DOC_PLUGIN, "check", "--op", "softsign", "--json", str(bad)],
            dict(env, CT_DEBUG_PERTURB="softsign"), check_rc=1)
    assert json.loads(bad.read_text())["pairs_failed"] == 2 and "FAIL" in p.stdout
    # through CT_PLUGIN_PATH the same
    run(["check", "--op", "softsign", "--quick"], dict(env, CT_PLUGIN_PATH=DOC_PLUGIN), check_rc=0)


@needs_doc_plugin
def test_the_whole_check_covers_a_plugins_op(env, tmp_path):
    out = tmp_path / "check.json"
    run(["--plugin", DOC_PLUGIN, "check", "--quick", "--category", "elementwise", "--json", str(out)], env,
        check_rc=0)
    res = json.loads(out.read_text())
    assert "softsign" in {r["op"] for r in res["results"]} and res["pairs_failed"] == 0
