"""Rows of the sparse tensors (issue 21's table): a graph convolution network's training
step on a Cora-sized graph (2,708 nodes, 10,556 directed edges plus self loops, 1,433
input features, 16 hidden, 7 classes; Kipf and Welling's model) on the CPU and on the
GPU, and the sparse @ dense product it runs, forward alone. The graph and features are
random with Cora's sizes and feature density (1.27 %): both sides get the same COO
adjacency (symmetrically normalised, coalesced) and the same weights."""

import torch

import lucid

from workloads import to_lucid, workload

NODES, EDGES, FEATURES, HIDDEN, CLASSES = 2708, 10556, 1433, 16, 7


def _graph(gen):
    src = torch.randint(0, NODES, (EDGES // 2,), generator=gen)
    dst = torch.randint(0, NODES, (EDGES // 2,), generator=gen)
    loops = torch.arange(NODES)
    idx = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]), torch.stack([loops, loops])], 1)
    adj = torch.sparse_coo_tensor(idx, torch.ones(idx.shape[1]), (NODES, NODES)).coalesce()
    deg = torch.sparse.sum(adj, 1).to_dense()
    r, c = adj.indices()
    return torch.sparse_coo_tensor(adj.indices(), adj.values() / (deg[r] * deg[c]).sqrt(), adj.shape).coalesce()


def _lucid_sparse(adj, device):
    return lucid.sparse_coo_tensor(to_lucid(adj.indices(), device), to_lucid(adj.values(), device), adj.shape,
                                   is_coalesced=True)


def _setup(device, train):
    def setup():
        gen = torch.Generator().manual_seed(0)
        adj = _graph(gen)
        x = (torch.rand(NODES, FEATURES, generator=gen) < 0.0127).float()
        y = torch.randint(0, CLASSES, (NODES,), generator=gen)
        w1 = torch.randn(FEATURES, HIDDEN, generator=gen) * (2 / FEATURES) ** 0.5
        w2 = torch.randn(HIDDEN, CLASSES, generator=gen) * (2 / HIDDEN) ** 0.5
        dev = "cuda" if device == "gpu" else "cpu"
        tw = [w.to(dev).requires_grad_() for w in (w1, w2)]
        lw = [to_lucid(w, device).requires_grad_() for w in (w1, w2)]
        if not train:
            h = torch.randn(NODES, HIDDEN, generator=gen)
            return (_lucid_sparse(adj, device), to_lucid(h, device)), (adj.to(dev), h.to(dev))
        return ((_lucid_sparse(adj, device), to_lucid(x, device), to_lucid(y, device), *lw,
                 lucid.optim.Adam(lw, lr=0.01)),
                (adj.to(dev), x.to(dev), y.to(dev), *tw, torch.optim.Adam(tw, lr=0.01)))
    return setup


def _gcn_step(m, adj, x, y, w1, w2, opt):
    h = m.spmm(adj, x @ w1).relu()
    loss = m.nn.functional.cross_entropy(m.spmm(adj, h @ w2), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


NNZ = EDGES + NODES  # (at most: a random edge may repeat another)
STEP_FLOPS = 3 * 2 * (NODES * FEATURES * HIDDEN + NNZ * HIDDEN + NODES * HIDDEN * CLASSES + NNZ * CLASSES)

for device in ("cpu", "gpu"):
    prefix = "GPU " if device == "gpu" else ""
    workload(f"{prefix}GCN Cora-sized ({NODES} nodes, {EDGES} edges) training step (Adam)", "sparse",
             _setup(device, True), _gcn_step, flops=STEP_FLOPS, device=device, ceiling="none")
    workload(f"{prefix}sparse.mm [{NODES}, {NODES}] ~{NNZ} nnz @ [{NODES}, {HIDDEN}]", "sparse",
             _setup(device, False), lambda m, a, h: m.sparse.mm(a, h), flops=2 * NNZ * HIDDEN, device=device,
             ceiling="none")
