"""Train pytorch/examples' MNIST convnet on the MNIST files bundled in data/mnist.

Plain PyTorch code run on ember:  python examples/mnist.py
The same script on real PyTorch:  python examples/mnist.py --torch

One epoch (the default) reaches over 98% test accuracy. The flow is pytorch/examples'
mnist/main.py: two 3x3 convolutions, max-pooling, dropout, two linear layers, log_softmax and
nll_loss, trained with Adadelta and a StepLR schedule. On top of it: a tqdm progress bar,
checkpoints (--save-model PATH, --resume PATH) that real torch.load reads too, and a PNG of
the loss and accuracy curves (--plot PATH).

The images are read by ember.vision.datasets in both modes (no torchvision needed), and
normalised once for the whole set, as tensors, instead of per sample through PIL: the same
numbers as ToTensor() + Normalize((0.1307,), (0.3081,)), much faster.
"""
import argparse
import os
import sys
import time

if "--torch" in sys.argv:
    import torch
else:
    import ember as torch

from ember.vision import datasets

nn = torch.nn
F = torch.nn.functional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# name -> (dataset class, bundled folder or None, mean and std of the training pixels)
DATASETS = {
    "mnist": (datasets.MNIST, os.path.join(REPO, "data", "mnist"), 0.1307, 0.3081),
    "fashion-mnist": (datasets.FashionMNIST, None, 0.2860, 0.3530),
}


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
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def load_split(args, train):
    """One split as a TensorDataset of normalised (N, 1, 28, 28) float images and int64 labels."""
    dataset_class, bundled, mean, std = DATASETS[args.dataset]
    split = dataset_class(args.data_dir or bundled, train=train)
    images = torch.from_numpy(split.data.numpy()).float().div_(255).sub_(mean).div_(std)
    return torch.utils.data.TensorDataset(images.unsqueeze(1), torch.from_numpy(split.targets.numpy()))


def progress_bar(loader, epoch):
    try:
        from tqdm import tqdm
    except ImportError:
        sys.exit("examples/mnist.py shows its progress with tqdm: pip install tqdm "
                 "(or pip install -e '.[examples]')")
    return tqdm(loader, desc=f"epoch {epoch}", unit="batch", dynamic_ncols=True)


def train(args, model, loader, optimizer, epoch, history):
    model.train()
    bar = progress_bar(loader, epoch)
    total = 0.0
    for step, (data, target) in enumerate(bar, 1):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        history["train_loss"].append(loss.item())
        history["train_accuracy"].append(output.argmax(dim=1).eq(target).float().mean().item())
        total += history["train_loss"][-1]
        if step % args.log_interval == 0:
            bar.set_postfix(loss=f"{total / step:.4f}")
        if args.dry_run or step == args.max_steps:
            break
    bar.close()


def test(model, loader, history):
    model.eval()
    test_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    count = len(loader.dataset)
    test_loss /= count
    history["test_loss"].append(test_loss)
    history["test_accuracy"].append(correct / count)
    history["test_step"].append(len(history["train_loss"]))
    print(f"\nTest set: Average loss: {test_loss:.4f}, "
          f"Accuracy: {correct}/{count} ({100.0 * correct / count:.2f}%)\n")


def running_mean(values, window=50):
    """The mean of each value and the up to window - 1 values before it."""
    sums = [0.0]
    for v in values:
        sums.append(sums[-1] + v)
    return [(sums[i] - sums[max(0, i - window)]) / (i - max(0, i - window)) for i in range(1, len(sums))]


def plot(history, path):
    """Loss and accuracy against the training step: per batch (running mean over 50 batches)
    for training, after each epoch for the test set; into a PNG."""
    try:
        import matplotlib
    except ImportError:
        sys.exit("--plot draws with matplotlib: pip install matplotlib (or pip install -e '.[examples]')")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = range(1, len(history["train_loss"]) + 1)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, name, scale in ((axes[0], "loss", 1), (axes[1], "accuracy", 100)):
        ax.plot(steps, [scale * v for v in running_mean(history[f"train_{name}"])], label="train (running mean)")
        ax.plot(history["test_step"], [scale * v for v in history[f"test_{name}"]], "o", label="test (end of epoch)")
        ax.set(xlabel="training step", title=name.capitalize(),
               ylabel="nll loss" if name == "loss" else "accuracy (%)")
        ax.legend()
    axes[0].set_yscale("log")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"Curves written to {path}")


def parse_args():
    parser = argparse.ArgumentParser(description="MNIST convnet (pytorch/examples) on ember")
    parser.add_argument("--batch-size", type=int, default=64, metavar="N",
                        help="input batch size for training (default: 64)")
    parser.add_argument("--test-batch-size", type=int, default=1000, metavar="N",
                        help="input batch size for testing (default: 1000)")
    parser.add_argument("--epochs", type=int, default=1, metavar="N",
                        help="number of epochs to train, counting those of a resumed checkpoint (default: 1)")
    parser.add_argument("--lr", type=float, default=1.0, metavar="LR", help="learning rate (default: 1.0)")
    parser.add_argument("--gamma", type=float, default=0.7, metavar="M",
                        help="learning rate step gamma (default: 0.7)")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="random seed (default: 1)")
    parser.add_argument("--log-interval", type=int, default=10, metavar="N",
                        help="batches between updates of the running loss shown (default: 10)")
    parser.add_argument("--dry-run", action="store_true", help="train on a single batch per epoch")
    parser.add_argument("--max-steps", type=int, default=None, metavar="N",
                        help="stop each epoch's training after N batches (for quick runs and tests)")
    parser.add_argument("--num-workers", type=int, default=0, metavar="N",
                        help="DataLoader worker processes (default: 0)")
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="mnist",
                        help="mnist (bundled) or fashion-mnist (needs --data-dir)")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="folder with the dataset's IDX files, directly or in <Class>/raw/ "
                             "(default for mnist: the bundled data/mnist)")
    parser.add_argument("--save-model", nargs="?", const="mnist_cnn.pt", metavar="PATH",
                        help="save a checkpoint after each epoch (default path: mnist_cnn.pt)")
    parser.add_argument("--resume", metavar="PATH", help="continue from a checkpoint of --save-model")
    parser.add_argument("--plot", metavar="PATH", help="write loss and accuracy curves to this PNG")
    parser.add_argument("--torch", action="store_true", help="run on real PyTorch instead of ember")
    args = parser.parse_args()
    if args.data_dir is None and DATASETS[args.dataset][1] is None:
        parser.error(f"--dataset {args.dataset} is not bundled: pass --data-dir with its IDX files")
    return args


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    print(f"{args.dataset} on {torch.__name__} {torch.__version__}")

    train_loader = torch.utils.data.DataLoader(load_split(args, train=True), batch_size=args.batch_size,
                                               shuffle=True, num_workers=args.num_workers)
    test_loader = torch.utils.data.DataLoader(load_split(args, train=False),
                                              batch_size=args.test_batch_size, num_workers=args.num_workers)

    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    history = {"train_loss": [], "train_accuracy": [], "test_loss": [], "test_accuracy": [], "test_step": []}
    start_epoch = 1
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler.load_state_dict(checkpoint["scheduler"])
        torch.set_rng_state(checkpoint["rng_state"])
        history = checkpoint["history"]
        start_epoch = checkpoint["epoch"] + 1
        print(f"Resumed from {args.resume} after epoch {checkpoint['epoch']}")

    for epoch in range(start_epoch, args.epochs + 1):
        start = time.perf_counter()
        train(args, model, train_loader, optimizer, epoch, history)
        test(model, test_loader, history)
        scheduler.step()
        print(f"Epoch {epoch} took {time.perf_counter() - start:.1f} s")
        if args.save_model:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "epoch": epoch,
                        "rng_state": torch.get_rng_state(), "history": history}, args.save_model)
            print(f"Checkpoint written to {args.save_model}")

    if args.plot:
        plot(history, args.plot)


if __name__ == "__main__":
    main()
