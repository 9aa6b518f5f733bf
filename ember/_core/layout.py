"""torch.layout: how a tensor's elements are stored. Dense tensors are `strided`; `sparse_coo`
stores coordinates and values (ember/_core/sparse.py); the four compressed layouts store one
row (or column) pointer array, the other index of each entry, and the values
(ember/_core/sparse_compressed.py)."""


class layout:
    def __init__(self, name, c10_name):
        self.name = name
        self.c10_name = c10_name  # how PyTorch's errors name it: "got SparseCsr"

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):  # pickled by name: the same object comes back
        return self.name


strided = layout("strided", "Strided")
sparse_coo = layout("sparse_coo", "Sparse")
sparse_csr = layout("sparse_csr", "SparseCsr")
sparse_csc = layout("sparse_csc", "SparseCsc")
sparse_bsr = layout("sparse_bsr", "SparseBsr")
sparse_bsc = layout("sparse_bsc", "SparseBsc")
# mkldnn (oneDNN) tensors: ember has none (torch.backends.mkldnn.is_available() is False), but
# the layout object exists, as in every PyTorch build
_mkldnn = layout("_mkldnn", "Mkldnn")
