"""Text classification with EmbeddingBag offsets + super-resolution with PixelShuffle."""
import time
import torch
from torch import nn
import torch.nn.init as init
from torch.utils.data import DataLoader
from torch.nn.utils.rnn import pad_sequence, pack_padded_sequence, pad_packed_sequence

torch.manual_seed(0)
vocab_size, num_class = 30, 4
samples = [(int(torch.randint(0, num_class, ())), torch.randint(0, vocab_size, (int(n),)))
           for n in torch.randint(2, 9, (40,))]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _label, _text in batch:
        label_list.append(_label)
        text_list.append(_text)
        offsets.append(_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        initrange = 0.5
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.fc.weight.data.uniform_(-initrange, initrange)
        self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        return self.fc(self.embedding(text, offsets))


model = TextClassificationModel(vocab_size, 8, num_class)
dataloader = DataLoader(samples, batch_size=8, shuffle=True, collate_fn=collate_batch)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
start = time.time()
for epoch in range(1, 3):
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(dataloader):
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    scheduler.step()
    print(f"| epoch {epoch:3d} | accuracy {total_acc / total_count:8.3f} | lr {scheduler.get_last_lr()}")
assert time.time() - start >= 0

# padded / packed sequences into an LSTM
seqs = [s for _, s in samples[:5]]
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True, padding_value=0)
print(padded.shape, lengths)
emb = nn.Embedding(vocab_size, 6, padding_idx=0)
lstm = nn.LSTM(6, 5, batch_first=True, bidirectional=True)
packed = pack_padded_sequence(emb(padded), lengths, batch_first=True, enforce_sorted=False)
out, (h, c) = lstm(packed)
unpacked, out_lens = pad_packed_sequence(out, batch_first=True)
print(unpacked.shape, out_lens, h.shape, f"{unpacked.abs().sum().item():.4f}")


class SuperResolutionNet(nn.Module):
    def __init__(self, upscale_factor, inplace=False):
        super(SuperResolutionNet, self).__init__()
        self.relu = nn.ReLU(inplace=inplace)
        self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(8, 8, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        self._initialize_weights()

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        x = self.pixel_shuffle(self.conv3(x))
        return x

    def _initialize_weights(self):
        init.orthogonal_(self.conv1.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv2.weight, init.calculate_gain('relu'))
        init.orthogonal_(self.conv3.weight)


torch_model = SuperResolutionNet(upscale_factor=3)
print(torch_model)
x = torch.randn(2, 1, 8, 8, requires_grad=True)
torch_out = torch_model(x)
target = torch.rand(2, 1, 24, 24)
opt = torch.optim.Adam(torch_model.parameters(), lr=1e-3)
for step in range(3):
    loss = nn.functional.mse_loss(torch_model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.5f}")
print(torch_out.shape, f"{torch_model.conv1.weight.flatten(1).matmul(torch_model.conv1.weight.flatten(1).T).trace().item():.3f}")
