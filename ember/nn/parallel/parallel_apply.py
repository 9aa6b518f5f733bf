"""Run each replica on its slice of the batch, in a thread per replica (PyTorch's
torch.nn.parallel.parallel_apply). NumPy releases the GIL inside its kernels, so the CPU
replicas do run concurrently. An exception in a replica is re-raised in the caller, saying
which replica it came from."""
import threading

import ember

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """`modules[i](*inputs[i], **kwargs_tup[i])` for every i, concurrently; returns the
    outputs in order."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of kwargs_tup {len(kwargs_tup)}")
    else:
        kwargs_tup = ({},) * len(modules)
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
    else:
        devices = ["cpu"] * len(modules)
    from ...utils.data._utils import ExceptionWrapper  # utils.data loads after nn
    grad_enabled = ember.is_grad_enabled()
    results = {}
    lock = threading.Lock()

    def worker(i, module, input, kwargs, device):
        try:
            with ember.set_grad_enabled(grad_enabled):
                if not isinstance(input, (list, tuple)):
                    input = (input,)
                output = module(*input, **kwargs)
            with lock:
                results[i] = output
        except Exception:
            with lock:
                results[i] = ExceptionWrapper(where=f"in replica {i} on device {device}")

    if len(modules) > 1:
        threads = [threading.Thread(target=worker, args=(i, m, x, kw, d))
                   for i, (m, x, kw, d) in enumerate(zip(modules, inputs, kwargs_tup, devices))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    else:
        worker(0, modules[0], inputs[0], kwargs_tup[0], devices[0])
    outputs = []
    for i in range(len(inputs)):
        output = results[i]
        if isinstance(output, ExceptionWrapper):
            output.reraise()
        outputs.append(output)
    return outputs
