"""The element-stream samplers (poisson, _standard_gamma, binomial) and the gamma family's
pathwise gradients (_standard_gamma_grad, _dirichlet_grad) under compute-sanitizer, in
every floating dtype, on ragged sizes, with the edge values (0, negative, NaN, infinity).
compute-sanitizer --tool memcheck python3 benchmarks/profiles/sanitize_samplers.py"""
import lucid

lucid.manual_seed(0)
for dtype in (lucid.float16, lucid.bfloat16, lucid.float32, lucid.float64):
    for n in (1, 7, 5000):
        a = (lucid.rand(n, device="gpu") * 30).to(dtype)
        p = lucid.rand(n, device="gpu").to(dtype)
        g = lucid._standard_gamma(a)
        print(dtype, n, float(lucid.poisson(a).float().sum()), float(g.float().sum()),
              float(lucid.binomial(a.floor(), p).float().sum()),
              float(lucid._standard_gamma_grad(a, g).float().sum()),
              float(lucid._dirichlet_grad(p * 0.9 + 0.05, a + 0.1, a * 2 + 1).float().sum()))
edges = lucid.tensor([0.0, -1.0, float("nan"), float("inf"), 1e-30, 0.5], device="gpu")
print(lucid._standard_gamma(edges).tolist(), lucid.binomial(edges.abs().nan_to_num(3.0), edges.clamp(0, 1)).tolist())
conc = lucid.rand(64, 5, device="gpu", dtype=lucid.float64).add(0.2).requires_grad_()
lucid.distributions.Dirichlet(conc).rsample().pow(2).sum().backward()
print(float(conc.grad.sum()))
