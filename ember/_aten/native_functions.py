"""Every built-in op's schema, in one place (PyTorch's native_functions.yaml).

One line per op, in PyTorch's schema syntax. `Tensor(a)` in a return marks a view of the input,
`Tensor(a!)` an argument the op writes to. Kernels are registered per dispatch key by the
family modules next to this file; derivatives by `ember/autograd/derivatives.py`. A position
typed `Tensor` may also receive a Python number (PyTorch's wrapped scalars).
"""
from .._dispatch import dispatcher as _dispatcher

DECLARATIONS = """
# ---- elementwise binary
add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
mul.Tensor(Tensor self, Tensor other) -> Tensor
mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode=None) -> Tensor
div_.Tensor_mode(Tensor(a!) self, Tensor other, *, str? rounding_mode=None) -> Tensor(a!)
floor_divide(Tensor self, Tensor other) -> Tensor
floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
remainder.Tensor(Tensor self, Tensor other) -> Tensor
remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor
pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor
pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)
maximum(Tensor self, Tensor other) -> Tensor
minimum(Tensor self, Tensor other) -> Tensor
eq.Tensor(Tensor self, Tensor other) -> Tensor
ne.Tensor(Tensor self, Tensor other) -> Tensor
lt.Tensor(Tensor self, Tensor other) -> Tensor
le.Tensor(Tensor self, Tensor other) -> Tensor
gt.Tensor(Tensor self, Tensor other) -> Tensor
ge.Tensor(Tensor self, Tensor other) -> Tensor
logical_and(Tensor self, Tensor other) -> Tensor
logical_or(Tensor self, Tensor other) -> Tensor
logical_xor(Tensor self, Tensor other) -> Tensor
bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor
where.self(Tensor condition, Tensor self, Tensor other) -> Tensor
clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor
clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)
clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor
clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)

# ---- elementwise unary
neg(Tensor self) -> Tensor
abs(Tensor self) -> Tensor
sign(Tensor self) -> Tensor
exp(Tensor self) -> Tensor
log(Tensor self) -> Tensor
log1p(Tensor self) -> Tensor
expm1(Tensor self) -> Tensor
sqrt(Tensor self) -> Tensor
rsqrt(Tensor self) -> Tensor
sin(Tensor self) -> Tensor
cos(Tensor self) -> Tensor
tanh(Tensor self) -> Tensor
sigmoid(Tensor self) -> Tensor
relu(Tensor self) -> Tensor
relu_(Tensor(a!) self) -> Tensor(a!)
gelu(Tensor self, *, str approximate="none") -> Tensor
silu(Tensor self) -> Tensor
softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor
logical_not(Tensor self) -> Tensor
bitwise_not(Tensor self) -> Tensor
# backward helpers (differentiable, so double backward works)
threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor
sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor
tanh_backward(Tensor grad_output, Tensor output) -> Tensor
gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor

# ---- elementwise math: trig, special functions, rounding, predicates (issue 3a)
tan(Tensor self) -> Tensor
tan_(Tensor(a!) self) -> Tensor(a!)
asin(Tensor self) -> Tensor
asin_(Tensor(a!) self) -> Tensor(a!)
acos(Tensor self) -> Tensor
acos_(Tensor(a!) self) -> Tensor(a!)
atan(Tensor self) -> Tensor
atan_(Tensor(a!) self) -> Tensor(a!)
sinh(Tensor self) -> Tensor
sinh_(Tensor(a!) self) -> Tensor(a!)
cosh(Tensor self) -> Tensor
cosh_(Tensor(a!) self) -> Tensor(a!)
asinh(Tensor self) -> Tensor
asinh_(Tensor(a!) self) -> Tensor(a!)
acosh(Tensor self) -> Tensor
acosh_(Tensor(a!) self) -> Tensor(a!)
atanh(Tensor self) -> Tensor
atanh_(Tensor(a!) self) -> Tensor(a!)
log2(Tensor self) -> Tensor
log2_(Tensor(a!) self) -> Tensor(a!)
log10(Tensor self) -> Tensor
log10_(Tensor(a!) self) -> Tensor(a!)
exp2(Tensor self) -> Tensor
exp2_(Tensor(a!) self) -> Tensor(a!)
reciprocal(Tensor self) -> Tensor
reciprocal_(Tensor(a!) self) -> Tensor(a!)
erf(Tensor self) -> Tensor
erf_(Tensor(a!) self) -> Tensor(a!)
erfc(Tensor self) -> Tensor
erfc_(Tensor(a!) self) -> Tensor(a!)
erfinv(Tensor self) -> Tensor
erfinv_(Tensor(a!) self) -> Tensor(a!)
lgamma(Tensor self) -> Tensor
lgamma_(Tensor(a!) self) -> Tensor(a!)
digamma(Tensor self) -> Tensor
digamma_(Tensor(a!) self) -> Tensor(a!)
polygamma(int n, Tensor self) -> Tensor
polygamma_(Tensor(a!) self, int n) -> Tensor(a!)
trunc(Tensor self) -> Tensor
trunc_(Tensor(a!) self) -> Tensor(a!)
floor(Tensor self) -> Tensor
floor_(Tensor(a!) self) -> Tensor(a!)
ceil(Tensor self) -> Tensor
ceil_(Tensor(a!) self) -> Tensor(a!)
round(Tensor self) -> Tensor
round_(Tensor(a!) self) -> Tensor(a!)
frac(Tensor self) -> Tensor
frac_(Tensor(a!) self) -> Tensor(a!)
neg_(Tensor(a!) self) -> Tensor(a!)
abs_(Tensor(a!) self) -> Tensor(a!)
sign_(Tensor(a!) self) -> Tensor(a!)
exp_(Tensor(a!) self) -> Tensor(a!)
log_(Tensor(a!) self) -> Tensor(a!)
log1p_(Tensor(a!) self) -> Tensor(a!)
expm1_(Tensor(a!) self) -> Tensor(a!)
sqrt_(Tensor(a!) self) -> Tensor(a!)
rsqrt_(Tensor(a!) self) -> Tensor(a!)
sin_(Tensor(a!) self) -> Tensor(a!)
cos_(Tensor(a!) self) -> Tensor(a!)
tanh_(Tensor(a!) self) -> Tensor(a!)
sigmoid_(Tensor(a!) self) -> Tensor(a!)
logical_not_(Tensor(a!) self) -> Tensor(a!)
bitwise_not_(Tensor(a!) self) -> Tensor(a!)
round.decimals(Tensor self, *, int decimals) -> Tensor
round_.decimals(Tensor(a!) self, *, int decimals) -> Tensor(a!)
isnan(Tensor self) -> Tensor
isinf(Tensor self) -> Tensor
isfinite(Tensor self) -> Tensor
nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor
nan_to_num_(Tensor(a!) self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor(a!)
# torch's remaining public elementwise callables (coverage)
logaddexp(Tensor self, Tensor other) -> Tensor
logaddexp2(Tensor self, Tensor other) -> Tensor
fmax(Tensor self, Tensor other) -> Tensor
fmin(Tensor self, Tensor other) -> Tensor
gcd(Tensor self, Tensor other) -> Tensor
gcd_(Tensor(a!) self, Tensor other) -> Tensor(a!)
lcm(Tensor self, Tensor other) -> Tensor
lcm_(Tensor(a!) self, Tensor other) -> Tensor(a!)
heaviside(Tensor self, Tensor values) -> Tensor
heaviside_(Tensor(a!) self, Tensor values) -> Tensor(a!)
xlogy.Tensor(Tensor self, Tensor other) -> Tensor
xlogy_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
igamma(Tensor self, Tensor other) -> Tensor
igamma_(Tensor(a!) self, Tensor other) -> Tensor(a!)
igammac(Tensor self, Tensor other) -> Tensor
igammac_(Tensor(a!) self, Tensor other) -> Tensor(a!)
nextafter(Tensor self, Tensor other) -> Tensor
nextafter_(Tensor(a!) self, Tensor other) -> Tensor(a!)
sinc(Tensor self) -> Tensor
sinc_(Tensor(a!) self) -> Tensor(a!)
i0(Tensor self) -> Tensor
i0_(Tensor(a!) self) -> Tensor(a!)
special_i1(Tensor self) -> Tensor
logit(Tensor self, float? eps=None) -> Tensor
logit_(Tensor(a!) self, float? eps=None) -> Tensor(a!)
signbit(Tensor self) -> Tensor
isposinf(Tensor self) -> Tensor
isneginf(Tensor self) -> Tensor
isreal(Tensor self) -> Tensor
frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)
angle(Tensor self) -> Tensor
conj_physical(Tensor self) -> Tensor
conj_physical_(Tensor(a!) self) -> Tensor(a!)
ldexp.Tensor(Tensor self, Tensor other) -> Tensor
ldexp_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
fmod.Tensor(Tensor self, Tensor other) -> Tensor
fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
hypot(Tensor self, Tensor other) -> Tensor
hypot_(Tensor(a!) self, Tensor other) -> Tensor(a!)
atan2(Tensor self, Tensor other) -> Tensor
atan2_(Tensor(a!) self, Tensor other) -> Tensor(a!)
copysign.Tensor(Tensor self, Tensor other) -> Tensor
copysign_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_left_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor
bitwise_right_shift_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor
lerp_.Tensor(Tensor(a!) self, Tensor end, Tensor weight) -> Tensor(a!)
addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)
addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)
# activations (selu, celu, rrelu, prelu, softsign, tanhshrink are composites of these)
elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor
elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)
leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor
leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)
hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor
hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)
hardsigmoid(Tensor self) -> Tensor
hardsigmoid_(Tensor(a!) self) -> Tensor(a!)
hardswish(Tensor self) -> Tensor
hardswish_(Tensor(a!) self) -> Tensor(a!)
mish(Tensor self) -> Tensor
mish_(Tensor(a!) self) -> Tensor(a!)
log_sigmoid(Tensor self) -> Tensor
threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor
threshold_(Tensor(a!) self, Scalar threshold, Scalar value) -> Tensor(a!)
glu(Tensor self, int dim=-1) -> Tensor
hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor
softshrink(Tensor self, Scalar lambd=0.5) -> Tensor
_prelu_kernel(Tensor self, Tensor weight) -> Tensor

# ---- reductions and scans: norms, medians, nan-reductions, cumulative ops (issue 3b)
linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor
median(Tensor self) -> Tensor
median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
nanmedian(Tensor self) -> Tensor
nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
cumsum_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)
cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor
cumprod_(Tensor(a!) self, int dim, *, ScalarType? dtype=None) -> Tensor(a!)
cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)
cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)
logcumsumexp(Tensor self, int dim) -> Tensor

# ---- sorting and selection (issue 3c)
sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)
topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)
kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)
_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)
unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)
searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor
bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor
histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor
bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor

# ---- reductions
sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
mean.dim(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
prod.dim_int(Tensor self, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor
amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor
var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor
logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor
all.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor
any.dims(Tensor self, int[1]? dim=None, bool keepdim=False) -> Tensor

# ---- linear algebra
mm(Tensor self, Tensor mat2) -> Tensor
bmm(Tensor self, Tensor mat2) -> Tensor
matmul(Tensor self, Tensor other) -> Tensor
addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor

# ---- linear algebra: products, einsum, decompositions (issue 3, linalg)
dot(Tensor self, Tensor tensor) -> Tensor
vdot(Tensor self, Tensor other) -> Tensor
mv(Tensor self, Tensor vec) -> Tensor
addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor
einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
trace(Tensor self) -> Tensor
linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor
linalg_inv(Tensor A) -> Tensor
linalg_det(Tensor A) -> Tensor
linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)
linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor
linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor
linalg_qr(Tensor A, str mode="reduced") -> (Tensor Q, Tensor R)
linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)
linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor
linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)

# ---- softmax and losses
_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor
mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor
_nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, int ignore_index) -> Tensor

# ---- neural-network functions: convolution, pooling, normalization, embedding, padding (issue 3d)
convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
_convolution_backward_input(Tensor grad_output, Tensor weight, int[] input_size, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
_convolution_backward_weight(Tensor grad_output, Tensor input, int[] weight_size, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor
im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
col2im(Tensor self, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor
max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor
max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)
max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor
avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor
avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor
adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)
adaptive_max_pool2d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor
adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)
adaptive_max_pool3d_backward(Tensor grad_output, Tensor self, Tensor indices) -> Tensor
fractional_max_pool2d(Tensor self, int[2] kernel_size, int[2] output_size, Tensor random_samples) -> (Tensor, Tensor)
fractional_max_pool3d(Tensor self, int[3] kernel_size, int[3] output_size, Tensor random_samples) -> (Tensor, Tensor)
max_unpool2d(Tensor self, Tensor indices, int[2] output_size) -> Tensor
max_unpool3d(Tensor self, Tensor indices, int[3] output_size, int[3] stride, int[3] padding) -> Tensor
native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps) -> (Tensor, Tensor, Tensor)
native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)
native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)
native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)
embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor
embedding_dense_backward(Tensor grad_output, Tensor indices, int num_weights, int padding_idx, bool scale_grad_by_freq) -> Tensor
embedding_renorm_(Tensor(a!) self, Tensor indices, float max_norm, float norm_type) -> Tensor(a!)
one_hot(Tensor self, int num_classes=-1) -> Tensor
constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor
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

# ---- views
view(Tensor(a) self, int[] size) -> Tensor(a)
_unsafe_view(Tensor self, int[] size) -> Tensor
permute(Tensor(a) self, int[] dims) -> Tensor(a)
transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)
expand(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)
squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)
unsqueeze(Tensor(a) self, int dim) -> Tensor(a)
select.int(Tensor(a) self, int dim, int index) -> Tensor(a)
slice.Tensor(Tensor(a) self, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor(a)
narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)
as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a)
diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)
unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)
split_with_sizes(Tensor(a) self, int[] split_sizes, int dim=0) -> Tensor(a)[]
unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]
alias(Tensor(a) self) -> Tensor(a)
view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)
view_as_real(Tensor(a) self) -> Tensor(a)
view_as_complex(Tensor(a) self) -> Tensor(a)

# ---- copies, joins, conversions
clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None) -> Tensor
cat(Tensor[] tensors, int dim=0) -> Tensor
stack(Tensor[] tensors, int dim=0) -> Tensor
copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
zero_(Tensor(a!) self) -> Tensor(a!)
flip(Tensor self, int[] dims) -> Tensor
roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor
tril(Tensor self, int diagonal=0) -> Tensor
triu(Tensor self, int diagonal=0) -> Tensor

# ---- shape and scatter ops (issue 3, shape/indexing)
diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor
rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor
select_scatter(Tensor self, Tensor src, int dim, int index) -> Tensor
slice_scatter(Tensor self, Tensor src, int dim=0, int? start=None, int? end=None, int step=1) -> Tensor
diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor

# ---- indexing
index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
index_select(Tensor self, int dim, Tensor index) -> Tensor
gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)
scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor
scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)
scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)
index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor
index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)
index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor
index_fill_.int_Scalar(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)
masked_select(Tensor self, Tensor mask) -> Tensor
# scatter reductions, copies and puts (issue 3, remaining ops)
scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor
scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor(a!)
scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor
scatter_.reduce(Tensor(a!) self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor(a!)
scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor
scatter_.value_reduce(Tensor(a!) self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor(a!)
masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor
masked_scatter_(Tensor(a!) self, Tensor mask, Tensor source) -> Tensor(a!)
index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor
index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)
put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor
put_(Tensor(a!) self, Tensor index, Tensor source, bool accumulate=False) -> Tensor(a!)
take(Tensor self, Tensor index) -> Tensor
index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor
index_reduce_(Tensor(a!) self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor(a!)
# PyTorch's own overloads of ops ember also reaches through others (their nodes have their names)
t(Tensor(a) self) -> Tensor(a)
squeeze(Tensor(a) self) -> Tensor(a)
squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)
split.Tensor(Tensor(a) self, int split_size, int dim=0) -> Tensor(a)[]
max(Tensor self) -> Tensor
min(Tensor self) -> Tensor
# in-place view ops: new sizes and strides for `self` over the same memory; and resizing
t_(Tensor(a!) self) -> Tensor(a!)
transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)
swapdims_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)
swapaxes_(Tensor(a!) self, int axis0, int axis1) -> Tensor(a!)
squeeze_(Tensor(a!) self) -> Tensor(a!)
squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)
squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)
unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)
as_strided_(Tensor(a!) self, int[] size, int[] stride, int? storage_offset=None) -> Tensor(a!)
resize_(Tensor(a!) self, int[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)
resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)

# ---- factories (the device argument picks the dispatch key)
empty.memory_format(int[] size, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor
empty_strided(int[] size, int[] stride, *, ScalarType? dtype=None, Device? device=None) -> Tensor
full(int[] size, Scalar fill_value, *, ScalarType? dtype=None, Device? device=None) -> Tensor
arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Device? device=None) -> Tensor
linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Device? device=None) -> Tensor
eye.m(int n, int m, *, ScalarType? dtype=None, Device? device=None) -> Tensor
scalar_tensor(Scalar s, *, ScalarType? dtype=None, Device? device=None) -> Tensor
_tensor_from_data(Any data, *, ScalarType? dtype=None, Device? device=None) -> Tensor
uniform_(Tensor(a!) self, float from=0, float to=1, *, Generator? generator=None) -> Tensor(a!)
normal_(Tensor(a!) self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor(a!)
random_.from(Tensor(a!) self, int from, int? to, *, Generator? generator=None) -> Tensor(a!)
bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)
bernoulli(Tensor self, *, Generator? generator=None) -> Tensor
randperm(int n, *, Generator? generator=None, ScalarType? dtype=None, Device? device=None) -> Tensor
# random (issue 3, random)
random_(Tensor(a!) self, *, Generator? generator=None) -> Tensor(a!)
exponential_(Tensor(a!) self, float lambd=1, *, Generator? generator=None) -> Tensor(a!)
geometric_(Tensor(a!) self, float p, *, Generator? generator=None) -> Tensor(a!)
cauchy_(Tensor(a!) self, float median=0, float sigma=1, *, Generator? generator=None) -> Tensor(a!)
log_normal_(Tensor(a!) self, float mean=1, float std=2, *, Generator? generator=None) -> Tensor(a!)
multinomial(Tensor self, int num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor
poisson(Tensor self, Generator? generator=None) -> Tensor
"""


def _define_all():
    ops = {}
    for line in DECLARATIONS.strip().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            op = _dispatcher.define(line)
            ops[op.__name__] = op
    return ops


OPS = _define_all()
