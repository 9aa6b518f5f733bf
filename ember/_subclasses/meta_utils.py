"""torch._subclasses.meta_utils: PyTorch turns real tensors into meta tensors here (MetaConverter).
Tests use `assert_metadata_eq` to check that a meta tensor describes the same tensor as a real
one: dtype, shape, strides, storage offset, autograd flags, view-ness (recursing into the base),
and the gradient's metadata. ember compares the two tensors directly."""
import weakref


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


class MetaConverter:
    """Turns real tensors into meta tensors that describe them: same dtype, shape, strides and
    storage offset, tensors of one storage on one meta storage, views made as views of their
    base's meta tensor, and autograd flags (leaf or not, requires_grad) as the original's.

    `conv(t)` memoizes per tensor while `t` lives (`tensor_memo`) and per storage
    (`storage_memo`, pruned by `check_for_expired_weak_storages`); a non-tensor comes back as
    it is. `successful()` says whether every tensor seen could be converted (quantized ones
    cannot: they give NotImplemented)."""

    def __init__(self, *, copy_data=False):
        self.tensor_memo = weakref.WeakValueDictionary()
        self.storage_memo = weakref.WeakValueDictionary()
        self._real_storages = {}   # storage key -> weakref to the real storage
        self.hit = 0
        self.miss = 0
        self.copy_data = copy_data

    def successful(self):
        return self.hit > 0 and self.miss == 0

    def check_for_expired_weak_storages(self):
        for key, ref in list(self._real_storages.items()):
            if ref() is None:
                del self._real_storages[key]
                self.storage_memo.pop(key, None)

    def __call__(self, t, shape_env=None, *, callback=None, source=None, symbolic_context=None,
                 trace=True):
        import ember
        if not isinstance(t, ember.Tensor):
            return t
        if t.is_quantized or t.device.type == "lazy":
            self.miss += 1
            return NotImplemented
        self.hit += 1
        r = self._meta_tensor(t)
        if callback is not None:
            r = callback(lambda: r)
        return r

    def _meta_storage(self, t):
        s = t.untyped_storage()
        key = id(s)
        m = self.storage_memo.get(key)
        if m is None or self._real_storages.get(key, lambda: None)() is not s:
            import ember
            m = ember.UntypedStorage(s.nbytes(), device="meta")
            self.storage_memo[key] = m
            self._real_storages[key] = weakref.ref(s)
        return m

    def _meta_tensor(self, t):
        key = id(t)
        r = self.tensor_memo.get(key)
        if r is not None:
            return r
        import ember
        if t._is_view() and t._base is not None:
            r = self._meta_view(t, self._meta_tensor(t._base))
        else:
            with ember.no_grad():
                r = ember.empty((0,), dtype=t.dtype, device="meta")
                r.set_(self._meta_storage(t), t.storage_offset(), t.shape, t.stride())
            if t.requires_grad:
                r.requires_grad_(True)
                if not t.is_leaf:   # a result of autograd: give it a history of its own
                    with ember.enable_grad():
                        r = r.clone(memory_format=ember.preserve_format)
            if t.is_leaf and t.grad is not None:
                r.grad = self._meta_tensor(t.grad)
        self.tensor_memo[key] = r
        weakref.finalize(t, _forget, weakref.ref(self), key)
        return r

    def _meta_view(self, t, base):
        import ember
        src = base
        if base.dtype != t.dtype:   # view_as_real / .real / .imag, or view_as_complex
            n = base.untyped_storage().nbytes() // base.dtype.itemsize
            with ember.set_grad_enabled(t.requires_grad):
                src = base.as_strided((n,), (1,), 0)
                if base.is_complex():
                    src = ember.view_as_real(src)
                else:
                    src = ember.view_as_complex(src.as_strided((n // 2, 2), (2, 1), 0))
        if t.requires_grad and not base.requires_grad:
            # a view that requires grad of a base that does not: view it through a leaf alias
            with ember.no_grad():
                src = src.view(src.shape)
            src.requires_grad_(True)
        with ember.set_grad_enabled(t.requires_grad):
            r = src.as_strided(t.shape, t.stride(), t.storage_offset())
        if t.is_conj() and not r.is_conj():
            r = r.conj()
        if t.is_neg() and not r.is_neg():
            r = r._neg_view()
        return r


def _forget(converter_ref, key):
    conv = converter_ref()
    if conv is not None:
        conv.tensor_memo.pop(key, None)
