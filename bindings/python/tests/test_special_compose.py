"""The special functions (Bessel, Airy, orthogonal polynomials, zeta, polygamma, igamma) against PyTorch and mpmath, and
the composed functions (fill, float_power, isclose, nan_to_num, rrelu, rms_norm, group_norm, instance_norm, the
adaptive poolings, scaled_dot_product_attention) against PyTorch."""
import math

import numpy as np
import pytest

import ctensor as ct

torch = pytest.importorskip("torch")
F = torch.nn.functional


def close(got, want, **kw):
    g = torch.from_dlpack(got)
    assert g.shape == want.shape and g.dtype == want.dtype
    torch.testing.assert_close(g, want, **({"rtol": 1e-5, "atol": 1e-5} | kw))


UNARY = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "i0e", "i1e", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1"]


def _mp_bessel(name, x):
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    kind = {"bessel_j": mpmath.besselj, "bessel_y": mpmath.bessely, "modified_bessel_i": mpmath.besseli,
            "i": mpmath.besseli, "modified_bessel_k": mpmath.besselk, "scaled_modified_bessel_k": mpmath.besselk}
    base, nu = name[:-1].rstrip("e") if name in ("i0e", "i1e") else name[:-1], int(name[-1] if name[-1] != "e" else
                                                                                   name[-2])
    if name in ("i0e", "i1e"):
        base = "i"
    if base in ("bessel_y", "modified_bessel_k", "scaled_modified_bessel_k") and x < 0:
        return math.nan
    v = kind[base](nu, x)
    if name in ("i0e", "i1e"):
        v *= mpmath.exp(-abs(x))
    if base == "scaled_modified_bessel_k":
        v *= mpmath.exp(x)
    return float(v)


@pytest.mark.parametrize("name", UNARY)
def test_bessel_functions_float64_match_mpmath(name):
    # torch.special's float64 Bessel functions are Cephes' fits, some good to ~1e-6 only (bessel_j0(5.0288) is off
    # by 3.6e-7): the reference here is mpmath; the error is relative, or absolute next to a zero
    xs = [0.001, 0.3, 1.0, 1.99, 2.0, 2.01, 3.7, 5.0288, 8.4, 11.9, 12.1, 19.5, 24.9, 25.1, 33.3, 60.0, 750.5, -0.7,
          -4.4, -26.0]
    got = np.asarray(getattr(ct, name)(np.array(xs)))
    for x, g in zip(xs, got):
        w = _mp_bessel(name, x)
        if math.isnan(w):
            assert math.isnan(g), (name, x, g)
        else:
            assert g == w or abs(g - w) <= 5e-14 * max(abs(w), 1e-2), (name, x, g, w)


@pytest.mark.parametrize("name", UNARY)
def test_bessel_functions_float32_match_torch_special(name):
    x = torch.cat([torch.linspace(0.01, 40, 997), -torch.linspace(0.01, 40, 13)])
    want = getattr(torch.special, name)(x)
    got = torch.from_dlpack(getattr(ct, name)(x))
    assert got.dtype == torch.float32
    # torch's float32 kernels run in float32 (Cephes' float fits); ctensor computes in double and rounds once
    torch.testing.assert_close(got, want, equal_nan=True, rtol=2e-5, atol=5e-6)


def test_bessel_aliases_and_limits():
    assert ct.i0 is not None and ct.i1 is not None and ct.gammainc is not None and ct.gammaincc is not None
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    np.testing.assert_array_equal(np.asarray(ct.bessel_j0(x)), [1, 1, 0, 0, np.nan])
    np.testing.assert_array_equal(np.asarray(ct.bessel_y0(x)), [-np.inf, -np.inf, 0, np.nan, np.nan])
    np.testing.assert_array_equal(np.asarray(ct.modified_bessel_k1(x)), [np.inf, np.inf, 0, np.nan, np.nan])
    np.testing.assert_array_equal(np.asarray(ct.i0e(x)), [1, 1, 0, 0, np.nan])


def test_airy_ai_matches_mpmath_in_float64_and_torch_in_float32():
    # float64 against mpmath (relative to the amplitude, |x|^-1/4 / 2, where Ai oscillates): torch's own float64
    # (Cephes) is off by up to 7e-5 relative near x = -2.3, where its fits meet
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    xs = np.concatenate([np.linspace(-30, 30, 241), [-1e3, -8.0000001, -7.9999999, 7.9999999, 8.0000001, 60.0, 104.0]])
    got = np.asarray(ct.airy_ai(xs))
    for x, g in zip(xs, got):
        w = float(mpmath.airyai(float(x)))
        scale = 0.5 * abs(x) ** -0.25 if x < -1 else abs(w)
        assert abs(g - w) <= (5e-12 if abs(x) > 8 else 2e-14) * scale, (x, g, w)
    np.testing.assert_array_equal(np.asarray(ct.airy_ai(np.array([np.inf, -np.inf, np.nan]))), [0, 0, np.nan])
    # float32: computed in double and rounded once; torch's float32 kernel runs Cephes in float
    x = torch.linspace(-40, 25, 1301)
    torch.testing.assert_close(torch.from_dlpack(ct.airy_ai(x)), torch.special.airy_ai(x), rtol=2e-5, atol=5e-6)


POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
        "legendre_polynomial_p"]


@pytest.mark.parametrize("name", POLY)
def test_polynomials_match_torch_special_including_degree_conventions(name):
    g = torch.Generator().manual_seed(3)
    x = torch.cat([torch.rand(400, generator=g, dtype=torch.float64) * 2.4 - 1.2,
                   torch.tensor([1.0, -1.0, 0.0, 0.5, float("nan")], dtype=torch.float64)])
    n = torch.cat([torch.randint(-2, 13, (400,), generator=g).double() + 0.25 * (torch.rand(400, generator=g) > 0.5),
                   torch.tensor([3.0, 4.0, 0.0, -0.5, 0.0], dtype=torch.float64)])
    want = getattr(torch.special, name)(x, n)
    close(getattr(ct, name)(x, n), want, rtol=1e-10, atol=1e-10, equal_nan=True)
    # broadcasting: a row of x against a column of degrees
    close(getattr(ct, name)(x[:7], n[:5, None]), getattr(torch.special, name)(x[:7], n[:5, None]), rtol=1e-10,
          atol=1e-10, equal_nan=True)


def test_zeta_igamma_polygamma_mvlgamma_match_torch():
    g = torch.Generator().manual_seed(5)
    s = torch.rand(300, generator=g, dtype=torch.float64) * 6 + 1.05
    q = torch.rand(300, generator=g, dtype=torch.float64) * 10 - 4.5
    s[::3] = torch.round(s[::3])  # integer s: negative q allowed
    close(ct.zeta(s, q), torch.special.zeta(s, q), rtol=1e-10, atol=1e-12, equal_nan=True)
    a = torch.rand(300, generator=g, dtype=torch.float64) * 30
    x = torch.rand(300, generator=g, dtype=torch.float64) * 40
    # torch's own float64 igamma is within ~2e-9 where it switches to Temme's expansion (a > 20, x near a)
    close(ct.igamma(a, x), torch.igamma(a, x), rtol=5e-9, atol=1e-13)
    close(ct.igammac(a, x), torch.igammac(a, x), rtol=5e-9, atol=1e-13)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 40
    pts = [(29.868179690825638, 20.941779284908954), (0.5, 0.01), (3.0, 40.0), (150.0, 140.0), (2.5, 1.5),
           # small a below x = 1.1, where Q = 1 - P would cancel
           (1e-30, 0.0442), (1e-8, 0.5), (1e-3, 0.3), (0.1, 1.05), (0.24, 0.9), (1.2, 1.1), (1e-12, 1e-6)]
    got_p = np.asarray(ct.igamma(np.array([p[0] for p in pts]), np.array([p[1] for p in pts])))
    got_q = np.asarray(ct.igammac(np.array([p[0] for p in pts]), np.array([p[1] for p in pts])))
    for (av, xv), gp, gq in zip(pts, got_p, got_q):
        wp = float(mpmath.gammainc(av, 0, xv, regularized=True))
        wq = float(mpmath.gammainc(av, xv, mpmath.inf, regularized=True))
        assert abs(gp - wp) <= 1e-13 * wp and abs(gq - wq) <= 1e-13 * wq, (av, xv, gp, wp, gq, wq)
    y = torch.rand(50, generator=g, dtype=torch.float64) * 9 + 0.05
    for n in range(5):  # torch's trigamma (n = 1) is within 5e-10 (mpmath), the others within 1e-15
        close(ct.polygamma(y, n), torch.polygamma(n, y), rtol=1e-9 if n == 1 else 1e-12, atol=1e-12)
    for p in (1, 3, 5):
        z = y + (p - 1) / 2 + 0.01
        close(ct.mvlgamma(z, p), torch.mvlgamma(z, p), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="polygamma: n=1.5"):
        ct.polygamma(y, 1.5)
    with pytest.raises(ValueError, match="mvlgamma: p=0"):
        ct.mvlgamma(y, 0)


def test_composed_elementwise_functions():
    a = torch.tensor([1.0, math.inf, math.nan, 1e-9, 2.0, -math.inf])
    b = torch.tensor([1.0, math.inf, math.nan, 0.0, 2.00001, math.inf])
    for kw in [{}, {"equal_nan": True}, {"rtol": 0, "atol": 0}, {"rtol": 1e-7, "atol": 1e-7}]:
        close(ct.isclose(a, b, **kw), torch.isclose(a, b, **kw))
    close(ct.isclose(torch.arange(5), torch.tensor([0, 1, 3, 3, 5])), torch.isclose(torch.arange(5),
                                                                                torch.tensor([0, 1, 3, 3, 5])))
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        v = (a * torch.tensor([1, 1, 1, 1, -1, 1.0])).to(dt)
        close(ct.nan_to_num(v), torch.nan_to_num(v))
        close(ct.nan_to_num(v, nan=2.5, posinf=7.0, neginf=-7.0), torch.nan_to_num(v, nan=2.5, posinf=7.0, neginf=-7.0))
    close(ct.nan_to_num(torch.arange(4)), torch.arange(4))
    i = torch.arange(-3, 4, dtype=torch.int32)
    close(ct.float_power(i, 2.5), torch.float_power(i, 2.5), equal_nan=True)
    close(ct.float_power(a.float(), i[:6]), torch.float_power(a.float(), i[:6]), equal_nan=True)
    close(ct.fill(i, 3), torch.fill(i, 3))
    close(ct.fill(a, True), torch.fill(a, True))
    x = torch.randn(4, 5)
    close(ct.rrelu(x, 0.1, 0.3), F.rrelu(x, 0.1, 0.3, training=False))
    with pytest.raises(NotImplementedError, match="random"):
        ct.rrelu(x, training=True)


def test_norms_match_torch():
    g = torch.Generator().manual_seed(7)
    x = torch.randn(3, 6, 5, 4, generator=g)
    w, b = torch.randn(6, generator=g), torch.randn(6, generator=g)
    close(ct.rms_norm(x, [5, 4]), F.rms_norm(x, [5, 4]))
    wl = torch.randn(4, generator=g)
    close(ct.rms_norm(x, [4], wl, 1e-3), F.rms_norm(x, [4], wl, 1e-3))
    xh = x.to(torch.bfloat16)
    close(ct.rms_norm(xh, [4]), F.rms_norm(xh, [4]), rtol=2e-2, atol=2e-2)
    for groups in (1, 2, 3, 6):
        close(ct.group_norm(x, groups, w, b), F.group_norm(x, groups, w, b))
    close(ct.group_norm(x[:, :, 0], 3), F.group_norm(x[:, :, 0], 3))  # (N, C, L), no affine
    rm, rv = torch.randn(6, generator=g), torch.rand(6, generator=g) + 0.5
    rm2, rv2 = rm.clone(), rv.clone()
    close(ct.instance_norm(x, rm, rv, w, b), F.instance_norm(x, rm2, rv2, w, b))
    torch.testing.assert_close(rm, rm2)
    torch.testing.assert_close(rv, rv2)
    close(ct.instance_norm(x, rm, rv, use_input_stats=False), F.instance_norm(x, rm, rv, use_input_stats=False))
    with pytest.raises(ValueError, match="num_groups=4"):
        ct.group_norm(x, 4)


def test_adaptive_pools_match_torch_with_uneven_windows():
    g = torch.Generator().manual_seed(11)
    for k, shape, sizes in [(1, (2, 3, 17), [1, 5, 17, 20]), (2, (2, 3, 7, 9), [(3, 4), (7, 9), (1, 1), (None, 2)]),
                            (3, (2, 2, 5, 6, 7), [(2, 3, 4), (5, 1, None)])]:
        x = torch.randn(*shape, generator=g)
        x[0, 0].view(-1)[3] = math.nan
        for o in sizes:
            avg, mx = getattr(F, f"adaptive_avg_pool{k}d"), getattr(F, f"adaptive_max_pool{k}d")
            close(getattr(ct, f"adaptive_avg_pool{k}d")(x, o), avg(x, o), equal_nan=True)
            close(getattr(ct, f"adaptive_max_pool{k}d")(x, o), mx(x, o), equal_nan=True)
            close(getattr(ct, f"adaptive_avg_pool{k}d")(x[0], o), avg(x[0], o), equal_nan=True)  # unbatched
    with pytest.raises(NotImplementedError, match="return_indices"):
        ct.adaptive_max_pool2d(torch.randn(1, 1, 4, 4), 2, return_indices=True)


def test_scaled_dot_product_attention_matches_torch():
    g = torch.Generator().manual_seed(13)
    q, k, v = (torch.randn(2, 4, 9, 8, generator=g), torch.randn(2, 4, 11, 8, generator=g),
               torch.randn(2, 4, 11, 5, generator=g))
    close(ct.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v))
    close(ct.scaled_dot_product_attention(q, k, v, scale=0.3), F.scaled_dot_product_attention(q, k, v, scale=0.3))
    close(ct.scaled_dot_product_attention(q, k, v, is_causal=True), F.scaled_dot_product_attention(q, k, v,
                                                                                                  is_causal=True))
    m = torch.rand(9, 11, generator=g) > 0.3
    m[:, 0] = True
    close(ct.scaled_dot_product_attention(q, k, v, attn_mask=m), F.scaled_dot_product_attention(q, k, v, attn_mask=m))
    fm = torch.randn(2, 1, 9, 11, generator=g)
    close(ct.scaled_dot_product_attention(q, k, v, attn_mask=fm), F.scaled_dot_product_attention(q, k, v,
                                                                                                attn_mask=fm))
    k2, v2 = k[:, :2], v[:, :2]
    close(ct.scaled_dot_product_attention(q, k2, v2, enable_gqa=True),
          F.scaled_dot_product_attention(q, k2, v2, enable_gqa=True))
    with pytest.raises(ValueError, match="heads"):
        ct.scaled_dot_product_attention(q, k2, v2)
    with pytest.raises(NotImplementedError, match="dropout_p"):
        ct.scaled_dot_product_attention(q, k, v, dropout_p=0.1)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_over_several_blocks_of_heads_matches_torch(causal):
    # 600 x 700 scores: a few heads per block of the composition's scores buffer, the last block partial; q, k
    # and v as non-contiguous views (k transposed in memory), unbatched, and a 2-d mask
    g = torch.Generator().manual_seed(14)
    q, k, v = (torch.randn(5, 600, 16, generator=g), torch.randn(5, 16, 700, generator=g).mT,
               torch.randn(5, 700, 8, generator=g))
    close(ct.scaled_dot_product_attention(q, k, v, is_causal=causal),
          F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    close(ct.scaled_dot_product_attention(q[0], k[0], v[0], is_causal=causal),
          F.scaled_dot_product_attention(q[0], k[0], v[0], is_causal=causal))
    if not causal:
        m = torch.randn(600, 700, generator=g)
        close(ct.scaled_dot_product_attention(q, k, v, attn_mask=m), F.scaled_dot_product_attention(q, k, v,
                                                                                                  attn_mask=m))


@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_fused_attention_op_matches_torch_and_is_the_one_called(dt):
    # the registry op itself (ct_scaled_dot_product_attention): on the CPU the Python function is that op; rows whose every key is masked give 0 as torch's CPU kernels do; a float16 call (no oneDNN kernel
    # here) still answers, through the composition
    from ctensor import _nn
    tdt = getattr(torch, dt)
    g = torch.Generator().manual_seed(21)
    q, k, v = (torch.randn(2, 3, 130, 16, generator=g).to(tdt), torch.randn(2, 3, 140, 16, generator=g).to(tdt),
               torch.randn(2, 3, 140, 8, generator=g).to(tdt))
    tol = dict(rtol=2e-2, atol=2e-2) if dt == "bfloat16" else {}
    for causal in (False, True):
        y = ct.scaled_dot_product_attention(q, k, v, is_causal=causal)
        (direct,) = _nn._run("scaled_dot_product_attention", [q, k, v, None], [True], {"causal": int(causal)})
        assert torch.equal(torch.from_dlpack(y), torch.from_dlpack(direct))  # the function is the op
        want = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
        torch.testing.assert_close(torch.from_dlpack(y).float(), want, **tol)
    m = torch.rand(130, 140, generator=g) > 0.5
    m[7] = False  # no key left: 0
    got = torch.from_dlpack(ct.scaled_dot_product_attention(q, k, v, attn_mask=m)).float()
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, attn_mask=m).float(), **tol)
    assert bool((got[:, :, 7] == 0).all())
    fm = torch.randn(3, 1, 140, generator=g).to(tdt)
    got = torch.from_dlpack(ct.scaled_dot_product_attention(q, k, v, attn_mask=fm)).float()
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, attn_mask=fm).float(), **tol)
    q16 = q[:, :, :9].to(torch.float16)  # no float16 kernel in oneDNN 2.6: the composition answers
    torch.testing.assert_close(torch.from_dlpack(ct.scaled_dot_product_attention(q16, q16, q16)).float(),
                               F.scaled_dot_product_attention(q16, q16, q16).float(), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "float32", "float64"])
def test_frexp_matches_numpy_and_torch_including_edges_and_subnormals(dt):
    tdt = getattr(torch, dt)
    fi = torch.finfo(tdt)
    edges = [0.0, -0.0, 1.0, -1.0, 0.5, 3.0, fi.max, -fi.max, fi.tiny, fi.tiny / 4, math.inf, -math.inf, math.nan]
    rng = np.random.default_rng(7)
    wide = rng.standard_normal(5000) * np.exp(rng.standard_normal(5000) * 12)
    x = torch.cat([torch.tensor(edges, dtype=torch.float64).to(tdt), torch.from_numpy(wide).to(tdt)])
    # just below powers of two, where log2 rounds up to the integer
    p2 = torch.tensor([2.0, 4.0, 1024.0, 0.5], dtype=tdt)
    x = torch.cat([x, torch.nextafter(p2, torch.zeros_like(p2))])
    m, e = ct.frexp(x)
    wm, we = torch.frexp(x)
    assert torch.equal(torch.from_dlpack(e), we)
    assert torch.equal(torch.from_dlpack(m).isnan(), wm.isnan())
    assert torch.equal(torch.from_dlpack(m).nan_to_num(), wm.nan_to_num())
    with pytest.raises(TypeError, match="frexp"):
        ct.frexp(np.arange(3))


@pytest.mark.parametrize("case", ["plain", "causal", "bool_mask", "float_mask_batched", "gqa", "broadcast_kv",
                                  "unbatched", "scale", "bfloat16", "blocks"])
def test_attention_backward_matches_torch_autograd(case):
    g = torch.Generator().manual_seed(15)
    B, H, L, S, E, Ev = 2, 4, 9, 11, 8, 5
    if case == "blocks":
        B, H, L, S = 1, 5, 600, 700
    shp = {"q": (B, H, L, E), "k": (B, H, S, E), "v": (B, H, S, Ev)}
    if case == "gqa":
        shp["k"], shp["v"] = (B, 2, S, E), (B, 2, S, Ev)
    if case == "broadcast_kv":
        shp["k"], shp["v"] = (1, H, S, E), (1, H, S, Ev)
    if case == "unbatched":
        shp = {"q": (L, E), "k": (S, E), "v": (S, Ev)}
    q, k, v = (torch.randn(*shp[n], generator=g, requires_grad=True) for n in "qkv")
    kw = {}
    if case == "causal":
        kw["is_causal"] = True
    if case == "bool_mask":
        m = torch.rand(L, S, generator=g) > 0.3
        m[:, 0] = True
        kw["attn_mask"] = m
    if case == "float_mask_batched":
        kw["attn_mask"] = torch.randn(B, 1, L, S, generator=g)
    if case == "gqa":
        kw["enable_gqa"] = True
    if case == "scale":
        kw["scale"] = 0.37
    tq, tk, tv = q, k, v
    if case == "bfloat16":
        tq, tk, tv = (t.detach().bfloat16().requires_grad_() for t in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, **kw)
    do = torch.randn(out.shape, generator=g).to(out.dtype)
    out.backward(do)
    got = ct.scaled_dot_product_attention_backward(do, tq.detach(), tk.detach(), tv.detach(), **kw)
    for name, a, want in zip("qkv", got, (tq.grad, tk.grad, tv.grad)):
        t = torch.from_dlpack(a)
        assert t.shape == want.shape and t.dtype == want.dtype, name
        tol = 2e-2 if case == "bfloat16" else 1e-5
        torch.testing.assert_close(t.float(), want.float(), rtol=tol, atol=tol * (1 + float(want.abs().max())))


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("affine", [False, True])
def test_norm_backwards_match_torch_autograd(dt, affine):
    g = torch.Generator().manual_seed(16)
    tdt = getattr(torch, dt)
    tol = 2e-2 if dt == "bfloat16" else 1e-5

    def check(got, want):
        for a, w in zip(got, want):
            if w is None:
                continue
            t = torch.from_dlpack(a)
            assert t.shape == w.shape and t.dtype == w.dtype
            torch.testing.assert_close(t.float(), w.float(), rtol=tol, atol=tol * (1 + float(w.abs().max())))

    # rms_norm over the last two dims
    x = torch.randn(3, 4, 5, 6, generator=g).to(tdt).requires_grad_()
    w = torch.randn(5, 6, generator=g).to(tdt).requires_grad_() if affine else None
    y = F.rms_norm(x, [5, 6], w, eps=1e-5)
    dy = torch.randn(y.shape, generator=g).to(tdt)
    y.backward(dy)
    dx, dw = ct.rms_norm_backward(dy, x.detach(), [5, 6], None if w is None else w.detach(), eps=1e-5)
    check((dx,) + ((dw,) if affine else ()), (x.grad,) + ((w.grad,) if affine else ()))
    assert (dw is None) == (not affine)
    # group_norm with 2 groups of 3 channels, and instance_norm's case (one channel per group)
    if dt == "float64":  # layer_norm, which group_norm runs on, is float32 and the half types
        with pytest.raises(NotImplementedError, match="layer_norm"):
            ct.group_norm_backward(torch.ones(2, 6, 3), torch.ones(2, 6, 3, dtype=torch.float64), 2)
        return
    for groups in (2, 6):
        x = torch.randn(2, 6, 4, 5, generator=g).to(tdt).requires_grad_()
        w = torch.randn(6, generator=g).to(tdt).requires_grad_() if affine else None
        b = torch.randn(6, generator=g).to(tdt).requires_grad_() if affine else None
        y = F.group_norm(x.float() if dt == "bfloat16" else x, groups, None if w is None else
                         (w.float() if dt == "bfloat16" else w), None if b is None else
                         (b.float() if dt == "bfloat16" else b), eps=1e-5)
        dy = torch.randn(y.shape, generator=g).to(tdt)
        y.backward(dy.to(y.dtype))
        dx, dw, db = ct.group_norm_backward(dy, x.detach(), groups, None if w is None else w.detach(), eps=1e-5)
        want = (x.grad,) + ((w.grad, b.grad) if affine else ())
        check((dx,) + ((dw, db) if affine else ()), want)
        if not affine:
            want_db = dy.float().sum((0, 2, 3)).to(tdt)
            torch.testing.assert_close(torch.from_dlpack(db).float(), want_db.float(), rtol=tol, atol=tol * 10)
