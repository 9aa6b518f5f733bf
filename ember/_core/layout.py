"""torch.layout: how a tensor's elements are stored. ember has dense (strided) tensors only;
`sparse_coo` exists so that checkpoints naming it can be read."""


class layout:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
