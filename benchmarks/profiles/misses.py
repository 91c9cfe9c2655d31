"""One call each, lucid then torch, of the GPU rows that miss issue 19's targets, for
Nsight Compute (the inputs are copied to the device, so every kernel profiled is one of
the ops'):

    ncu --clock-control none --csv --metrics <list> python3 benchmarks/profiles/misses.py
"""
import torch

import lucid


def both(t):
    return lucid.from_numpy(t.numpy()).clone().to("gpu"), t.cuda()


g = torch.Generator().manual_seed(0)
x = torch.randn(8192, 8192, generator=g)
lx, tx = both(x)
a, b = torch.randn(4096, 4096, generator=g), torch.randn(4096, 4096, generator=g)
(la, ta), (lb, tb) = both(a), both(b)
S, K, D = 1 << 16, 1 << 18, 64
(ls, ts), (lsrc, tsrc) = both(torch.randn(S, D, generator=g)), both(torch.randn(K, D, generator=g))
(li, ti) = both(torch.randint(0, S, (K, 1), generator=g).expand(K, D).contiguous())
lcond, tcond = la > 0, ta > 0
lh, th = la.bfloat16(), ta.bfloat16()
lh2, th2 = lb.bfloat16(), tb.bfloat16()
lucid.gpu.synchronize()
torch.cuda.synchronize()

for m, (xx, s, i, src, c, p, q, h, h2) in ((lucid, (lx, ls, li, lsrc, lcond, la, lb, lh, lh2)),
                                           (torch, (tx, ts, ti, tsrc, tcond, ta, tb, th, th2))):
    xx.argmax()                  # argmax [8192, 8192]
    m.scatter_add(s, 0, i, src)  # scatter_add 256K rows into [64K, 64]
    m.where(c, p, q)             # where [4096, 4096]
    h + h2                       # add bfloat16 16M
lucid.gpu.synchronize()
torch.cuda.synchronize()
