"""Torch peers of examples/gnn_layer.rs: one GNN message-passing layer,
out[dst[e], :] += x[src[e], :] * w[e], on THE SAME benchmark graph as the example (2^18 nodes,
2^22 edges, d = 128, power-law in-degree from splitmix64 of the edge number; the formulas below
are the example's `bench_graph` and `bench_problem`, bit for bit), in f32 and bf16.

    python3 bench/gnn_peer.py

Needs torch with a CUDA GPU and numpy. Prints the graph's fingerprint line (the example prints
the same one: compare them), then one line per (type, implementation): median microseconds of
20 launches after warm-ups (CUDA events) and the effective GB/s with the example's byte count
(the gathered rows of x, one update of out per message, src, dst and w). Times include what
each implementation needs per layer (torch materialises the [E, d] messages x[src] * w). The
graph's sorting or conversion to CSR is done once, outside the timings.
Compare with the example's figures from the same machine: absolute numbers drift.
"""
import statistics
import sys
import warnings

import numpy as np
import torch

LOG2_NODES, EDGES, D = 18, 1 << 22, 128
N = 1 << LOG2_NODES


def splitmix64(i):
    """splitmix64's output function of uint64 counters (wrapping arithmetic, as the example)."""
    z = (i + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def unit(h):
    """A value in [-1, 1) from a hash: 24 random bits, exact in f32 (the example's `unit`)."""
    return (h >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-23) - np.float32(1.0)


def bench_graph():
    e = np.arange(EDGES, dtype=np.uint64)
    h = splitmix64(e)
    a = h >> np.uint64(32)
    src = (h & np.uint64(0xFFFFFFFF)) >> np.uint64(32 - LOG2_NODES)
    dst = (((a * a) >> np.uint64(64 - LOG2_NODES)) * np.uint64(0x9E3779B1)) & np.uint64(N - 1)
    return src.astype(np.int64), dst.astype(np.int64)


def bench_values():
    """x [N, D], w [E] and out's start [N, D] in f32, as the example's `bench_problem`."""
    i = np.arange(N * D, dtype=np.uint64)
    x = unit(splitmix64(np.uint64(2 << 40) + i)).reshape(N, D)
    e = np.arange(EDGES, dtype=np.uint64)
    w = np.float32(0.5) + (unit(splitmix64(np.uint64(1 << 40) + e)) + np.float32(1.0)) * np.float32(0.5)
    init = (unit(splitmix64(np.uint64(3 << 40) + i)) * np.float32(0.25)).reshape(N, D)
    return x, w, init


def describe(src, dst):
    deg = np.bincount(dst, minlength=N)
    hub = int(np.argmax(deg))  # the first node of the largest in-degree, as the example
    print(f"# graph: {N} nodes, {EDGES} edges, d = {D}; max in-degree {deg[hub]} (node {hub}), "
          f"{int((deg == 0).sum())} nodes without in-edges, sum(src) {int(src.sum())}, "
          f"sum(dst) {int(dst.sum())}", flush=True)


def time_us(fn, reps=20, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def row(dtype_name, who, us, size):
    nbytes = 2 * EDGES * D * size + EDGES * (8 + size)
    print(f"gnn {dtype_name:<4} {who:<34} {us:10.1f} us {nbytes / (us * 1e-6) / 1e9:8.1f} GB/s", flush=True)


def check(got, x, src, dst, w, init, label):
    """A loose sanity check of a peer's result against an f64 sum on a few rows (the example
    does the real check of its own kernels); catches a wrong graph or a missing weight."""
    rows = torch.tensor([0, 1, 7, 1000, N - 1], device=got.device)
    sel = torch.isin(dst, rows)
    ref = init.double().clone()
    ref.index_add_(0, dst[sel], x.double()[src[sel]] * w.double()[sel, None])
    err = (got.double()[rows] - ref[rows]).abs().max().item()
    scale = ref[rows].abs().max().item() + 1.0
    tol = 1e-4 if got.dtype == torch.float32 else 0.5
    if not err <= tol * scale:
        sys.exit(f"{label}: result differs from the f64 sum by {err} (scale {scale})")


def peers(dtype, src, dst, x32, w32, init32):
    name = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
    size = torch.finfo(dtype).bits // 8
    x, w, init = x32.to(dtype), w32.to(dtype), init32.to(dtype)
    out = init.clone()
    out.index_add_(0, dst, x[src] * w[:, None])
    check(out, x, src, dst, w, init, f"{name} index_add_")
    row(name, "torch index_add_", time_us(lambda: out.index_add_(0, dst, x[src] * w[:, None])), size)

    # The same with scatter_add_ (what many GNN codes write), index broadcast to [E, D] once.
    idx = dst[:, None].expand(-1, D)
    row(name, "torch scatter_add_", time_us(lambda: out.scatter_add_(0, idx, x[src] * w[:, None])), size)

    # Sparse-dense product: A[dst, src] = w, out += A @ x (cuSPARSE, CSR built once; no atomics,
    # the competitor a graph sorted by destination gets).
    try:
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled")
        coo = torch.sparse_coo_tensor(torch.stack([dst, src]), w, (N, N))
        a = coo.coalesce().to_sparse_csr()
        res = init + a @ x
        check(res, x, src, dst, w, init, f"{name} sparse csr")
        row(name, "torch sparse CSR @ x (cuSPARSE)", time_us(lambda: out.add_(a @ x)), size)
    except (RuntimeError, NotImplementedError) as err:
        print(f"gnn {name:<4} torch sparse CSR @ x: not run ({str(err).splitlines()[0]})")

    pyg(name, dtype, size, src, dst, x, w, init)


def pyg(name, dtype, size, src, dst, x, w, init):
    try:
        from torch_geometric.nn import MessagePassing
        from torch_geometric.utils import scatter
    except ImportError as err:
        print(f"gnn {name:<4} torch_geometric: not installed ({err}); skipped")
        return

    class Weighted(MessagePassing):
        def __init__(self):
            super().__init__(aggr="add")

        def forward(self, x, edge_index, w):
            return self.propagate(edge_index, x=x, w=w)

        def message(self, x_j, w):
            return x_j * w[:, None]

    edge_index = torch.stack([src, dst])  # PyG's flow source_to_target: messages go to row 1
    layer = Weighted()
    res = init + layer(x, edge_index, w)
    check(res, x, src, dst, w, init, f"{name} pyg MessagePassing")
    # PyG returns a new tensor; adding it into out is part of the layer's work here.
    row(name, "pyg MessagePassing(aggr=add)", time_us(lambda: init.add(layer(x, edge_index, w))), size)
    row(name, "pyg utils.scatter(sum)",
        time_us(lambda: init.add(scatter(x[src] * w[:, None], dst, dim=0, dim_size=N, reduce="sum"))), size)


def main():
    if not torch.cuda.is_available():
        sys.exit("gnn_peer.py needs a CUDA GPU")
    dev = torch.device("cuda")
    print(f"# {torch.cuda.get_device_name(0)}, torch {torch.__version__}, "
          f"median of 20 launches after 5 warm-ups", flush=True)
    src_np, dst_np = bench_graph()
    describe(src_np, dst_np)
    x_np, w_np, init_np = bench_values()
    src, dst = torch.from_numpy(src_np).to(dev), torch.from_numpy(dst_np).to(dev)
    x, w, init = (torch.from_numpy(v).to(dev) for v in (x_np, w_np, init_np))
    for dtype in (torch.float32, torch.bfloat16):
        peers(dtype, src, dst, x, w, init)


if __name__ == "__main__":
    main()
