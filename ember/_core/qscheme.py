"""Quantization schemes (PyTorch's QScheme): how a quantized tensor's scale and zero point are
given -- one pair for the whole tensor or one per channel, affine or symmetric. ember has no
quantized tensors; the names exist for the code that passes them around (observers, the
quantization test helpers)."""


class qscheme:
    __module__ = "ember"   # printed as PyTorch's torch.qscheme is
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name   # pickles as the module-level name, as PyTorch's do


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
