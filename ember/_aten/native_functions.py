"""Every built-in op's schema, in one place (PyTorch's native_functions.yaml).

One line per op, in PyTorch's schema syntax, then `|` and its variants:

    exp(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out

From that line the registry defines the op `exp` and its in-place twin `exp_` (schema derived,
kernel wrapped from exp's, derivative reused: `ember/_dispatch/schema.py` and
`ember/_aten/inplace.py`), and `ember/_bindings/codegen.py` generates `ember.exp(input, *,
out=None)`, `Tensor.exp()`, `Tensor.exp_()` and `ember.exp_()` with PyTorch's Python signatures
and docstrings. An op without variants is reached through other bindings or `ember.ops.aten`.

`Tensor(a)` in a return marks a view of the input, `Tensor(a!)` an argument the op writes to.
`Tensor|Scalar` marks a tensor argument that PyTorch's Python bindings also accept as a number.
Kernels are registered per dispatch key by the family modules next to this file (one section
here per family module); derivatives by `ember/autograd/derivatives/`.
"""
from .._dispatch import dispatcher as _dispatcher

DECLARATIONS = """
# ==== elementwise: arithmetic, comparisons, logical and bitwise ops, math functions, activations (_aten/elementwise.py)
# ---- binary arithmetic, comparisons, logical and bitwise ops
add.Tensor(Tensor|Scalar self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor  | function, method, inplace, out
sub.Tensor(Tensor|Scalar self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor  | function, method, inplace, out, alias subtract
rsub.Tensor(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor  | function
mul.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias multiply
div.Tensor_mode(Tensor|Scalar self, Tensor|Scalar other, *, str? rounding_mode=None) -> Tensor  | function, method, inplace, out, alias divide, alias true_divide
floor_divide(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, out
floor_divide_.Tensor(Tensor(a!) self, Tensor|Scalar other) -> Tensor(a!)  | method
remainder.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor  | function, out
pow.Tensor_Tensor(Tensor|Scalar self, Tensor|Scalar exponent) -> Tensor  | function, method, out
pow_.Tensor(Tensor(a!) self, Tensor|Scalar exponent) -> Tensor(a!)  | method
maximum(Tensor self, Tensor other) -> Tensor  | function, method, out
minimum(Tensor self, Tensor other) -> Tensor  | function, method, out
eq.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
ne.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias not_equal
lt.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias less
le.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias less_equal
gt.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias greater
ge.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out, alias greater_equal
logical_and(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
logical_or(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
logical_xor(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
bitwise_and.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
bitwise_or.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
bitwise_xor.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
where.self(Tensor condition, Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, out
clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor  | function, method, inplace, inplace_function, out
clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor  | function, method, inplace, inplace_function, out
# ---- unary math
neg(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias negative
abs(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias absolute
sign(Tensor self) -> Tensor  | function, method, inplace, out
sgn(Tensor self) -> Tensor  | function, method, inplace, out
exp(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
log(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
log1p(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
expm1(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
sqrt(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
rsqrt(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
sin(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
cos(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
tanh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
sigmoid(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
relu(Tensor self) -> Tensor  | function, method, inplace, inplace_function
gelu(Tensor self, *, str approximate="none") -> Tensor  | inplace
silu(Tensor self) -> Tensor  | inplace
softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
logical_not(Tensor self) -> Tensor  | function, method, inplace, out
bitwise_not(Tensor self) -> Tensor  | function, method, inplace, out
# ---- backward helpers (differentiable, so double backward works)
threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor
sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
tanh_backward(Tensor grad_output, Tensor output) -> Tensor
gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor
silu_backward(Tensor grad_output, Tensor self) -> Tensor
softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor
mish_backward(Tensor grad_output, Tensor self) -> Tensor
hardswish_backward(Tensor grad_output, Tensor self) -> Tensor
hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor
hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor
leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor
hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor
softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor
elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor
logit_backward(Tensor grad_output, Tensor self, float? eps=None) -> Tensor
# ---- trigonometric and special functions, rounding, predicates
tan(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
asin(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arcsin
acos(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arccos
atan(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arctan
sinh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
cosh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
asinh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arcsinh
acosh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arccosh
atanh(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias arctanh
log2(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
log10(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
exp2(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
reciprocal(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
erf(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
erfc(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
erfinv(Tensor self) -> Tensor  | function, method, inplace, out
lgamma(Tensor self) -> Tensor  | function, method, inplace, out
digamma(Tensor self) -> Tensor  | function, method, inplace, out
polygamma(int n, Tensor self) -> Tensor  | function, method, out
polygamma_(Tensor(a!) self, int n) -> Tensor(a!)  | method
trunc(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out, alias fix
floor(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
ceil(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
round(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
frac(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
round.decimals(Tensor self, *, int decimals) -> Tensor  | function, method, inplace, inplace_function, out
isnan(Tensor self) -> Tensor  | function, method
isinf(Tensor self) -> Tensor  | function, method
isfinite(Tensor self) -> Tensor  | function, method
isclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> Tensor  | function, method
nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor  | function, method, inplace, inplace_function, out
# ---- more binary and unary math
logaddexp(Tensor self, Tensor other) -> Tensor  | function, method, out
logaddexp2(Tensor self, Tensor other) -> Tensor  | function, method, out
fmax(Tensor self, Tensor other) -> Tensor  | function, method, out
fmin(Tensor self, Tensor other) -> Tensor  | function, method, out
gcd(Tensor self, Tensor other) -> Tensor  | function, method, inplace, inplace_function, out
lcm(Tensor self, Tensor other) -> Tensor  | function, method, inplace, inplace_function, out
heaviside(Tensor self, Tensor values) -> Tensor  | function, method, inplace, out
xlogy.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, inplace_function, out
igamma(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
igammac(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
nextafter(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
sinc(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
deg2rad(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
rad2deg(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
i0(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
logit(Tensor self, float? eps=None) -> Tensor  | function, method, inplace, inplace_function, out
signbit(Tensor self) -> Tensor  | function, method, out
isposinf(Tensor self) -> Tensor  | function, method, out
isneginf(Tensor self) -> Tensor  | function, method, out
isreal(Tensor self) -> Tensor  | function, method
frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)  | function, method, out
angle(Tensor self) -> Tensor  | function, method, out
conj_physical(Tensor self) -> Tensor  | function, method, inplace, inplace_function, out
ldexp.Tensor(Tensor self, Tensor other) -> Tensor  | function, method, inplace, inplace_function, out
fmod.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
hypot(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out
atan2(Tensor self, Tensor other) -> Tensor  | function, method, inplace, out, alias arctan2
copysign.Tensor(Tensor self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
bitwise_left_shift.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
bitwise_right_shift.Tensor(Tensor|Scalar self, Tensor|Scalar other) -> Tensor  | function, method, inplace, out
lerp.Tensor(Tensor self, Tensor end, Tensor|Scalar weight) -> Tensor  | function, method, inplace, out
addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor  | function, method, inplace, out
addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor  | function, method, inplace, out
# ---- activations (selu, celu, rrelu, prelu, softsign, tanhshrink are composites of these)
elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor  | inplace
leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor  | inplace
hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor  | inplace
hardsigmoid(Tensor self) -> Tensor  | inplace
hardswish(Tensor self) -> Tensor  | inplace
mish(Tensor self) -> Tensor  | inplace
log_sigmoid(Tensor self) -> Tensor
threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor  | function, inplace, inplace_function, out
glu(Tensor self, int dim=-1) -> Tensor
hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor  | function, method, out
softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
_prelu_kernel(Tensor self, Tensor weight) -> Tensor
_add_relu.Tensor(Tensor self, Tensor|Scalar other, *, Scalar alpha=1) -> Tensor  | function, inplace, inplace_function, out

# ==== torch.special's own functions (_aten/special.py)
special_i1(Tensor self) -> Tensor
special_xlog1py(Tensor self, Tensor other) -> Tensor
special_erfcx(Tensor self) -> Tensor
special_i0e(Tensor self) -> Tensor
special_i1e(Tensor self) -> Tensor
special_ndtri(Tensor self) -> Tensor
special_log_ndtr(Tensor self) -> Tensor
special_entr(Tensor self) -> Tensor
special_zeta(Tensor self, Tensor other) -> Tensor
special_bessel_j0(Tensor self) -> Tensor
special_bessel_j1(Tensor self) -> Tensor
special_bessel_y0(Tensor self) -> Tensor
special_bessel_y1(Tensor self) -> Tensor
special_modified_bessel_i0(Tensor self) -> Tensor
special_modified_bessel_i1(Tensor self) -> Tensor
special_modified_bessel_k0(Tensor self) -> Tensor
special_modified_bessel_k1(Tensor self) -> Tensor
special_scaled_modified_bessel_k0(Tensor x) -> Tensor
special_scaled_modified_bessel_k1(Tensor x) -> Tensor
special_airy_ai(Tensor x) -> Tensor
special_spherical_bessel_j0(Tensor x) -> Tensor
# ---- the orthogonal polynomials: x and the degree n (a number or a tensor, truncated to an integer)
special_chebyshev_polynomial_t(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_chebyshev_polynomial_u(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_chebyshev_polynomial_v(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_chebyshev_polynomial_w(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_t(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_u(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_v(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_shifted_chebyshev_polynomial_w(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_hermite_polynomial_h(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_hermite_polynomial_he(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_laguerre_polynomial_l(Tensor|Scalar x, Tensor|Scalar n) -> Tensor
special_legendre_polynomial_p(Tensor|Scalar x, Tensor|Scalar n) -> Tensor

# ==== spectral ops (_aten/fft.py): every torch.fft function, stft and istft are built from these
_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor
_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor
_fft_c2c(Tensor self, SymInt[] dim, int normalization, bool forward) -> Tensor
# ---- the torch.fft functions on PyTorch's autocast list, as PyTorch's ops (composites in fft/__init__.py)
fft_fft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_ifft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_rfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_irfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_hfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_ihfft(Tensor self, SymInt? n=None, int dim=-1, str? norm=None) -> Tensor
fft_fft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor
fft_ifft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor
fft_rfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor
fft_irfft2(Tensor self, SymInt[1]? s=None, int[1] dim=[-2,-1], str? norm=None) -> Tensor
fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_ifftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_rfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor
fft_irfftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor

# ==== reductions and scans (_aten/reduction.py)
# ---- norms, medians, nan-reductions, cumulative ops
linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor  | function, method, out
count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor  | function, method
hash_tensor(Tensor self, int[1] dim=[], *, bool keepdim=False, int mode=0) -> Tensor  | function, out
segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor  | function, alias _segment_reduce
median(Tensor self) -> Tensor  | function, method, out
median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
nanmedian(Tensor self) -> Tensor  | function, method, out
nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)  | function, method, out
cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor  | function, method, inplace, out
cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor  | function, method, inplace, out
cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)  | function, method, out
cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)  | function, method, out
logcumsumexp(Tensor self, int dim) -> Tensor  | function, method, out
# ---- sums, means, extremes, statistics
sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor  | function, method, out
mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor  | function, method, out
prod.dim_int(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor  | function, method, out
amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor  | function, method, out
amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor  | function, method, out
max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor  | function, method, out
argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor  | function, method, out
var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor  | function, method, out
std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor  | function, method, out
var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)
logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor  | function, method, out
all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor  | function, method, out
any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor  | function, method, out
# ---- PyTorch's own overloads of ops ember also reaches through others (their nodes have their names)
max(Tensor self) -> Tensor  | function, method, out
min(Tensor self) -> Tensor  | function, method, out

# ==== sorting and selection (_aten/sorting.py)
# ---- sorting and selection
sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)  | function, method, out
topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)  | function, method, out
kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)  | function, method, out
_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)  | function, method
searchsorted.Tensor(Tensor sorted_sequence, Tensor|Scalar self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor  | function, out
bucketize.Tensor(Tensor|Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor  | function, out
histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor  | function, method, out
bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor  | function, method

# ==== automatic mixed precision: GradScaler's two ops (_aten/amp.py)
_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()
_amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> Tensor(a!)

# ==== linear algebra (_aten/linalg.py)
# ---- products
mm(Tensor self, Tensor mat2) -> Tensor  | function, method, out
bmm(Tensor self, Tensor mat2) -> Tensor  | function, method, out
matmul(Tensor self, Tensor other) -> Tensor  | function, method, out
addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method, inplace, out
_addmm_activation(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False) -> Tensor  | function, method, out
linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor
_scaled_mm(Tensor self, Tensor mat2, Tensor scale_a, Tensor scale_b, Tensor? bias=None, Tensor? scale_result=None, ScalarType? out_dtype=None, bool use_fast_accum=False) -> Tensor  | function, out
# ---- products, einsum, decompositions
dot(Tensor self, Tensor tensor) -> Tensor  | function, method, out
vdot(Tensor self, Tensor other) -> Tensor  | function, method, out
mv(Tensor self, Tensor vec) -> Tensor  | function, method, out
addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method, inplace, inplace_function, out
addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method, inplace, out
baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method, inplace, out
addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method, inplace, out
einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor  | function
trace(Tensor self) -> Tensor  | function, method
linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
linalg_inv(Tensor A) -> Tensor
linalg_det(Tensor A) -> Tensor
linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)
linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor
linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> Tensor
linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor
linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)
linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor
linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)
# ---- _ex variants returning LAPACK's info, LDL, eig, matrix_exp, and composites of them
linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)
linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)
linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)
linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots, Tensor info)
linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)
linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, Tensor pivots, Tensor info)
linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor
linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)
linalg_matrix_exp(Tensor self) -> Tensor
_compute_linear_combination(Tensor input, Tensor coefficients) -> Tensor
linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor
linalg_tensorinv(Tensor self, int ind=2) -> Tensor
linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor
# ---- Householder reflectors (linalg/householder.py): geqrf is LAPACK's kernel, the products
# of its reflectors are written from other ops (CompositeImplicitAutograd)
geqrf(Tensor self) -> (Tensor a, Tensor tau)
linalg_householder_product(Tensor input, Tensor tau) -> Tensor
orgqr(Tensor self, Tensor input2) -> Tensor
ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor
# ---- linalg functions PyTorch declares as ops, written from other ops in linalg/
# (CompositeImplicitAutograd, so autocast, explain and the profiler see them by name)
linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor
linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)
pinverse(Tensor self, float rcond=1e-15) -> Tensor
triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)

# ==== neural-network functions (_aten/nn_ops.py, loss.py, ctc.py, rnn.py, conv.py, pooling.py, norm.py)
# ---- softmax and losses (_aten/nn_ops.py, loss.py)
_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor
mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
_nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> Tensor
_softmax_cross_entropy(Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index, float label_smoothing=0.0) -> (Tensor, Tensor)
_softmax_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index, Tensor softmax, float label_smoothing=0.0) -> Tensor
binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
binary_cross_entropy_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor
binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, Tensor? pos_weight=None, int reduction=1) -> Tensor
_binary_cross_entropy_with_logits_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, Tensor? pos_weight, int reduction) -> Tensor
# ---- losses written from other ops: CompositeImplicitAutograd kernels in nn/functional.py (as
# in PyTorch, they are ops so that autocast, explain and the profiler see them by name)
cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100, float label_smoothing=0.0) -> Tensor
l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.0) -> Tensor
huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.0) -> Tensor
soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor
poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) -> Tensor
margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=1) -> Tensor
hinge_embedding_loss(Tensor self, Tensor target, float margin=1.0, int reduction=1) -> Tensor
cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0.0, int reduction=1) -> Tensor
triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, float eps=1e-06, bool swap=False, int reduction=1) -> Tensor
multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, int reduction=1) -> Tensor
multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
# ---- more functions PyTorch declares as ops, written from other ops (CompositeImplicitAutograd)
prelu(Tensor self, Tensor weight) -> Tensor
max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor
adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor
linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor
polar(Tensor abs, Tensor angle) -> Tensor
square(Tensor self) -> Tensor
square_(Tensor(a!) self) -> Tensor(a!)
positive(Tensor(a) self) -> Tensor(a)
quantile(Tensor self, Tensor|Scalar q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor
nanquantile(Tensor self, Tensor|Scalar q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor
cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor
_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor  | function
_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor  | function
conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor
grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor  | function
grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor  | function, alias _grid_sampler_2d_cpu_fallback
grid_sampler_3d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, bool align_corners) -> Tensor  | function
affine_grid_generator(Tensor theta, SymInt[] size, bool align_corners) -> Tensor  | function
ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor
_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)
_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) -> Tensor
# ---- nn functions PyTorch declares as ops and torch.export keeps whole (aten.conv2d, aten.batch_norm,
# ...): CompositeImplicitAutograd kernels in nn/functional.py and _refs/shape.py, written from the
# dedicated kernels below; the ops run_decompositions lowers batch norm and dropout to
conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor
conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor
conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor
conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, str padding="valid", SymInt[1] dilation=1, SymInt groups=1) -> Tensor
conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, str padding="valid", SymInt[2] dilation=1, SymInt groups=1) -> Tensor
conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, str padding="valid", SymInt[3] dilation=1, SymInt groups=1) -> Tensor
thnn_conv2d(Tensor self, Tensor weight, SymInt[2] kernel_size, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0) -> Tensor
slow_conv3d(Tensor self, Tensor weight, SymInt[3] kernel_size, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0) -> Tensor
max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor
max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor
flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)
conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor
conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor
conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor
adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor
group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor
instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor
reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)
contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)
unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)
chunk(Tensor(a) self, int chunks, int dim=0) -> Tensor(a)[]
scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor
dropout(Tensor input, float p, bool train) -> Tensor
batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor
zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)
gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)
softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
_masked_softmax(Tensor self, Tensor mask, int? dim=None, int? mask_type=None) -> Tensor  | function
log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor
native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)  | function
_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)
_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)
# ---- more of PyTorch's batch-norm and dropout entry points, written from the ops above (CompositeImplicitAutograd, _aten/norm.py, nn_ops.py)
_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)  | function
_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)  | function
_batch_norm_with_update(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)
native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor
_safe_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor
_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor
_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor
# ---- CUDA-only in PyTorch (no CPU kernel there either): declared so that code naming them finds
# them; a call raises PyTorch's NotImplementedError for the CPU backend
record_stream(Tensor(a!) self, Stream s) -> ()
_flash_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? cum_seq_q, Tensor? cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, bool return_debug_mask, *, float? scale=None, SymInt? window_size_left=None, SymInt? window_size_right=None, Tensor? seqused_k=None, Tensor? alibi_slopes=None, Tensor? block_table=None, int? num_splits=None) -> (Tensor output, Tensor softmax_logsumexp, Tensor rng_state, Tensor unused, Tensor debug_attn_mask)
_efficient_attention_forward(Tensor query, Tensor key, Tensor value, Tensor? bias, Tensor? cu_seqlens_q, Tensor? cu_seqlens_k, SymInt? max_seqlen_q, SymInt? max_seqlen_k, float dropout_p, int custom_mask_type, bool compute_log_sumexp=False, *, float? scale=None, Tensor? seqlen_k=None, int? window_size=None) -> (Tensor output, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, SymInt max_seqlen_batch_q, SymInt max_seqlen_batch_k)
_scaled_mm_v2(Tensor self, Tensor mat2, Tensor[] scale_a, int[] recipe_a, int[] swizzle_a, Tensor[] scale_b, int[] recipe_b, int[] swizzle_b, Tensor? bias, ScalarType? out_dtype, int[] contraction_dim=[], bool use_fast_accum=False) -> Tensor  | function
# ---- recurrent layers (_aten/rnn.py)
_rnn_layer(Tensor input, Tensor weight_ih, Tensor weight_hh, Tensor? bias_ih, Tensor? bias_hh, Tensor? weight_hr, Tensor hx, Tensor? cx, str mode, int[] batch_sizes, bool reverse) -> (Tensor, Tensor, Tensor, Tensor)
_rnn_layer_backward(Tensor input, Tensor weight_ih, Tensor weight_hh, Tensor? weight_hr, Tensor output, Tensor workspace, Tensor grad_output, Tensor grad_hy, Tensor? grad_cy, str mode, int[] batch_sizes, bool reverse, bool[8] output_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor)
# ---- convolution, pooling, normalization, embedding, padding
convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor  | function
_convolution_backward_input(Tensor grad_output, Tensor weight, int[] input_size, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
_convolution_backward_weight(Tensor grad_output, Tensor input, int[] weight_size, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, Tensor? columns=None) -> Tensor
_convolution_double_backward(Tensor? ggI, Tensor? ggW, Tensor? ggb, Tensor gO, Tensor weight, Tensor self, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
convolution_backward(Tensor grad_output, Tensor input, Tensor weight, int[]? bias_sizes, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
_convolution_with_columns(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> (Tensor, Tensor)
im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
col2im(Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
pixel_shuffle(Tensor self, int upscale_factor) -> Tensor
pixel_unshuffle(Tensor self, int downscale_factor) -> Tensor
max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor
max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor
avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
_adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor
_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor
_adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor
_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor
adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor
adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor
fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> (Tensor, Tensor)
fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> (Tensor, Tensor)
max_unpool2d(Tensor self, Tensor indices, int[2] output_size) -> Tensor
max_unpool3d(Tensor self, Tensor indices, int[3] output_size, int[3] stride, int[3] padding) -> Tensor
native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!)? running_mean, Tensor(b!)? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)  | function, out
native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)  | function
native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)  | function
native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
_weight_norm_interface(Tensor v, Tensor g, int dim=0) -> (Tensor, Tensor)  | function
_weight_norm_interface_backward(Tensor grad_w, Tensor saved_v, Tensor saved_g, Tensor saved_norms, int dim) -> (Tensor, Tensor)
embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor  | function
embedding_dense_backward(Tensor grad_output, Tensor indices, int num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor
embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)  | function
_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)  | function
_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)  | function
_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, int padding_idx=-1) -> Tensor
_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor
one_hot(Tensor self, int num_classes=-1) -> Tensor
constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor  | function
reflection_pad1d(Tensor self, int[2] padding) -> Tensor
reflection_pad1d_backward(Tensor grad_output, Tensor self, int[2] padding) -> Tensor
reflection_pad2d(Tensor self, int[4] padding) -> Tensor
reflection_pad2d_backward(Tensor grad_output, Tensor self, int[4] padding) -> Tensor
reflection_pad3d(Tensor self, int[6] padding) -> Tensor
reflection_pad3d_backward(Tensor grad_output, Tensor self, int[6] padding) -> Tensor
replication_pad1d(Tensor self, int[2] padding) -> Tensor
replication_pad1d_backward(Tensor grad_output, Tensor self, int[2] padding) -> Tensor
replication_pad2d(Tensor self, int[4] padding) -> Tensor
replication_pad2d_backward(Tensor grad_output, Tensor self, int[4] padding) -> Tensor
replication_pad3d(Tensor self, int[6] padding) -> Tensor
replication_pad3d_backward(Tensor grad_output, Tensor self, int[6] padding) -> Tensor

# ==== views, shape and copies (_aten/shape.py)
# ---- views
view(Tensor(a) self, int[] size) -> Tensor(a)  | method
_unsafe_view(Tensor self, int[] size) -> Tensor
repeat(Tensor self, int[] repeats) -> Tensor
permute(Tensor(a) self, int[] dims) -> Tensor(a)  | function, method
transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)  | function, method, alias swapaxes(axis0, axis1), alias swapdims
expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)  | method
squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)  | function, method, inplace
unsqueeze(Tensor(a) self, int dim) -> Tensor(a)  | function, method, inplace
select.int(Tensor(a) self, int dim, int index) -> Tensor(a)  | function, method
slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)
narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)  | function, method
as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)  | function, method, inplace, inplace_function
diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)  | function, method
unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)  | method
split_with_sizes(Tensor(a) self, int[] split_sizes, int dim=0) -> Tensor(a)[]  | function, method
unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]  | function, method
alias(Tensor(a) self) -> Tensor(a)
_conj(Tensor(a) self) -> Tensor(a)  | function, method
_neg_view(Tensor(a) self) -> Tensor(a)  | function, method
detach(Tensor(a) self) -> Tensor(a)
_local_scalar_dense(Tensor self) -> Scalar
view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)  | method
view_as_real(Tensor(a) self) -> Tensor(a)  | function
view_as_complex(Tensor(a) self) -> Tensor(a)  | function
slice_inverse(Tensor(a) self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)  | function, method
# ---- the views' copies (PyTorch's ops for functionalization): the view's result in fresh
# contiguous memory, with the view's derivative (bindings in _refs/copy_variants.py)
view_copy(Tensor self, SymInt[] size) -> Tensor
view_copy.dtype(Tensor self, ScalarType dtype) -> Tensor
permute_copy(Tensor self, int[] dims) -> Tensor
t_copy(Tensor self) -> Tensor
transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor
squeeze_copy(Tensor self) -> Tensor
squeeze_copy.dim(Tensor self, int dim) -> Tensor
squeeze_copy.dims(Tensor self, int[] dim) -> Tensor
unsqueeze_copy(Tensor self, int dim) -> Tensor
select_copy.int(Tensor self, int dim, SymInt index) -> Tensor
slice_copy.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor
diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor
expand_copy(Tensor self, SymInt[] size, *, bool implicit=False) -> Tensor
unbind_copy.int(Tensor self, int dim=0) -> Tensor[]
split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
split_with_sizes_copy(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
detach_copy(Tensor self) -> Tensor
alias_copy(Tensor self) -> Tensor
unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor
as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor
view_as_real_copy(Tensor self) -> Tensor
view_as_complex_copy(Tensor self) -> Tensor
# ---- copies, joins, conversions
clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor  | function, method
_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None) -> Tensor
cat(Tensor[] tensors, int dim=0) -> Tensor  | function, out, alias concat, alias concatenate
_chunk_cat(Tensor[] tensors, int dim, int num_chunks) -> Tensor  | function, out
stack(Tensor[] tensors, int dim=0) -> Tensor  | function, out
copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)  | method
copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor
fill.Scalar(Tensor self, Scalar value) -> Tensor
fill.Tensor(Tensor self, Tensor value) -> Tensor
fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)  | function, method
fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)
zero_(Tensor(a!) self) -> Tensor(a!)  | function, method
flip(Tensor self, int[] dims) -> Tensor  | function, method
roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor  | function, method
tril(Tensor self, int diagonal=0) -> Tensor  | function, method, inplace, out
triu(Tensor self, int diagonal=0) -> Tensor  | function, method, inplace, out
# ---- shape and scatter ops
diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor  | function, method
rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor  | function, method
select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor  | function, method
slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor  | function, method, out
diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor  | function, method
unfold_backward(Tensor grad_in, SymInt[] input_sizes, int dim, int size, int step) -> Tensor
# ---- PyTorch's own overloads of ops ember also reaches through others (their nodes have their names)
t(Tensor(a) self) -> Tensor(a)  | function, method, inplace
squeeze(Tensor(a) self) -> Tensor(a)  | function, method, inplace
squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)  | function, method, inplace
split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor(a)[]  | function, method
# ---- in-place view ops: new sizes and strides for `self` over the same memory; and resizing
transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)  | method
swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)  | method
swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)  | method
resize_(Tensor(a!) self, int[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)  | method
resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)  | method
set_.source_Tensor(Tensor(a!) self, Tensor source) -> Tensor(a!)
# ---- metadata queries as ops (_aten/tensor_metadata.py)
is_contiguous(Tensor self) -> bool
is_contiguous.memory_format(Tensor self, MemoryFormat memory_format) -> bool
is_strides_like_format(Tensor self, MemoryFormat memory_format) -> bool
is_non_overlapping_and_dense(Tensor self) -> bool
stride(Tensor self) -> int[]
sym_stride(Tensor self) -> int[]
# ---- metadata assertions (what compiled graphs check of their inputs)
_assert_tensor_metadata(Tensor a, int[]? size=None, int[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()  | function
# ---- ops PyTorch declares for its own autograd tests: copies with a recognizable backward
_test_autograd_multiple_dispatch.fullcoverage(Tensor self) -> Tensor  | function
_test_autograd_multiple_dispatch_view(Tensor(a) self) -> Tensor(a)  | function
_test_autograd_multiple_dispatch_view_copy(Tensor self) -> Tensor  | function
_test_warn_in_autograd(Tensor self) -> Tensor

# ==== indexing and scatter (_aten/indexing.py)
# ---- indexing
index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor  | function, method, inplace, inplace_function
_unsafe_masked_index(Tensor self, Tensor mask, Tensor?[] indices, Scalar fill) -> Tensor  | function
_unsafe_masked_index_put_accumulate(Tensor self, Tensor mask, Tensor?[] indices, Tensor values) -> Tensor  | function
masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor  | function, method, inplace
masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor  | inplace
index_select(Tensor self, int dim, Tensor index) -> Tensor  | function, method, out
gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor  | function, method, out
scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor  | function, method, inplace, out
scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor  | function, method, inplace, out
scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor  | function, method, inplace, out
index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor  | function, method, inplace, out
index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor  | function, method, inplace
index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor  | inplace
masked_select(Tensor self, Tensor mask) -> Tensor  | function, method, out
nonzero(Tensor self) -> Tensor
nonzero.as_tuple(Tensor self) -> Tensor[]
# ---- scatter reductions, copies and puts
scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor  | function, method, inplace, out
scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor  | function, method, inplace, out
scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor  | function, method, inplace, out
masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor  | function, method, inplace
index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor  | function, method, inplace, out
put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor  | function, method, inplace
take(Tensor self, Tensor index) -> Tensor  | function, method, out
index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor  | function, method, inplace, out

# ==== factories and random sampling (_aten/factory.py)
# ---- factories (the device argument picks the dispatch key)
empty.memory_format(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor  | function, out
empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
eye.m(int n, int m, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
scalar_tensor(Scalar s, *, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
# ---- Scalar overloads core ATen graphs name (_aten/scalar_overloads.py)
mul.Scalar(Tensor self, Scalar other) -> Tensor
eq.Scalar(Tensor self, Scalar other) -> Tensor
any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor
full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
_new_zeros_with_same_feature_meta(Tensor self, Tensor other, *, int self_num_batch_dims=0) -> Tensor
ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like(Tensor self, int high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
randint_like.low_dtype(Tensor self, int low, int high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor
new_empty(Tensor self, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_zeros(Tensor self, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_ones(Tensor self, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
new_full(Tensor self, int[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor
_tensor_from_data(Any data, *, ScalarType? dtype=None, Device? device=None) -> Tensor
uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)  | method
normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)  | method
normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor
normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor
normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor
random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)  | method
bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
bernoulli(Tensor self, *, Generator? generator=None) -> Tensor  | function, method, out
randperm(int n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor  | function, out
# ---- random sampling
random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)  | method
exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)  | method
geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)  | method
cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor(a!)  | method
log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None) -> Tensor(a!)  | method
multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor  | function, method, out
poisson(Tensor self, Generator? generator=None) -> Tensor  | function
# ==== sparse COO tensors: construction, conversion, coalescing (_aten/sparse.py)
_sparse_coo_tensor_with_dims_and_tensors(int sparse_dim, int dense_dim, int[] size, Tensor indices, Tensor values, *, bool? is_coalesced=None) -> Tensor
_to_dense(Tensor self, ScalarType? dtype=None) -> Tensor
_to_sparse.sparse_dim(Tensor self, int? sparse_dim=None) -> Tensor
_coalesce(Tensor self) -> Tensor
_values(Tensor(a) self) -> Tensor(a)
_indices(Tensor(a) self) -> Tensor(a)
sparse_mask(Tensor self, Tensor mask) -> Tensor  | method
# ---- products of a sparse matrix with a dense one that keep a sparse result (hsmm, saddmm,
# smm are torch's names for these too: _bindings/sparse.py)
hspmm(Tensor mat1, Tensor mat2) -> Tensor  | function
sspaddmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor  | function, method
resize_as_sparse_(Tensor(a!) self, Tensor the_template) -> Tensor(a!)  | function, method
# ==== sparse compressed tensors (CSR, CSC, BSR, BSC): construction, conversion, their parts
# (_aten/sparse_compressed.py); layout is the layout's name ("sparse_csr")
_sparse_compressed_tensor_unsafe(Tensor compressed_indices, Tensor plain_indices, Tensor values, int[] size, str layout) -> Tensor
_to_sparse_csr(Tensor self, int? dense_dim=None) -> Tensor
_to_sparse_csc(Tensor self, int? dense_dim=None) -> Tensor
_to_sparse_bsr(Tensor self, int[2] blocksize, int? dense_dim=None) -> Tensor
_to_sparse_bsc(Tensor self, int[2] blocksize, int? dense_dim=None) -> Tensor
crow_indices(Tensor(a) self) -> Tensor(a)
col_indices(Tensor(a) self) -> Tensor(a)
ccol_indices(Tensor(a) self) -> Tensor(a)
row_indices(Tensor(a) self) -> Tensor(a)
values(Tensor(a) self) -> Tensor(a)
sparse_sampled_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
"""


def _define_all():
    """Define every declared op, and the in-place variant of each op that has one."""
    ops = {}
    for line in DECLARATIONS.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op = _dispatcher.define(line)
            ops[op.short_name] = op
            if "inplace" in op.schema.variants:
                inplace = _dispatcher.define(op.schema.inplace_text())
                inplace.functional = op
                ops[inplace.__name__] = inplace
    return ops


OPS = _define_all()
