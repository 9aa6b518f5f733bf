"""pytorch/examples VAE on random 'images'."""
import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

torch.manual_seed(1)
data = torch.rand(64, 1, 28, 28)
train_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=16,
                                           shuffle=True)


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()
        self.fc1 = nn.Linear(784, 40)
        self.fc21 = nn.Linear(40, 4)
        self.fc22 = nn.Linear(40, 4)
        self.fc3 = nn.Linear(4, 40)
        self.fc4 = nn.Linear(40, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


model = VAE()
optimizer = optim.Adam(model.parameters(), lr=1e-3)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


for epoch in range(1, 3):
    model.train()
    train_loss = 0
    for batch_idx, (data_b,) in enumerate(train_loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data_b)
        loss = loss_function(recon_batch, data_b, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % 2 == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.3f}'.format(
                epoch, batch_idx * len(data_b), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item() / len(data_b)))
    print('====> Epoch: {} Average loss: {:.3f}'.format(epoch, train_loss / len(train_loader.dataset)))
    model.eval()
    with torch.no_grad():
        recon, mu, logvar = model(data[:8])
        comparison = torch.cat([data[:8], recon.view(8, 1, 28, 28)])
        sample = model.decode(torch.randn(4, 4)).cpu()
    print(comparison.shape, sample.view(4, 1, 28, 28).shape, f"{sample.mean().item():.4f}")
