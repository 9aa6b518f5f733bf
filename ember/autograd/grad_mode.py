"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

One flag decides whether the dispatcher's Autograd kernel records graph nodes. PyTorch keeps it
thread-local; ember keeps one process-wide flag (DataLoader workers are processes, not threads).
Each mode is a context manager and a decorator, as in PyTorch.
"""
import functools
import inspect


class _GradState:
    enabled = True
    inference = False


_grad_state = _GradState()


def is_grad_enabled():
    return _grad_state.enabled


def is_inference_mode_enabled():
    return _grad_state.inference


class _DecoratorContextManager:
    """A context manager that can also decorate functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("grad-mode decorators cannot be applied to classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:
                        with self.clone():
                            response = gen.throw(e)
                    else:
                        with self.clone():
                            response = gen.send(request)
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = False

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = True

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (so it works as a plain call too) and restores on exit."""

    def __init__(self, mode):
        self.prev = _grad_state.enabled
        self.mode = bool(mode)
        _grad_state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad; tensors made inside are inference tensors (`is_inference()` is True)."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool) or mode is None:
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        self.prev = (_grad_state.enabled, _grad_state.inference)
        if self.mode:
            _grad_state.enabled = False
            _grad_state.inference = True

    def __exit__(self, *exc):
        _grad_state.enabled, _grad_state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)
