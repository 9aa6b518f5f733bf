"""Transformer encoder language/classifier with a causal mask and padding mask."""
import math
import torch
from torch import nn, Tensor
import torch.nn.functional as F
from torch.nn import TransformerEncoder, TransformerEncoderLayer

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.1):
        super().__init__()
        self.model_type = 'Transformer'
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers,
                                                      enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, src_mask=None, pad_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_mask, src_key_padding_mask=pad_mask)
        return self.linear(output)


ntokens, seq, bsz = 12, 6, 3
model = TransformerModel(ntokens, 16, 2, 32, 2)
print(model)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
src_mask = nn.Transformer.generate_square_subsequent_mask(seq)
print(src_mask)
data = torch.randint(0, ntokens, (seq + 1, bsz))
for epoch in range(3):
    model.train()
    output = model(data[:-1], src_mask)
    loss = criterion(output.view(-1, ntokens), data[1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    scheduler.step()
    print(epoch, f"{loss.item():.4f}", scheduler.get_last_lr())
model.eval()
pad = torch.zeros(bsz, seq, dtype=torch.bool)
pad[0, -2:] = True
with torch.no_grad():
    out = model(data[:-1], src_mask, pad)
print(out.shape, f"{out.abs().mean().item():.4f}")
print(out[0, 0, :4])
# a batch_first classifier with mean pooling over non-padded positions
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                   batch_first=True, norm_first=True, activation="gelu")
enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8),
                            enable_nested_tensor=False)
head = nn.Linear(8, 3)
x = torch.randn(4, 5, 8)
mask = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True], [False] * 5])
opt = torch.optim.AdamW(list(enc.parameters()) + list(head.parameters()), lr=1e-2)
y = torch.tensor([0, 1, 2, 1])
for step in range(3):
    h = enc(x, src_key_padding_mask=mask)
    keep = (~mask).unsqueeze(-1).float()
    pooled = (h * keep).sum(1) / keep.sum(1)
    loss = F.cross_entropy(head(pooled), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, f"{loss.item():.4f}")
mha = nn.MultiheadAttention(8, 2, batch_first=True)
o, w = mha(x, x, x, key_padding_mask=mask)
print(o.shape, w.shape, f"{w.sum(-1).mean().item():.4f}")
