"""torch.testing._internal.common_nn: the pieces of PyTorch's nn test harness that its nn test
files import -- NNTestCase (the base class of the module tests; its jacobian helpers are
PyTorch's numerical-vs-analytical checks) and `_create_basic_net`, a small nest of modules with
parameters and buffers that the registration-hook tests walk; `_test_module_empty_input` runs a
module forward and backward on an input with a zero-size dimension and checks every gradient is
zeros; `_test_bfloat16_ops` checks a module in bfloat16 against float32 within `prec`. The big
module/criterion test tables of PyTorch's common_nn are not here."""
import ember
from ember import nn
from .common_utils import TestCase, freeze_rng_state  # noqa: F401  (imported from here)


class NNTestCase(TestCase):
    """TestCase for nn modules. The module-test tables drive it through `_forward`,
    `_backward`, `_get_parameters` and `_zero_grad_parameters`, which a subclass defines."""
    _do_cuda_memory_leak_check = False
    _do_cuda_non_default_stream = False

    def _forward(self, module, input):
        raise NotImplementedError

    def _get_parameters(self, module):
        raise NotImplementedError

    def _zero_grad_parameters(self, module):
        raise NotImplementedError

    def _backward(self, module, input, output, grad_output, create_graph=False):
        raise NotImplementedError

    def _jacobian(self, input, num_out):
        if isinstance(input, tuple):
            return tuple(self._jacobian(elem, num_out) for elem in input)
        if isinstance(input, list):
            return [self._jacobian(elem, num_out) for elem in input]
        return ember.zeros(input.nelement(), num_out)

    def _flatten_tensors(self, x):
        if isinstance(x, ember.Tensor):
            return x.to_dense().view(-1) if x.is_sparse else x.view(-1)
        return tuple(self._flatten_tensors(a) for a in x)

    def _zero_grad_input(self, input):
        if isinstance(input, ember.Tensor):
            if input.requires_grad and input.grad is not None:
                input.grad.zero_()
                input.grad.detach_()
        else:
            for i in input:
                self._zero_grad_input(i)


def _create_basic_net():
    """(layer, net, Sequential(net, net)): a parameter and a buffer at each of two levels."""
    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer_dummy_param = nn.Parameter(ember.empty(3, 5))
            self.layer_dummy_buf = nn.Buffer(ember.zeros(1, 3, 3, 7))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = Layer()
            self.dummy_param = nn.Parameter(ember.empty(3, 5))
            self.dummy_buf = nn.Buffer(ember.zeros(7, 3, 3, 1))

    layer, net = Layer(), Net()
    return layer, net, nn.Sequential(net, net)


def _test_bfloat16_ops(test_case, op, device, inp_dims=(), prec=1e-2, scale_factor=None):
    input1 = ember.randn(inp_dims, dtype=ember.float32, device=device, requires_grad=True)
    if scale_factor is not None:
        input1 = (ember.rand(inp_dims, dtype=ember.bfloat16, device=device)
                  * scale_factor).float().requires_grad_()
    out1 = op(input1)
    grad_input1 = ember.randn_like(out1, device=device)
    out1.backward(grad_input1)

    op_bfp16 = op.bfloat16()
    input2 = input1.detach().bfloat16().requires_grad_()
    out2 = op_bfp16(input2)
    out2.backward(grad_input1.bfloat16())

    test_case.assertEqual(out1, out2, atol=prec, rtol=prec, exact_dtype=False)
    test_case.assertEqual(input1.grad.data, input2.grad.data, atol=prec, rtol=prec,
                          exact_dtype=False)


def _test_module_empty_input(test_case, module, inp, check_size=True, inference=False):
    if not inference:
        inp.requires_grad_(True)
    out = module(inp)
    if not inference:
        out.backward(ember.rand_like(out))
    if check_size:
        test_case.assertEqual(out.size(), inp.size())
    if not inference:
        for p in module.parameters():
            if p.requires_grad:
                test_case.assertEqual(p.grad, ember.zeros_like(p.grad))
        test_case.assertEqual(inp.grad, ember.zeros_like(inp))


def _cross_entropy_prob_target_reference(input, target, weight=None, reduction='mean',
                                         label_smoothing=0.0):
    """Soft-label cross entropy from its definition: -sum_c w_c t_c log_softmax(x)_c per sample;
    'mean' divides by the number of samples (batch times spatial), not by the weights."""
    num_classes = input.size(1)
    target = target * (1 - label_smoothing) + label_smoothing / num_classes
    terms = ember.log_softmax(input, 1) * target
    if weight is not None:
        terms = terms * weight.view([1, num_classes] + [1] * (input.dim() - 2))
    losses = -terms.sum(1)
    if reduction == 'mean':
        return losses.sum() / (input.numel() // num_classes)
    if reduction == 'sum':
        return losses.sum()
    return losses


def _cross_entropy_index_target_reference(input, target, weight=None, ignore_index=-100,
                                          reduction='mean', label_smoothing=0.0):
    """Hard-label cross entropy as nll_loss of log_softmax; label smoothing adds the mean over
    classes of -w_c log_softmax(x)_c at every sample that is not ignored, and 'mean' divides both
    parts by the summed weights of the targets kept."""
    from ember.nn import functional as F
    log_probs = ember.log_softmax(input, 1)
    nll = F.nll_loss(log_probs, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    num_classes = input.size(1)
    kept = target != ignore_index
    per_class = -log_probs
    if weight is not None:
        per_class = per_class * weight.view([1, num_classes] + [1] * (input.dim() - 2))
    smooth = per_class.sum(1) * kept
    if reduction == 'mean':
        safe_target = target.masked_fill(~kept, 0)
        denom = (kept.sum() if weight is None else (weight[safe_target] * kept).sum())
        smooth = smooth.sum() / denom
    elif reduction == 'sum':
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / num_classes)


def _cross_entropy_loss_reference(input, target, weight=None, ignore_index=-100,
                                  reduction='mean', label_smoothing=0.0):
    if input.shape == target.shape:
        return _cross_entropy_prob_target_reference(input, target, weight, reduction,
                                                    label_smoothing)
    return _cross_entropy_index_target_reference(input, target, weight, ignore_index,
                                                 reduction, label_smoothing)


# Reference implementations the nn tests compare losses with, keyed by module name. PyTorch's
# table has one per loss of its criterion tests; TestNNDeviceType uses CrossEntropyLoss's.
loss_reference_fns = {
    'CrossEntropyLoss': _cross_entropy_loss_reference,
}
