"""torch._subclasses.meta_utils: PyTorch turns real tensors into meta tensors here. Tests use
`assert_metadata_eq` to check that a meta tensor describes the same tensor as a real one: dtype,
shape, strides, storage offset, autograd flags, view-ness (recursing into the base), and the
gradient's metadata. ember compares the two tensors directly."""


def assert_metadata_eq(assert_eq, m1, m2, *, skip_symbolic=False, skip_leaf=False):
    """Call `assert_eq(a, b)` on each piece of metadata of tensors `m1` and `m2`."""
    def go(m1, m2):
        assert_eq(m1.dtype, m2.dtype)
        if not skip_symbolic:
            assert_eq(m1.shape, m2.shape)
        assert_eq(m1.requires_grad, m2.requires_grad)
        if not skip_leaf:
            assert_eq(m1.is_leaf, m2.is_leaf)
        assert_eq(m1.is_sparse, m2.is_sparse)
        assert_eq(m1.is_inference(), m2.is_inference())
        assert_eq(m1.is_conj(), m2.is_conj())
        assert_eq(m1.is_neg(), m2.is_neg())
        assert_eq(m1.grad is not None, m2.grad is not None)
        if m1.grad is not None:
            go(m1.grad, m2.grad)
        if m1.is_sparse:
            assert_eq(m1.layout, m2.layout)
            assert_eq(m1.dense_dim(), m2.dense_dim())
            assert_eq(m1.sparse_dim(), m2.sparse_dim())
            assert_eq(m1.is_coalesced(), m2.is_coalesced())
            return
        if not skip_symbolic:
            assert_eq(m1.stride(), m2.stride())
            assert_eq(m1.storage_offset(), m2.storage_offset())
        assert_eq(m1._is_view(), m2._is_view())
        if m1._is_view():
            go(m1._base, m2._base)

    go(m1, m2)
