"""The explicit Runge-Kutta tableaux: fixed-step ones, then the embedded (adaptive) pairs.

Coefficients are the published ones, written as exact ratios where they are rational so
the source can be checked against the literature by eye. Method names match the
reference ODE library's (torchdiffeq), so a solve ported across steps the same way:
"rk4" is Kutta's 3/8 rule there, and the textbook method is kept as "rk4_classic".
"""

from ._tableau import ButcherTableau

__all__ = ["EULER", "MIDPOINT", "HEUN2", "HEUN3", "RK4", "RK4_CLASSIC", "ADAPTIVE_HEUN", "FEHLBERG2", "BOSH3",
           "DOPRI5", "TSIT5"]


EULER = ButcherTableau(a=((),), b=(1.0,), c=(0.0,), order=1, name="euler")

MIDPOINT = ButcherTableau(a=((), (1 / 2,)), b=(0.0, 1.0), c=(0.0, 1 / 2), order=2, name="midpoint")

HEUN2 = ButcherTableau(a=((), (1.0,)), b=(1 / 2, 1 / 2), c=(0.0, 1.0), order=2, name="heun2")

HEUN3 = ButcherTableau(a=((), (1 / 3,), (0.0, 2 / 3)), b=(1 / 4, 0.0, 3 / 4), c=(0.0, 1 / 3, 2 / 3),
                       order=3, name="heun3")

# Kutta's 3/8 rule.
RK4 = ButcherTableau(a=((), (1 / 3,), (-1 / 3, 1.0), (1.0, -1.0, 1.0)), b=(1 / 8, 3 / 8, 3 / 8, 1 / 8),
                     c=(0.0, 1 / 3, 2 / 3, 1.0), order=4, name="rk4")

RK4_CLASSIC = ButcherTableau(a=((), (1 / 2,), (0.0, 1 / 2), (0.0, 0.0, 1.0)), b=(1 / 6, 1 / 3, 1 / 3, 1 / 6),
                             c=(0.0, 1 / 2, 1 / 2, 1.0), order=4, name="rk4_classic")


def _minus(b, b_hat):
    """b_error from the two embedded solutions' weights."""
    return tuple(x - y for x, y in zip(b, b_hat))


# Heun's method with Euler-like embedded weights (0, 1); its midpoint is Euler's half step.
ADAPTIVE_HEUN = ButcherTableau(a=((), (1.0,)), b=(1 / 2, 1 / 2), c=(0.0, 1.0), order=2, name="adaptive_heun",
                               b_error=_minus((1 / 2, 1 / 2), (0.0, 1.0)), mid=(1 / 2, 0.0))

_FEHLBERG2_B = (1 / 512, 255 / 256, 1 / 512)
FEHLBERG2 = ButcherTableau(a=((), (1 / 2,), (1 / 256, 255 / 256)), b=_FEHLBERG2_B, c=(0.0, 1 / 2, 1.0),
                           order=2, name="fehlberg2", b_error=_minus(_FEHLBERG2_B, (1 / 256, 255 / 256, 0.0)),
                           mid=(0.0, 1 / 2, 0.0))

# Bogacki-Shampine 3(2); first same as last.
_BOSH3_B = (2 / 9, 1 / 3, 4 / 9, 0.0)
BOSH3 = ButcherTableau(a=((), (1 / 2,), (0.0, 3 / 4), (2 / 9, 1 / 3, 4 / 9)), b=_BOSH3_B, c=(0.0, 1 / 2, 3 / 4, 1.0),
                       order=3, name="bosh3", b_error=_minus(_BOSH3_B, (7 / 24, 1 / 4, 1 / 3, 1 / 8)),
                       mid=(0.0, 1 / 2, 0.0, 0.0))

# Dormand-Prince 5(4); first same as last. The fourth-order weights are the reference
# library's member of the embedded family; the midpoint weights are Shampine's dense
# output evaluated at half a step.
_DOPRI5_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0)
DOPRI5 = ButcherTableau(
    a=((),
       (1 / 5,),
       (3 / 40, 9 / 40),
       (44 / 45, -56 / 15, 32 / 9),
       (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
       (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
       _DOPRI5_B[:6]),
    b=_DOPRI5_B,
    c=(0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0),
    order=5, name="dopri5",
    b_error=_minus(_DOPRI5_B, (1951 / 21600, 0.0, 22642 / 50085, 451 / 720, -12231 / 42400, 649 / 6300, 1 / 60)),
    mid=tuple(v / 2 for v in (6025192743 / 30085553152, 0.0, 51252292925 / 65400821598,
                              -2691868925 / 45128329728, 187940372067 / 1594534317056,
                              -1776094331 / 19743644256, 11237099 / 235043384)),
)


def _tsit5_dense_weights(x):
    """Tsitouras' continuous-extension weights b_i(x) (Tsitouras 2011), at fraction x."""
    return (
        -1.0530884977290216 * x * (x - 1.329989018975412) * (x * x - 1.4364028541716351 * x + 0.7139816917074209),
        0.1017 * x * x * (x * x - 2.1966568338249754 * x + 1.2949852507374631),
        2.490627285651252793 * x * x * (x * x - 2.38535645472061657 * x + 1.57803468208092486),
        -16.54810288924490272 * (x - 1.21712927295533244) * (x - 0.61620406037800089) * x * x,
        47.37952196281928122 * (x - 1.203071208372362603) * (x - 0.658047292653547382) * x * x,
        -34.87065786149660974 * (x - 1.2) * (x - 2 / 3) * x * x,
        2.5 * (x - 1) * (x - 0.6) * x * x,
    )


# Tsitouras 5(4); first same as last. The fifth-order weights are the last stage's row,
# and the error weights are Tsitouras' b - b_hat. (The reference ODE library propagates
# b_hat, the fourth-order solution, instead; here the step keeps the fifth-order one,
# which is what the order conditions and the dense output above are built around.)
_TSIT5_B = (0.09646076681806522951816731316512876333, 0.01, 0.4798896504144995747752495322905965199,
            1.379008574103741893192274821856872770, -3.290069515436080679901047585711363850,
            2.324710524099773982415355918398765796, 0.0)
TSIT5 = ButcherTableau(
    a=((),
       (0.161,),
       (-0.008480655492356988544426874250230774675, 0.3354806554923569885444268742502307746),
       (2.897153057105493432130432594192938764, -6.359448489975074843148159912383825625,
        4.362295432869581411017727318190886861),
       (5.325864828439256604428877920840511317, -11.74888356406282787774717033978577296,
        7.495539342889836208304604784564358155, -0.09249506636175524925650207933207191611),
       (5.861455442946420028659251486982647890, -12.92096931784710929170611868178335939,
        8.159367898576158643180400794539253485, -0.07158497328140099722453054252582973869,
        -0.02826905039406838290900305721271224146),
       _TSIT5_B[:6]),
    b=_TSIT5_B,
    c=(0.0, 0.161, 0.327, 0.9, 0.9800255409045096857298102862870245954, 1.0, 1.0),
    order=5, name="tsit5",
    b_error=(0.001780011052225771443378550607539534775, 0.0008164344596567469032236360633546862401,
             -0.007880878010261996010314727672526304238, 0.1447110071732629075371651479726351167,
             -0.5823571654525552250199376106520421794, 0.4580821059291869466616365188325542974, -1 / 66),
    mid=_tsit5_dense_weights(0.5),
)
