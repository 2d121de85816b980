"""conv3d, conv_transpose3d, max_pool3d and avg_pool3d (2-d ops on rearranged views) against PyTorch, on every
device that loads; and max_pool2d's NaN rule (PyTorch's: a NaN propagates, the last NaN tap gives the index) on
every path: the direct CPU kernel, oneDNN's (channels-last, bfloat16) with its NaN pass, the GPU kernel."""
import numpy as np
import pytest

import ctensor as ct

torch = pytest.importorskip("torch")
F = torch.nn.functional

DEVICES = ["cpu"] + (["opencl:0"] if "opencl:0" in {str(d) for d in ct.devices()} else [])


def on(dev, t):
    a = ct.asarray(t.contiguous())
    return a if dev == "cpu" else a.to(device=dev)


def host(a):
    a = ct.asarray(a)
    return torch.from_dlpack(a if str(a.device) == "cpu" else a.to(device="cpu"))


def close(got, want, tol=2e-5):
    g = host(got)
    assert g.shape == want.shape and g.dtype == want.dtype
    scale = float(want.double().nan_to_num(0, 0, 0).abs().max()) if want.numel() else 0.0
    torch.testing.assert_close(g.double(), want.double(), rtol=tol, atol=tol * (1 + scale), equal_nan=True)


CONV = [  # N, C, (D, H, W), K, groups, (T, R, S), stride, padding, dilation
    (2, 4, (7, 6, 5), 6, 2, (3, 2, 3), (2, 1, 1), (1, 0, 1), (1, 2, 1)),
    (1, 3, (5, 5, 5), 2, 1, (1, 1, 1), 1, 0, 1),
    (2, 2, (6, 4, 4), 4, 2, (2, 3, 2), (1, 2, 1), (0, 1, 1), (2, 1, 1)),
    (1, 2, (4, 5, 3), 3, 1, (3, 3, 3), 2, 1, 1),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", CONV)
def test_conv3d_matches_torch(dev, case):
    n, c, dhw, k, g, trs, st, pd, dl = case
    torch.manual_seed(0)
    x, w, b = torch.randn(n, c, *dhw), torch.randn(k, c // g, *trs), torch.randn(k)
    close(ct.conv3d(on(dev, x), on(dev, w), on(dev, b), st, pd, dl, g), F.conv3d(x, w, b, st, pd, dl, g))
    close(ct.conv3d(on(dev, x), on(dev, w), None, 1, "same", dl, g), F.conv3d(x, w, None, 1, "same", dl, g))
    close(ct.conv3d(on(dev, x[0]), on(dev, w), None, st, "valid", dl, g), F.conv3d(x[0], w, None, st, 0, dl, g))


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", CONV)
def test_conv_transpose3d_matches_torch(dev, case):
    n, c, dhw, k, g, trs, st, pd, dl = case
    torch.manual_seed(1)
    x, w, b = torch.randn(n, c, *dhw), torch.randn(c, k // g, *trs), torch.randn(k)
    st3 = (st,) * 3 if isinstance(st, int) else st
    for op in (0, tuple(1 if s > 1 else 0 for s in st3)):
        want = F.conv_transpose3d(x, w, b, st, pd, op, g, dl)
        close(ct.conv_transpose3d(on(dev, x), on(dev, w), on(dev, b), st, pd, op, g, dl), want)
    close(ct.conv_transpose3d(on(dev, x[0]), on(dev, w), None, st, pd, 0, g, dl),
          F.conv_transpose3d(x[0], w, None, st, pd, 0, g, dl))


POOL = [  # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    ((3, 2, 2), (2, 1, 2), (1, 1, 0), (1, 2, 1), True),
    (3, 2, 1, 1, True),
    ((2, 3, 1), (1, 2, 1), 0, 1, False),
]


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", POOL)
def test_max_pool3d_values_and_indices_match_torch_with_nan_and_ties(dev, case):
    torch.manual_seed(2)
    x = torch.randint(-3, 4, (2, 3, 7, 8, 6)).float()  # ties everywhere: the first in (d, h, w) order wins
    x[0, 0, 1, 1, 1] = x[1, 2, 3, 4, 5] = x[1, 2, 3, 5, 5] = float("nan")
    v, i = ct.max_pool3d(on(dev, x), *case, return_indices=True)
    tv, ti = F.max_pool3d(x, *case, return_indices=True)
    assert torch.equal(host(i), ti)
    torch.testing.assert_close(host(v), tv, equal_nan=True, rtol=0, atol=0)
    close(ct.max_pool3d(on(dev, x[0]), *case), F.max_pool3d(x[0], *case), tol=0)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("case", POOL)
@pytest.mark.parametrize("cip", [True, False])
@pytest.mark.parametrize("div", [None, 5])
def test_avg_pool3d_matches_torch_every_divisor_rule(dev, case, cip, div):
    k, s, p, dil, cm = case
    if dil != 1:
        return  # avg_pool3d has no dilation
    torch.manual_seed(3)
    x = torch.randn(2, 3, 7, 8, 6)
    close(ct.avg_pool3d(on(dev, x), k, s, p, cm, cip, div), F.avg_pool3d(x, k, s, p, cm, cip, div))


def test_narrow_dtypes_pool_in_float32_and_round_once():
    torch.manual_seed(4)
    x = torch.randn(1, 2, 6, 5, 5).bfloat16()
    # PyTorch's CPU has no bfloat16 avg_pool3d: its float32 result rounded once
    close(ct.avg_pool3d(x, 3, 2, 1), F.avg_pool3d(x.float(), 3, 2, 1).bfloat16(), tol=0)
    close(ct.max_pool3d(x, 2), F.max_pool3d(x, 2), tol=0)
    w = torch.randn(3, 2, 2, 2, 2).bfloat16()
    close(ct.conv3d(x, w), F.conv3d(x, w), tol=2e-2)
    wt = torch.randn(2, 3, 2, 2, 2).bfloat16()
    close(ct.conv_transpose3d(x, wt, stride=2), F.conv_transpose3d(x, wt, stride=2), tol=2e-2)


def test_bad_arguments_are_value_errors_naming_the_function():
    x = np.zeros((1, 2, 4, 4, 4), np.float32)
    with pytest.raises(ValueError, match="conv3d"):
        ct.conv3d(x, np.zeros((2, 3, 1, 1, 1), np.float32))  # 2 channels, weight wants 3
    with pytest.raises(ValueError, match="conv3d"):
        ct.conv3d(x, np.zeros((2, 2, 5, 1, 1), np.float32))  # kernel deeper than the input
    with pytest.raises(ValueError, match="conv_transpose3d"):
        ct.conv_transpose3d(x, np.zeros((2, 2, 1, 1, 1), np.float32), output_padding=1)
    with pytest.raises(ValueError, match="max_pool3d"):
        ct.max_pool3d(x, 2, padding=2)
    with pytest.raises(ValueError, match="avg_pool3d"):
        ct.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(ValueError, match="max_pool3d"):
        ct.max_pool3d(np.zeros((4, 4), np.float32), 2)


@pytest.mark.parametrize("dev", DEVICES)
@pytest.mark.parametrize("layout", ["nchw", "nhwc", "bf16"])
def test_max_pool2d_propagates_nan_as_torch_on_every_path(dev, layout):
    torch.manual_seed(5)
    x = torch.randn(2, 3, 9, 11)
    x[0, 1, 2, 3] = x[1, 2, 0, 0] = x[1, 2, 1, 1] = float("nan")
    x[1, 0, :3, :3] = float("-inf")  # a window of -inf only: y -inf, the first tap inside x
    if layout == "bf16":
        x = x.bfloat16()
    want_v, want_i = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    if layout == "nhwc":
        x = x.to(memory_format=torch.channels_last)
    a = ct.asarray(x) if dev == "cpu" else ct.asarray(x.contiguous()).to(device=dev)
    v, i = ct.max_pool2d(a, 3, 2, 1, return_indices=True)
    assert torch.equal(host(i), want_i)
    torch.testing.assert_close(host(v), want_v, equal_nan=True, rtol=0, atol=0)
