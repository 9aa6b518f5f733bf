"""The coverage additions' behaviour outside the op table: deprecation warnings (category as
PyTorch's), the removed functions, and that every added name exists where torch has it."""
import warnings

import pytest

import ember

torch = pytest.importorskip("torch")

ADDED = ("diff cov corrcoef cartesian_prod combinations block_diag diagflat vander trapezoid "
         "trapz cumulative_trapezoid histogram histogramdd isin unravel_index range "
         "bartlett_window blackman_window hamming_window hann_window kaiser_window renorm dist "
         "inner chain_matmul frombuffer empty_permuted split_with_sizes unsafe_split "
         "unsafe_chunk unsafe_split_with_sizes index_put index_put_ nonzero_static view_copy "
         "permute_copy t_copy transpose_copy squeeze_copy unsqueeze_copy select_copy slice_copy "
         "diagonal_copy expand_copy unbind_copy split_copy split_with_sizes_copy detach_copy "
         "alias_copy unfold_copy as_strided_copy as_strided_scatter view_as_real_copy "
         "view_as_complex_copy cholesky_solve cholesky_inverse lu lu_unpack lu_solve matrix_exp "
         "triangular_solve geqrf orgqr ormqr binomial _standard_gamma _sample_dirichlet "
         "matrix_rank solve lstsq eig symeig gradient frobenius_norm nuclear_norm "
         "norm_except_dim svd_lowrank pca_lowrank adjoint").split()
ADDED_METHODS = ("diff cov corrcoef diagflat histogram renorm renorm_ dist inner "
                 "new_empty_strided split_with_sizes unsafe_split unsafe_chunk "
                 "unsafe_split_with_sizes nonzero_static as_strided_scatter triangular_solve "
                 "cholesky_solve cholesky_inverse matrix_exp lu lu_solve geqrf orgqr ormqr solve "
                 "lstsq eig symeig adjoint").split()
ADDED_LINALG = ("solve_triangular matrix_exp cond lu lu_factor lu_factor_ex lu_solve "
                "householder_product eig eigvals").split()


@pytest.mark.parametrize("where,names", [("", ADDED), ("Tensor.", ADDED_METHODS),
                                         ("linalg.", ADDED_LINALG)])
def test_names_exist_where_torch_has_them(where, names):
    t_ns = {"": torch, "Tensor.": torch.Tensor, "linalg.": torch.linalg}[where]
    e_ns = {"": ember, "Tensor.": ember.Tensor, "linalg.": ember.linalg}[where]
    for name in names:
        assert hasattr(t_ns, name), f"torch has no {where}{name} (fix the list)"
        assert callable(getattr(e_ns, name, None)), f"ember.{where}{name} is missing"


def _warning_categories(m, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(m)
    return {w.category for w in caught}


@pytest.mark.parametrize("call", [
    lambda m: m.range(0, 3),
    lambda m: m.chain_matmul(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2)),
    lambda m: m.lu(m.eye(2)),
    lambda m: m.lu_solve(m.ones(2, 1), *m.linalg.lu_factor(m.eye(2))),
    lambda m: m.frobenius_norm(m.ones(2, 2), (0, 1)),
    lambda m: m.nuclear_norm(m.ones(2, 2)),
], ids=["range", "chain_matmul", "triangular_solve", "lu", "lu_solve", "frobenius_norm",
        "nuclear_norm"])
def test_deprecation_warnings(call):
    """Most of these are TORCH_WARN_ONCE in torch: silent after the first call in a process
    (earlier tests may have made it), so both run with set_warn_always, under which they warn
    every time."""
    cats = []
    for m in (torch, ember):
        m.set_warn_always(True)
        try:
            cats.append(_warning_categories(m, call))
        finally:
            m.set_warn_always(False)
    assert cats[1] == cats[0] == {UserWarning}, f"ember warns {cats[1]}, torch {cats[0]}"


def test_range_values_and_dtype():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args in ((0, 3), (1, 2, 0.25), (5, -1, -2)):
            e, t = ember.range(*args), torch.range(*args)
            assert str(e.dtype) == str(t.dtype) and e.tolist() == t.tolist()


def test_eig_records_its_node_as_torch():
    """eig is differentiable (it used to refuse inputs that require grad): its outputs, and
    eigvals', come from LinalgEigBackward0 as in PyTorch (values and gradients: op_db_linalg)."""
    for lib in (ember, torch):
        A = lib.eye(2, requires_grad=True)
        values, vectors = lib.linalg.eig(A)
        assert type(values.grad_fn).__name__ == "LinalgEigBackward0"
        assert type(lib.linalg.eigvals(A).grad_fn).__name__ == "LinalgEigBackward0"
        with lib.no_grad():
            assert str(lib.linalg.eigvals(A).dtype).endswith("complex64")


def test_samplers_are_reproducible_with_a_generator():
    count, prob = ember.full((50,), 10.0), ember.full((50,), 0.4)
    a = ember.binomial(count, prob, generator=ember.Generator().manual_seed(3))
    b = ember.binomial(count, prob, generator=ember.Generator().manual_seed(3))
    assert a.tolist() == b.tolist() and a.dtype is ember.float32
    g = ember._standard_gamma(ember.full((50,), 2.0), generator=ember.Generator().manual_seed(1))
    assert bool((g > 0).all())
