"""Transfer-learning flow: freeze a backbone, replace the head, schedule, save/load state."""
import copy
import os
import tempfile
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim import lr_scheduler
from torch.utils.data import Dataset, DataLoader, random_split

torch.manual_seed(0)


class RandomImages(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 3, 16, 16)
        self.y = torch.randint(0, 2, (n,))

    def __len__(self):
        return len(self.x)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class Backbone(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


full = RandomImages(40)
train_set, val_set = random_split(full, [32, 8])
dataloaders = {'train': DataLoader(train_set, batch_size=8, shuffle=True),
               'val': DataLoader(val_set, batch_size=8)}
dataset_sizes = {'train': len(train_set), 'val': len(val_set)}
model = Backbone()
for param in model.parameters():
    param.requires_grad = False
num_ftrs = model.fc.in_features
model.fc = nn.Linear(num_ftrs, 2)
print(model.fc, [n for n, p in model.named_parameters() if p.requires_grad])
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
exp_lr_scheduler = lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
best_acc = 0.0
with tempfile.TemporaryDirectory() as tempdir:
    path = os.path.join(tempdir, 'best_model_params.pt')
    torch.save(model.state_dict(), path)
    for epoch in range(3):
        for phase in ['train', 'val']:
            model.train() if phase == 'train' else model.eval()
            running_loss, running_corrects = 0.0, 0
            for inputs, labels in dataloaders[phase]:
                optimizer.zero_grad()
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    _, preds = torch.max(outputs, 1)
                    loss = criterion(outputs, labels)
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)
            if phase == 'train':
                exp_lr_scheduler.step()
            epoch_loss = running_loss / dataset_sizes[phase]
            epoch_acc = running_corrects.double() / dataset_sizes[phase]
            print(f'{epoch} {phase} Loss: {epoch_loss:.4f} Acc: {epoch_acc:.4f} '
                  f'lr {exp_lr_scheduler.get_last_lr()[0]:.5f}')
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                torch.save(model.state_dict(), path)
    best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(torch.load(path, weights_only=True))
    print(f'Best val Acc: {best_acc:4f}', type(best_acc).__name__)
    print(list(model.state_dict().keys())[:6])
    print(model.features[1].running_var[:3], model.features[1].num_batches_tracked)
    ckpt = {'epoch': 3, 'model_state_dict': model.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(), 'loss': loss}
    torch.save(ckpt, os.path.join(tempdir, 'ckpt.tar'))
    ck = torch.load(os.path.join(tempdir, 'ckpt.tar'))
    opt2 = optim.SGD(model.fc.parameters(), lr=0.01, momentum=0.9)
    opt2.load_state_dict(ck['optimizer_state_dict'])
    print(ck['epoch'], f"{ck['loss'].item():.4f}", opt2.state_dict()['param_groups'])
    print(sorted(opt2.state_dict()['state'].keys()))
print(torch.equal(best_model_wts['fc.weight'], model.state_dict()['fc.weight']))
