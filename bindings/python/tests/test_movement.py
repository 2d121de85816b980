"""Data movement (flip, roll, concatenate/cat, stack, tile/repeat, pad in four modes, tril/triu): views plus
ct_copy, so results must equal NumPy's (and torch's for its names) bit for bit, on the CPU and on every other
device the library has (OpenCL through PoCL in CI), for every dtype."""
import numpy as np
import pytest

import ctensor as ct

DEVICES = ["cpu"] + (["opencl:0"] if "opencl:0" in {str(d) for d in ct.devices()} else [])


def on(a, device):
    return ct.copy(a, device) if device != "cpu" else a


def host(t):
    return np.asarray(ct.asarray(t).to("cpu"))


def eq(got, want):
    w = np.asarray(want)
    g = host(got)
    assert g.shape == w.shape and g.dtype == w.dtype
    np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float32", "int8", "float64", "bool"])
def test_flip_roll_tile_match_numpy(device, dtype):
    a = (np.arange(2 * 3 * 5) % 7).astype(dtype).reshape(2, 3, 5)
    x = on(a, device)
    eq(ct.flip(x), np.flip(a))
    eq(ct.flip(x, (0, 2)), np.flip(a, (0, 2)))
    eq(ct.flip(x, dims=[-1]), np.flip(a, -1))
    eq(ct.roll(x, 4), np.roll(a, 4))
    eq(ct.roll(x, -7), np.roll(a, -7))
    eq(ct.roll(x, (1, 13), (0, 2)), np.roll(a, (1, 13), (0, 2)))
    eq(ct.roll(x, (1, 2), (1, 1)), np.roll(a, (1, 2), (1, 1)))  # an axis twice: the sum
    eq(ct.tile(x, (2, 1, 3)), np.tile(a, (2, 1, 3)))
    eq(ct.tile(x, (2, 1, 1, 2)), np.tile(a, (2, 1, 1, 2)))
    eq(ct.tile(x, 3), np.tile(a, 3))
    eq(ct.tile(x, (0, 2)), np.tile(a, (0, 2)))


@pytest.mark.parametrize("device", DEVICES)
def test_concatenate_and_stack(device):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(2, 3, 4), (2, 1, 4), (2, 0, 4)])
    xs = [on(v, device) for v in (a, b, c)]
    eq(ct.concatenate(xs, 1), np.concatenate([a, b, c], 1))
    eq(ct.cat(xs, dim=-2), np.concatenate([a, b, c], -2))
    eq(ct.concatenate([xs[0], xs[0]], axis=None), np.concatenate([a, a], axis=None))
    eq(ct.stack([xs[0], xs[0], xs[0]], 2), np.stack([a, a, a], 2))
    eq(ct.stack([xs[1], xs[1]], axis=-1), np.stack([b, b], -1))
    out = ct.empty((2, 4, 4), "float32", device)
    assert ct.concatenate(xs, 1, out=out) is not None
    eq(out, np.concatenate([a, b, c], 1))
    with pytest.raises(ValueError, match=r"arrays\[1\].shape=\[2, 1, 4\] does not match"):
        ct.concatenate(xs, 0)
    with pytest.raises(TypeError, match="does not promote"):
        ct.concatenate([a, a.astype(np.float64)])
    with pytest.raises(ValueError, match="differs"):
        ct.stack([a, b])
    with pytest.raises(ValueError, match="out.shape"):
        ct.concatenate([a, a], 0, out=out)
    with pytest.raises(IndexError, match="out of range"):
        ct.concatenate([a, a], 3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_matches_numpy(device, mode):
    a = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
    x = on(a, device)
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    for pad in [(1, 2), (2, 1, 0, 3), (0, 0, 1, 1, 2, 2), (4, 4)]:
        if mode == "reflect" and max(pad) >= 4:
            continue
        width = [(0, 0)] * 3
        for k in range(len(pad) // 2):
            width[2 - k] = (pad[2 * k], pad[2 * k + 1])
        eq(ct.pad(x, pad, mode), np.pad(a, width, mode=np_mode))
    eq(ct.pad(x, (1, 1), "constant", 7), np.pad(a, [(0, 0), (0, 0), (1, 1)], constant_values=7))
    eq(ct.constant_pad_nd(x, (-1, 2, 1, -2), -1.5), np.pad(a[:, :2, 1:], [(0, 0), (1, 0), (0, 2)],
                                                           constant_values=-1.5))


def test_pad_modes_like_torch_and_errors():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
    for mode, pad in [("replicate", (-2, 6, 1, -1)), ("circular", (-1, 2, 1, -2)), ("reflect", (3, 3, 2, 1)),
                      ("replicate", (7, 0, 0, 9))]:
        torch.testing.assert_close(torch.from_dlpack(ct.pad(x, pad, mode)), F.pad(x, pad, mode), rtol=0, atol=0)
    with pytest.raises(ValueError, match="less than its extent"):
        ct.pad(x, (5, 0), "reflect")
    with pytest.raises(ValueError, match="pairs"):
        ct.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="mode="):
        ct.pad(x, (1, 1), "wrap")
    with pytest.raises(ValueError, match="negative extent"):
        ct.pad(x, (-3, -3))


@pytest.mark.parametrize("device", DEVICES)
def test_tril_triu_repeat(device):
    a = np.arange(2 * 4 * 6, dtype=np.int32).reshape(2, 4, 6) + 1
    x = on(a, device)
    for k in (-5, -1, 0, 2, 9):
        eq(ct.tril(x, k), np.tril(a, k))
        eq(ct.triu(x, k), np.triu(a, k))
    eq(ct.repeat(x, 2, 1, 3), np.tile(a, (2, 1, 3)))
    eq(ct.repeat(x, (1, 2, 1, 1)), np.tile(a, (1, 2, 1, 1)))
    with pytest.raises(ValueError, match="at least 3"):
        ct.repeat(x, 2, 2)
    with pytest.raises(ValueError, match="at least 2"):
        ct.tril(a[0, 0])


def test_results_are_new_and_inputs_untouched():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep = a.copy()
    for r in (ct.flip(a), ct.roll(a, 1), ct.tile(a, 2), ct.pad(a, (1, 1)), ct.tril(a), ct.cat([a, a])):
        assert isinstance(r, ct.Tensor) and r.data_ptr != a.ctypes.data
    np.testing.assert_array_equal(a, keep)
