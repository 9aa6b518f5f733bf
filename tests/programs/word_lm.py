"""word_language_model style LSTM on a synthetic corpus: batchify, bptt, detach, clip."""
import math
import torch
import torch.nn as nn

torch.manual_seed(1)
ntokens, bsz, bptt = 20, 4, 5
corpus = torch.randint(0, ntokens, (161,))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2, tie_weights=True):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.decoder.out_features)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


train_data = batchify(corpus, bsz)
print(train_data.shape)
model = RNNModel(ntokens, 8, 8, 2)
print(model)
print(sum(p.numel() for p in model.parameters()))
criterion = nn.NLLLoss()
lr = 5.0
for epoch in range(1, 3):
    model.train()
    total_loss = 0.
    hidden = model.init_hidden(bsz)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    print(f"| epoch {epoch} | loss {total_loss / (batch + 1):5.3f} | ppl "
          f"{math.exp(total_loss / (batch + 1)):8.3f} | norm {norm.item():.3f}")
    lr /= 4.0
model.eval()
with torch.no_grad():
    hidden = model.init_hidden(1)
    inp = torch.randint(ntokens, (1, 1), dtype=torch.long)
    words = []
    for i in range(10):
        output, hidden = model(inp, hidden)
        word_weights = output.squeeze().div(1.0).exp().cpu()
        word_idx = torch.multinomial(word_weights, 1)[0]
        inp.fill_(word_idx)
        words.append(int(word_idx))
print(words)
print(hidden[0].shape, hidden[1].shape)
