"""CIFAR-10 style classifier tutorial on random data."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.randn(64, 3, 32, 32)
labels = torch.randint(0, 10, (64,))
trainset = TensorDataset(images, labels)
trainloader = DataLoader(trainset, batch_size=8, shuffle=True, num_workers=0)
classes = ('plane', 'car', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


net = Net()
print(net)
params = list(net.parameters())
print(len(params), params[0].size())
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        inputs, labels_b = data
        optimizer.zero_grad()
        outputs = net(inputs)
        loss = criterion(outputs, labels_b)
        loss.backward()
        optimizer.step()
        running_loss += loss.item()
        if i % 4 == 3:
            print(f'[{epoch + 1}, {i + 1:5d}] loss: {running_loss / 4:.4f}')
            running_loss = 0.0
print('Finished Training')
correct = 0
total = 0
class_correct = {c: 0 for c in classes}
with torch.no_grad():
    for data in trainloader:
        imgs, lbls = data
        outputs = net(imgs)
        _, predicted = torch.max(outputs.data, 1)
        total += lbls.size(0)
        correct += (predicted == lbls).sum().item()
        for label, prediction in zip(lbls, predicted):
            if label == prediction:
                class_correct[classes[label]] += 1
print(f'Accuracy: {100 * correct // total} %')
print(class_correct)
print(' '.join(f'{classes[predicted[j]]:5s}' for j in range(4)))
# the "define the network" tutorial flow
net.zero_grad()
out = net(torch.randn(1, 3, 32, 32))
out.backward(torch.randn(1, 10))
print(net.conv1.bias.grad is not None, net.conv1.bias.grad.shape)
out = net(torch.randn(1, 3, 32, 32))
target = torch.randn(10).view(1, -1)
loss = nn.MSELoss()(out, target)
print(f"{loss.item():.4f}")
print(type(loss.grad_fn).__name__, type(loss.grad_fn.next_functions[0][0]).__name__)
net.zero_grad()
loss.backward()
print(net.conv1.bias.grad)
