"""nn layers beyond convolution and batch norm, forward + backward through the modules, at the
shapes of common networks: a transformer block's LayerNorm, a diffusion U-Net's GroupNorm and
upsampling, and a Bilinear layer."""
from registry import benchmark


def _layer_step(lib, layer, *shapes):
    lib.manual_seed(0)
    inputs = [lib.randn(*s, requires_grad=True) for s in shapes]
    out = layer(*inputs)
    g = lib.randn(*out.shape)

    def step():
        layer(*inputs).backward(g)
    return step


@benchmark(target=2.0)
def bench_layer_norm_module(lib):
    """nn.LayerNorm(512) on (32, 128, 512) token embeddings."""
    return _layer_step(lib, lib.nn.LayerNorm(512), (32, 128, 512))


@benchmark(target=2.0)
def bench_group_norm_module(lib):
    """nn.GroupNorm(32, 128) on (16, 128, 32, 32) feature maps."""
    return _layer_step(lib, lib.nn.GroupNorm(32, 128), (16, 128, 32, 32))


@benchmark(target=2.0)
def bench_upsample_bilinear(lib):
    """nn.Upsample(scale_factor=2, mode='bilinear') of (16, 64, 32, 32)."""
    return _layer_step(lib, lib.nn.Upsample(scale_factor=2, mode="bilinear"), (16, 64, 32, 32))


@benchmark(target=2.0)
def bench_bilinear(lib):
    """nn.Bilinear(64, 64, 32) on a batch of 256 pairs."""
    return _layer_step(lib, lib.nn.Bilinear(64, 64, 32), (256, 64), (256, 64))


def _embedding_train_step(lib, **kwargs):
    """nn.Embedding(10000, 256) on (32, 128) tokens: forward, backward, plain SGD step."""
    lib.manual_seed(0)
    emb = lib.nn.Embedding(10000, 256, **kwargs)
    opt = lib.optim.SGD(emb.parameters(), lr=0.1)
    idx = lib.randint(0, 10000, (32, 128))
    if kwargs.get("padding_idx") is not None:
        idx[:, 96:] = kwargs["padding_idx"]  # padded sequences

    def step():
        opt.zero_grad()
        emb(idx).square().sum().backward()
        opt.step()
    return step


@benchmark(target=2.0)
def bench_embedding_train(lib):
    """nn.Embedding(10000, 256), (32, 128) tokens, a train step (dense weight gradient)."""
    return _embedding_train_step(lib)


@benchmark(target=2.0)
def bench_embedding_train_padded(lib):
    """The same with padding_idx=0 and a quarter of every sequence padded."""
    return _embedding_train_step(lib, padding_idx=0)


@benchmark(target=2.0)
def bench_embedding_train_sparse(lib):
    """The same with sparse=True: a sparse COO gradient, SGD moves only the picked rows."""
    return _embedding_train_step(lib, sparse=True)


def _embedding_bag_step(lib, mode, **kwargs):
    """nn.EmbeddingBag(10000, 64) on 4096 indices in 512 bags of random sizes (1-15): forward
    and backward."""
    lib.manual_seed(0)
    bag = lib.nn.EmbeddingBag(10000, 64, mode=mode, **kwargs)
    sizes = lib.randint(1, 16, (512,))
    idx = lib.randint(0, 10000, (int(sizes.sum()),))
    offsets = lib.cat([lib.zeros(1, dtype=lib.int64), sizes.cumsum(0)[:-1]])
    weights = lib.rand(idx.shape) if mode == "sum" else None
    g = lib.randn(512, 64)

    def step():
        bag.weight.grad = None
        bag(idx, offsets, per_sample_weights=weights).backward(g)
    return step


@benchmark(target=2.0)
def bench_embedding_bag_sum(lib):
    """nn.EmbeddingBag(10000, 64, mode='sum'), 512 bags, per_sample_weights, forward+backward."""
    return _embedding_bag_step(lib, "sum")


@benchmark(target=2.0)
def bench_embedding_bag_mean(lib):
    """The same in mode='mean' with padding_idx=0."""
    return _embedding_bag_step(lib, "mean", padding_idx=0)


@benchmark(target=2.0)
def bench_embedding_bag_max(lib):
    """The same in mode='max'."""
    return _embedding_bag_step(lib, "max")
