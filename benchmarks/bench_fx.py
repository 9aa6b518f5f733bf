"""fx: symbolic_trace of the MNIST-example net and of a 24-block residual MLP (Proxies run
through forward, nodes recorded, GraphModule code generated and compiled), torch.fx vs
ember.fx."""
from registry import benchmark


def _mnist_net(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
            x = lib.flatten(self.dropout1(x), 1)
            x = self.dropout2(F.relu(self.fc1(x)))
            return F.log_softmax(self.fc2(x), dim=1)
    return Net()


def _residual_mlp(lib, blocks=24):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(32)
            self.fc = nn.Linear(32, 32)

        def forward(self, x):
            return x + F.gelu(self.fc(self.norm(x))) * 0.5

    return nn.Sequential(*[Block() for _ in range(blocks)])


@benchmark(target=1.5)
def bench_fx_trace_mnist_net(lib):
    model = _mnist_net(lib)
    return lambda: lib.fx.symbolic_trace(model)


@benchmark(target=1.5)
def bench_fx_trace_residual_mlp_24(lib):
    model = _residual_mlp(lib)
    return lambda: lib.fx.symbolic_trace(model)
