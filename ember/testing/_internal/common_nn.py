"""torch.testing._internal.common_nn: the pieces of PyTorch's nn test harness that its nn test
files import -- NNTestCase (the base class of the module tests; its jacobian helpers are
PyTorch's numerical-vs-analytical checks) and `_create_basic_net`, a small nest of modules with
parameters and buffers that the registration-hook tests walk. The big module/criterion test
tables of PyTorch's common_nn are not here."""
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
            return x.view(-1) if x.is_contiguous() else x.reshape(-1)
        return ember.cat([self._flatten_tensors(e) for e in x])

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
