"""torch.nn.utils: gradient clipping, parameter/vector conversion, rnn packing, reparametrizations."""
