"""The main job's training step: examples/mnist.py's Net (conv 1->32, conv 32->64, max-pool,
dropout, linear 9216->128->10) on a batch of 64 bundled MNIST images, nll_loss, backward and an
Adadelta step, cycling through 50 fixed batches. One full epoch is 938 of these steps."""
import importlib.util
import pathlib
import sys

from registry import benchmark

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _example(lib):
    """examples/mnist.py as a module running on `lib` (the script picks it from sys.argv)."""
    argv = sys.argv
    sys.argv = ["mnist.py", "--torch"] if lib.__name__ == "torch" else ["mnist.py"]
    try:
        spec = importlib.util.spec_from_file_location(f"mnist_example_{lib.__name__}", ROOT / "examples" / "mnist.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


@benchmark(target=2.0)
def bench_mnist_train_step(lib):
    from ember.vision.datasets import MNIST

    example = _example(lib)
    F = lib.nn.functional
    lib.manual_seed(1)
    data = MNIST(str(ROOT / "data" / "mnist"), train=False)
    images = lib.from_numpy(data.data[:50 * 64].numpy()).float().div(255).sub(0.1307).div(0.3081)
    batches = list(zip(images.unsqueeze(1).split(64), lib.from_numpy(data.targets[:50 * 64].numpy()).split(64)))
    model = example.Net()
    optimizer = lib.optim.Adadelta(model.parameters(), lr=1.0)
    position = [0]

    def step():
        x, y = batches[position[0] % len(batches)]
        position[0] += 1
        optimizer.zero_grad()
        loss = F.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
    return step
