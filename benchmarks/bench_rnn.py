"""A training step of the recurrent core of pytorch/examples' word_language_model: a 2-layer
LSTM with 256 features in and 256 hidden, over 35 steps of a batch of 20 (its bptt and batch
size), then an MSE loss, backward and an SGD step."""
from _common import training_step
from registry import benchmark


@benchmark(target=2.0)
def bench_lstm_train_step(lib):
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    model = nn.LSTM(256, 256, num_layers=2)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    x = lib.randn(35, 20, 256)
    target = lib.randn(35, 20, 256)

    def output(x):
        return model(x)[0]  # (output, (h_n, c_n)) -> output
    return training_step(output, opt, F.mse_loss, x, target)
