"""A training step of a Transformer encoder at the size of a small language model's: 4 layers,
d_model 256, 4 heads, feed-forward 1024, dropout 0.1, batch 16 of 64 tokens (batch_first),
mean-squared error against a target, AdamW."""
from _common import training_step
from registry import benchmark


@benchmark(target=2.0)
def bench_transformer_encoder_train_step(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    layer = nn.TransformerEncoderLayer(256, 4, dim_feedforward=1024, dropout=0.1,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-4)
    x = lib.randn(16, 64, 256)
    target = lib.randn(16, 64, 256)
    return training_step(model, opt, F.mse_loss, x, target)
