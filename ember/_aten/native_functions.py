"""Every built-in op's schema, in one place (PyTorch's native_functions.yaml).

One line per op, in PyTorch's schema syntax. `Tensor(a)` in a return marks a view of the input,
`Tensor(a!)` an argument the op writes to. Kernels are registered per dispatch key by the
family modules next to this file; derivatives by `ember/autograd/derivatives.py`. A position
typed `Tensor` may also receive a Python number (PyTorch's wrapped scalars).
"""
from .. import _dispatcher

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

# ---- softmax and losses
_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor
_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor
nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor
mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor

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

# ---- copies, joins, conversions
clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor
_to_copy(Tensor self, *, ScalarType? dtype=None, Device? device=None, MemoryFormat? memory_format=None) -> Tensor
cat(Tensor[] tensors, int dim=0) -> Tensor
stack(Tensor[] tensors, int dim=0) -> Tensor
copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)
zero_(Tensor(a!) self) -> Tensor(a!)

# ---- indexing
index.Tensor(Tensor self, Tensor?[] indices) -> Tensor
index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)
index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor
masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor
masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)
index_select(Tensor self, int dim, Tensor index) -> Tensor
gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor
scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor

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
