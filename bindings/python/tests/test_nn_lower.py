"""The NN functions lowered onto the 2-d ops (conv1d, conv_transpose1d/2d, max_pool1d, avg_pool1d), glu and topk,
against PyTorch."""
import pytest

import ctensor as ct

torch = pytest.importorskip("torch")
F = torch.nn.functional


def close(got, want, **kw):
    if isinstance(got, tuple):
        for g, w in zip(got, want):
            close(g, w, **kw)
        return
    g = torch.from_dlpack(got)
    assert g.shape == want.shape
    torch.testing.assert_close(g, want, **({"rtol": 1e-5, "atol": 1e-5} | kw))


def test_conv1d_all_options():
    g = torch.Generator().manual_seed(0)
    x, w, b = torch.randn(2, 4, 11, generator=g), torch.randn(6, 2, 3, generator=g), torch.randn(6, generator=g)
    for kw in [{}, {"stride": 2, "padding": 1}, {"dilation": 2, "groups": 2}, {"padding": "same", "dilation": 3},
               {"padding": "valid", "stride": (3,)}]:
        groups = kw.get("groups", 1)
        ww = w if groups == 2 else torch.randn(6, 4, 3, generator=g)
        close(ct.conv1d(x, ww, b, **kw), F.conv1d(x, ww, b, **kw))
    w5 = torch.randn(5, 4, 2, generator=g)
    close(ct.conv1d(x[0], w5, None), F.conv1d(x[0], w5, None))  # unbatched (C, L)


def test_conv_transpose_matches_torch_including_output_padding_past_the_stride():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(2, 4, 5, 6, generator=g)
    w = torch.randn(4, 3, 3, 2, generator=g)
    b = torch.randn(6, generator=g)
    for kw in [{}, {"stride": 2, "padding": 1, "output_padding": 1}, {"groups": 2},
               {"stride": (3, 2), "padding": (1, 0), "output_padding": (2, 1), "dilation": (4, 2), "groups": 2}]:
        groups = kw.get("groups", 1)
        ww = w if groups == 2 else torch.randn(4, 3, 3, 2, generator=g)
        close(ct.conv_transpose2d(x, ww, b if groups == 2 else torch.zeros(3), **kw),
              F.conv_transpose2d(x, ww, b if groups == 2 else torch.zeros(3), **kw))
    x1, w1 = torch.randn(2, 4, 7, generator=g), torch.randn(4, 3, 3, generator=g)
    close(ct.conv_transpose1d(x1, w1, None, stride=3, padding=2, output_padding=1, dilation=2),
          F.conv_transpose1d(x1, w1, None, stride=3, padding=2, output_padding=1, dilation=2))
    close(ct.conv_transpose1d(x1[0], w1), F.conv_transpose1d(x1[0], w1))  # unbatched
    # bfloat16: the bias joins before the one rounding, as torch's
    xb, wb, bb = x.bfloat16(), w.bfloat16(), b.bfloat16()
    close(ct.conv_transpose2d(xb, wb, bb, groups=2), F.conv_transpose2d(xb, wb, bb, groups=2), rtol=1.6e-2, atol=1e-2)
    with pytest.raises(ValueError, match="output_padding"):
        ct.conv_transpose2d(x, w, stride=2, output_padding=2)


def test_pool1d_glu_topk():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(2, 3, 10, generator=g)
    close(ct.max_pool1d(x, 3), F.max_pool1d(x, 3))
    close(ct.max_pool1d(x, 3, 2, 1, 2, True, True), F.max_pool1d(x, 3, 2, 1, 2, True, True))
    close(ct.avg_pool1d(x, 4, 3, 2, count_include_pad=False), F.avg_pool1d(x, 4, 3, 2, count_include_pad=False))
    close(ct.avg_pool1d(x[0], 2), F.avg_pool1d(x[0], 2))
    close(ct.glu(x, 2), F.glu(x, 2))
    close(ct.glu(x.transpose(1, 2), 1), F.glu(x.transpose(1, 2), 1))
    with pytest.raises(ValueError, match="not even"):
        ct.glu(x, 1)
    t = torch.randn(4, 9, generator=g)
    t[1, 3] = float("nan")
    for k, dim, largest in [(3, -1, True), (9, 1, False), (2, 0, True), (0, 1, True), (4, 0, False)]:
        v, i = ct.topk(t, k, dim, largest)
        vw, iw = torch.topk(t, k, dim, largest)
        torch.testing.assert_close(torch.from_dlpack(v), vw, equal_nan=True)
        torch.testing.assert_close(t.gather(dim, torch.from_dlpack(i)), vw, equal_nan=True)
    with pytest.raises(ValueError, match="k=10 is outside"):
        ct.topk(t, 10)
