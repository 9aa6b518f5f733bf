"""Train a small MLP on four Gaussian blobs in 2-D.

Plain PyTorch code run on ember:  python examples/mlp.py
The same script on real PyTorch:  python examples/mlp.py --torch
"""
import sys

if "--torch" in sys.argv:
    import torch
else:
    import ember as torch

nn = torch.nn
F = torch.nn.functional


def make_data(n):
    """n points around four centres with unit Gaussian noise; label = centre."""
    centres = torch.tensor([[1.5, 1.5], [-1.5, 1.5], [-1.5, -1.5], [1.5, -1.5]])
    y = torch.randint(0, 4, (n,))
    x = centres[y] + torch.randn(n, 2)
    return x, y


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


def main():
    torch.manual_seed(0)
    x_train, y_train = make_data(2000)
    x_test, y_test = make_data(1000)

    model = nn.Sequential(
        nn.Linear(2, 64), nn.ReLU(),
        nn.Linear(64, 64), nn.ReLU(),
        nn.Linear(64, 4),
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    steps, batch = 300, 64
    perm, pos = torch.randperm(2000), 0
    for step in range(1, steps + 1):
        if pos + batch > 2000:
            perm, pos = torch.randperm(2000), 0
        idx = perm[pos:pos + batch]
        pos += batch

        loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step:4d}  loss {loss.item():.4f}")

    print(f"train accuracy {accuracy(model, x_train, y_train):.3f}")
    print(f"test accuracy  {accuracy(model, x_test, y_test):.3f}")


if __name__ == "__main__":
    main()
