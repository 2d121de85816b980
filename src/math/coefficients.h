// coefficients.h — the coefficients of the float32 function approximations
// every backend computes with: the CPU's Highway kernels
// (src/cpu/exp_math-inl.h, elementwise.cc) and the GPU modules' generated
// source (OpenCL and CUDA alike: src/gpu/math.cc prints them into it), so
// each fit is written once. Data only: no code, no dependency on a backend.
// Polynomials are highest degree first (Horner order) unless said.
#ifndef CTENSOR_SRC_MATH_COEFFICIENTS_H_
#define CTENSOR_SRC_MATH_COEFFICIENTS_H_

namespace ct {
namespace math {

// e^r - 1 = r + r^2 P(r) for |r| <= ln2/2: Cephes' expf polynomial before
// its 1 is added (relative accuracy kept near 0).
inline constexpr float kExpM1[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                    4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// tanh(x) = x + x^3 P(x^2) on [0, 0.625]: least-squares fit of
// (tanh(x) - x) / x^3 in x^2 (relative weights, Chebyshev nodes); <= 0.77
// ulp in float32 there.
inline constexpr float kTanhSmall[6] = {0.0021489840000867844f, -0.008184662088751793f, 0.021703999489545822f,
                                        -0.05394745245575905f,  0.13333211839199066f,   -0.3333333134651184f};

// tan(r) = r + r^3 P(r^2) for |r| <= pi/4: P of degree 6, 1.9e-9 relative
// (least squares in r^2 at Chebyshev nodes against mpmath, each coefficient
// rounded to float32 and the rest refitted: tools/fits/tan_f32.py). The
// CPU's float32 tan (one reduction, one polynomial, no sin / cos pair).
inline constexpr float kTanF32[7] = {0.004360605962574482f, 0.00012191140558570623f, 0.010809898376464844f,
                                     0.021292243152856827f, 0.05405799299478531f,    0.13332679867744446f,
                                     0.33333349227905273f};

// log(m) = f - f^2/2 + f^3 P(f), f = m - 1 for m in [sqrt(1/2), sqrt(2)):
// P of degree 7, 7.5e-9 relative of log1p(f) (least squares at Chebyshev
// nodes against mpmath, each coefficient rounded to float32 and the rest
// refitted: tools/fits/log_f32.py). The CPU's float32 log: no divide.
inline constexpr float kLogF32[8] = {-0.07362867891788483f, 0.1262032687664032f, -0.13202103972434998f,
                                     0.14227114617824554f,  -0.16621370613574982f, 0.19999827444553375f,
                                     -0.2500085234642029f,  0.3333335518836975f};

// log1p(e) = e + e^2 R(e) for e in (0, 1] (softplus): R a degree-9 fit of
// (log1p(e) - e) / e^2, 1.3e-7 relative evaluated in float32 (least squares
// at Chebyshev nodes, Lawson's iteration, against mpmath).
inline constexpr float kSoftplusR[10] = {0.00283581717f, -0.0173399933f, 0.0496061705f, -0.0916986167f,
                                         0.130516559f,   -0.163716301f,  0.199580029f,  -0.249968901f,
                                         0.333332419f,   -0.5f};

// erfcx(z) = 2 t Q(t), t = 1 / (1 + z/2), z in [0, 10.47]: Q of degree 9,
// 3e-8 relative (weighted least squares at 2500 Chebyshev nodes, Lawson's
// iteration, against mpmath's erfc at 40 digits; each coefficient rounded
// to float32 and the rest refitted). kErfcQ[k] is t^k's coefficient: the
// backends evaluate it by Estrin's scheme.
inline constexpr float kErfcQ[10] = {0.141033813f,  0.141395539f, 0.119616747f, 0.111310422f, -0.044706665f,
                                     0.201964021f,  -0.324179024f, 0.206073806f, -0.057958845f, 0.00545017142f};

// erf(x) = x + x q(x^2) near 0: erf's Taylor series, sum (-1)^n x^(2n+1) / (n! (2n+1)),
// with 2/sqrt(pi) folded into q's coefficients and q's constant 2/sqrt(pi) - 1,
// so the one FMA at the end rounds once; ten terms are within 0.3 ulp up to
// |x| = 1.
inline constexpr double k2SqrtPi = 1.1283791670955126;
inline constexpr float kErfTaylor[10] = {
    float(-1.0 / 6894720 * k2SqrtPi), float(1.0 / 685440 * k2SqrtPi), float(-1.0 / 75600 * k2SqrtPi),
    float(1.0 / 9360 * k2SqrtPi),     float(-1.0 / 1320 * k2SqrtPi),  float(1.0 / 216 * k2SqrtPi),
    float(-1.0 / 42 * k2SqrtPi),      float(1.0 / 10 * k2SqrtPi),     float(-1.0 / 3 * k2SqrtPi),
    float(k2SqrtPi - 1)};

// The CPU's float32 erf fits on the ranges erf itself needs (fitted as
// kErfcQ: relative least squares at Chebyshev nodes against mpmath at 40
// digits, each coefficient rounded to float32 and the rest refitted), the
// highest power first: 7 coefficients each where kErfTaylor and kErfcQ
// have 10. kErfSmall: q(w), erf(x) = x + x q(x^2) for |x| < 1 (w in [0, 1];
// 1.5e-9 of erf(x) / x). kErfcQNear: Q(t) for t in [1/3, 2/3] (z in [1, 4],
// where erf is 1 - erfc; 6.6e-9 relative).
inline constexpr float kErfSmall[7] = {7.842288323445246e-05f, -0.0008006793214008212f, 0.005187962669879198f,
                                       -0.026853643357753754f, 0.1128358244895935f,     -0.3761262595653534f,
                                       0.12837916612625122f};
inline constexpr float kErfcQNear[7] = {0.046672083f, -0.19056112f, 0.21539965f, 0.0017899892f,
                                        0.14813352f,  0.1372039f,   0.1412999f};

// tanh(|x|) on 32 intervals of |x| picked by its bits ((bits(|x|) -
// bits(1/16)) >> 21: interval 0 is [0, 1/16 * 1.25), then each binade from
// 1/16 to 8 in quarters; 29-31, [10, 16), are the constant 1, tanh rounding
// to 1 from 9.011). Row 0 is each interval's midpoint, rows 1-6 the
// coefficients c0..c5 of tanh(|x|) = sum c_k (|x| - mid)^k there (lowest
// first). Fitted by tools/fits/tanh_table.py (relative error <= 4.8e-8
// before float32 evaluation; interval 0 has c0 = 0 and c1 = 1 exactly).
alignas(64) inline constexpr float kTanhTable[7][32] = {
    {// mid
      0.0f, 0.0859375f, 0.1015625f, 0.1171875f, 0.140625f, 0.171875f, 0.203125f, 0.234375f, 0.28125f, 0.34375f,
      0.40625f, 0.46875f, 0.5625f, 0.6875f, 0.8125f, 0.9375f, 1.125f, 1.375f, 1.625f, 1.875f, 2.25f, 2.75f,
      3.25f, 3.75f, 4.5f, 5.5f, 6.5f, 7.5f, 9.0f, 0.0f, 0.0f, 0.0f,},
    {// c0
      0.0f, 0.0857265666f, 0.101214729f, 0.116653986f, 0.1397053f, 0.170202315f, 0.200376719f, 0.230175704f,
      0.27406159f, 0.330821127f, 0.385283977f, 0.437188774f, 0.509829998f, 0.596373558f, 0.670967102f,
      0.734071493f, 0.809301078f, 0.879826725f, 0.925346196f, 0.954045236f, 0.978026092f, 0.991859734f,
      0.996997654f, 0.998894453f, 0.999753237f, 0.999966621f, 0.99999547f, 0.999999404f, 0.99999994f, 1.0f,
      1.0f, 1.0f,},
    {// c1
      1.0f, 0.992650986f, 0.989755571f, 0.986391842f, 0.980482399f, 0.971031189f, 0.959849179f, 0.9470191f,
      0.92489028f, 0.890557408f, 0.851556301f, 0.808865964f, 0.740073442f, 0.644338608f, 0.549803197f,
      0.461138994f, 0.345031768f, 0.225904986f, 0.143734366f, 0.0897976384f, 0.0434649177f, 0.0162142869f,
      0.00599571504f, 0.00220989226f, 0.000493518601f, 6.68045686e-05f, 9.04127683e-06f, 1.22360848e-06f,
      6.09197812e-08f, 0.0f, 0.0f, 0.0f,},
    {// c2
      3.0022985e-08f, -0.0851310641f, -0.0999431312f, -0.114757776f, -0.13689813f, -0.165479481f, -0.1923545f,
      -0.217746615f, -0.253488719f, -0.294689298f, -0.328175694f, -0.353540182f, -0.377360165f, -0.384271562f,
      -0.36895591f, -0.338455886f, -0.279240638f, -0.198771045f, -0.13298966f, -0.0856589824f, -0.0425057225f,
      -0.0160822403f, -0.00597959803f, -0.00220855442f, -0.000493388507f, -6.74665498e-05f, -8.7356475e-06f,
      -1.71773036e-06f, 1.69872322e-07f, 0.0f, 0.0f, 0.0f,},
    {// c3
      -0.333336771f, -0.323988169f, -0.317483813f, -0.312763423f, -0.307126105f, -0.296732664f, -0.281521499f,
      -0.264535576f, -0.23886849f, -0.199587166f, -0.157631263f, -0.114859305f, -0.054397583f, 0.0143810604f,
      0.0642058328f, 0.0948102549f, 0.110972635f, 0.0995675772f, 0.0751660243f, 0.0518027693f, 0.0270877089f,
      0.0105463052f, 0.00396104623f, 0.00146832003f, 0.000328492199f, 4.45031001e-05f, 6.02385444e-06f,
      8.15239559e-07f, 4.01938145e-08f, 0.0f, 0.0f, 0.0f,},
    {// c4
      0.000116262658f, 0.619407475f, -3.76592588f, -4.96548414f, -0.239749372f, 0.953170121f, 0.214623943f,
      -0.822008669f, 0.161937445f, 0.23969689f, 0.256393075f, 0.0793875232f, 0.165704831f, 0.120756939f,
      0.0941871256f, 0.0297844391f, 0.00394230196f, -0.0202996936f, -0.0260705687f, -0.0216211434f,
      -0.012433256f, -0.00513501f, -0.00194189209f, -0.000719281787f, -0.000169791048f, -2.03721065e-05f,
      -4.33410469e-06f, 1.5476644e-06f, -2.53187295e-07f, 0.0f, 0.0f, 0.0f,},
    {// c5
      0.132017821f, 6.64794636f, -37.3481674f, -42.5048103f, -2.19288278f, 4.93938971f, 0.542008758f,
      -3.85388255f, 0.0998942703f, 0.23562783f, 0.197093874f, -0.181311011f, -0.0254027247f, -0.0601697639f,
      -0.0509606451f, -0.0616070516f, -0.0319038481f, -0.0092870947f, 0.00125757954f, 0.00453252532f,
      0.0039770822f, 0.00191482552f, 0.000769951846f, 0.000292343873f, 6.82065001e-05f, 9.23272091e-06f,
      1.24885253e-06f, 1.69077964e-07f, 9.36052125e-09f, 0.0f, 0.0f, 0.0f,},
};

// Hankel's P and Q for the Bessel functions of order nu = 0, 1 from x >= 8
// (A&S 9.2.5): J_nu = sqrt(2/(pi x)) (P cos w - Q sin w), Y_nu = sqrt(2/(pi
// x)) (P sin w + Q cos w), w = x - (2 nu + 1) pi/4, with P = 1 +
// kBesselP[nu](u), Q = kBesselQ[nu](u) / x, u = 64 / x^2 in (0, 1]:
// degree-10 least-squares fits at Chebyshev nodes against mpmath
// (tools/fits/bessel_pq.py), within 1.3e-16 (P) and 1.1e-15 (x Q) absolute.
// Double: the CPU evaluates float32 J and Y in float64 lanes.
inline constexpr double kBesselP[2][11] = {
    {3.538285051806637e-10, -2.433536138609633e-09, 8.166938520577115e-09, -1.9225945143258115e-08,
     4.095447548311926e-08, -1.0150954647999426e-07, 3.6185874933275494e-07, -2.183898591354363e-06,
     2.7380882427038547e-05, -0.001098632812469821, -1.199127602768968e-16},
    {-3.786124147784719e-10, 2.607738891444335e-09, -8.773727561968049e-09, 2.075202085890535e-08,
     -4.459581245888111e-08, 1.1223475578350293e-07, -4.101192505868049e-07, 2.580973531299277e-06,
     -3.52039919718603e-05, 0.0018310546874678619, 1.2782743613604097e-16}};
inline constexpr double kBesselQ[2][11] = {
    {-2.5624470349234015e-09, 1.727514235963947e-08, -5.605529409569845e-08, 1.243723448901673e-07,
     -2.391896199700517e-07, 5.058462822174868e-07, -1.4517485203593326e-06, 6.590592527442454e-06,
     -5.544627964078426e-05, 0.0011444091794566575, -0.12499999999999922},
    {2.7375999680890455e-09, -1.8472882838854194e-08, 6.004818861427859e-08, -1.3370245480630304e-07,
     2.589085915095725e-07, -5.543084740358358e-07, 1.6226307301278493e-06, -7.604546274635837e-06,
     6.776767681764328e-05, -0.0016021728513230461, 0.3749999999999993}};

// The modified Bessel functions' smooth parts, tending to 1 (A&S 9.7.1-2):
// sqrt(2 pi x) e^-x I_nu(x) = kBesselIe[nu](8/x) from x >= 8 and
// sqrt(2x/pi) e^x K_nu(x) = kBesselKe[nu](2/x) from x >= 2, nu = 0, 1:
// degree-16 least-squares fits at Chebyshev nodes against mpmath
// (tools/fits/bessel_ik.py), within 1.5e-14 (I) and 3e-14 (K) relative.
// Double, as kBesselP.
inline constexpr double kBesselIe[2][17] = {
    {-5.1384625721752916e-05, 0.00035520166175378553, -0.0010659038046621641, 0.0018189940048535767,
     -0.0019415570125399977, 0.0013330380997480418, -0.0005661184647965398, 0.00011618369544787608,
     1.5861562453380145e-05, -1.7679686139566748e-05, 8.202894138190367e-06, 5.843537906332026e-06,
     2.7497471551402897e-05, 0.0001430440127663118, 0.0010986330335303086, 0.015624999997349813,
     1.0000000000000056},
    {5.623780242417119e-05, -0.0003924391169863323, 0.0011928600528930036, -0.0020733597747187075,
     0.0022760865389999814, -0.0016388233021516682, 0.0007665676662162639, -0.00021197775468605808,
     1.7595430475242438e-05, 9.01165318884946e-06, -7.036317829864129e-06, -7.584015738255894e-06,
     -3.5303353252754336e-05, -0.00020026540425848493, -0.0018310548799595119, -0.04687499999775829,
     0.999999999999997}};
inline constexpr double kBesselKe[2][17] = {
    {0.00013776761151112658, -0.0012298248545975711, 0.005075018138068594, -0.012887122643648647,
     0.02265818546251193, -0.029529226966765264, 0.030014082416815822, -0.025001107955586088,
     0.018127287221946807, -0.012386550147934345, 0.008777211860281913, -0.007078733647334985,
     0.007008142461509948, -0.009155210863693983, 0.01757812346758679, -0.06249999998501985, 0.9999999999999766},
    {-0.00015370847036428204, 0.001373062326012245, -0.0056710538415043485, 0.01441725002295352,
     -0.025388444075350253, 0.03316192706907975, -0.03381988297333092, 0.02831950365731757,
     -0.020707720407588042, 0.014344565477414585, -0.010385318874178696, 0.008653827837291165,
     -0.009010703455778079, 0.012817312912682656, -0.029296873279845183, 0.18749999998300731,
     1.0000000000000293}};

// The normal distribution's Mills ratio m(y) = ndtr(-y) / phi(y), phi(y) =
// e^(-y^2/2) / sqrt(2 pi), for y >= 0: m(y) = t kNdtrMills(t), t = 4 / (4 +
// y) in (0, 1], a degree-20 least-squares fit of m / t at Chebyshev nodes
// against mpmath (tools/fits/ndtr_mills.py), within 1e-14 relative. Double,
// as kBesselP (float32 ndtr and log_ndtr in float64 lanes).
inline constexpr double kNdtrMills[21] = {
    0.004379662227139745, -0.04805436710789779, 0.2392499401671672, -0.7109063927922943, 1.3953780705342125,
    -1.8971914693095742, 1.841256556984915, -1.3258805750991791, 0.7458331248972855, -0.31860807653721734,
    0.09284016990500156, -0.043664787690741405, -0.00235061789542958, 0.017221151453662875,
    0.058739817417496794, 0.10839191811878011, 0.15918002249850566, 0.20312498936213147, 0.23437500018286336,
    0.2499999999986673, 0.25000000000000244};

// The Airy function Ai's smooth parts on both sides of its power series,
// zeta = 2/3 |x|^(3/2) (DLMF 9.7.5, 9.7.9). Decaying side, x >= 2.08 (zeta
// >= 2): Ai(x) = e^-zeta F / (2 sqrt(pi) x^(1/4)), F = 1 + kAiryDec(2 /
// zeta), within 1.3e-16. Oscillating side, x = -z <= -4.327 (zeta >= 6):
// Ai(-z) = (cos(zeta - pi/4) P + sin(zeta - pi/4) Q) / (sqrt(pi) z^(1/4)),
// P = 1 + kAiryP(u), Q = kAiryQ(u) / zeta, u = 36 / zeta^2 in (0, 1], within
// 2.1e-16 (P) and 1.7e-15 (zeta Q) absolute. Least-squares fits at Chebyshev
// nodes against mpmath (tools/fits/airy.py). Double, as kBesselP (float32
// airy_ai in float64 lanes).
inline constexpr double kAiryDec[21] = {
    0.00012414951432381807, -0.0013433367444627283, 0.006797460789973255, -0.021397048460902134,
    0.0470427442428337, -0.07695354142188979, 0.09756531533611935, -0.09884527623805252, 0.08222206207188727,
    -0.05782349012429254, 0.03568102963383323, -0.020319372832329048, 0.011400108028962639,
    -0.0067743893954829324, 0.004547938932165846, -0.003627508752700408, 0.0036030457265426837,
    -0.0047491315182994496, 0.009283371899231412, -0.034722222222125586, -1.0928757898653885e-16};
inline constexpr double kAiryP[13] = {
    6.016676114685693e-09, -4.330875578394628e-08, 1.437750155024666e-07, -2.972447339693004e-07,
    4.4395685302288416e-07, -5.454770727027268e-07, 6.478526524310645e-07, -9.092378070853514e-07,
    1.8320632823133876e-06, -6.249708194347334e-06, 4.44823955051096e-05, -0.001031485768100158,
    -2.1239520558991032e-16};
inline constexpr double kAiryQ[13] = {
    4.432881937813798e-08, -3.1619786613927755e-07, 1.0357391597693485e-06, -2.097089283632035e-06,
    3.0261354489382613e-06, -3.50458010613197e-06, 3.7643997230423193e-06, -4.518903885360619e-06,
    7.336930650013679e-06, -1.8810595691171166e-05, 8.958257562685778e-05, -0.001055362752960904,
    0.06944444444444288};

// erfinv(y) = y F(w) in Giles' variable w = -log((1 - y)(1 + y)), to ~1e-10
// (float32 needs 2^-24; the float32 op, in float64 lanes, stays within half
// an ulp and a hair of the float64 one): F = kErfinvCentral(w / 6.25) for
// w < 6.25 (|y| < 0.99903), within 1.2e-10 relative, its constant
// sqrt(pi)/2 exact (erfinv(y) rounds as y sqrt(pi)/2 near 0);
// kErfinvTail((sqrt(w) - 2.5) / 1.7) for 6.25 <= w <= 17.5 (float32's
// largest |y| < 1 gives 15.9), within 7.3e-11. Least-squares fits at
// Chebyshev nodes against mpmath (tools/fits/erfinv.py).
inline constexpr double kErfinvCentral[14] = {
    0.026608607744409707, -0.2169447433909768, 0.7642957381634008,  -1.4815345789449472, 1.6131902738238857,
    -0.7814161241585884,  -0.11965890976311469, 0.05483397532364353, 0.45573703557981976, -0.19660805340546697,
    -0.5700138262637251,  0.4511435985188464,  1.4500854450360732,  0.886226925452758};
inline constexpr double kErfinvTail[12] = {
    0.0026613638110456928, -0.020967356129479444, 0.07223756828159415, -0.13957966626612375,
    0.15471018441511353,   -0.06883909452471185,  -0.0684888636749636, 0.15552480246148082,
    -0.1530396376162545,   0.10169731217757107,   1.6698643923405778,  2.3359453636400174};

}  // namespace math
}  // namespace ct

#endif  // CTENSOR_SRC_MATH_COEFFICIENTS_H_
