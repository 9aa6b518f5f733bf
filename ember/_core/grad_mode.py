"""Grad mode state and the modes that only switch it: no_grad, enable_grad, set_grad_enabled.

One flag decides whether the dispatcher's Autograd kernel records graph nodes. As PyTorch's, it
is thread-local: every thread starts with grad mode on and not in inference mode, whatever the
thread that started it had (a `threading.local` whose class attributes are each thread's
defaults; reading it costs about 25 ns more than a plain attribute).
Each mode is a context manager and a decorator, as in PyTorch. This module is a leaf of the
import graph: the dispatcher reads the flag on every call. `inference_mode`, which also pushes
a dispatch mode, lives above the dispatcher in `ember.autograd.grad_mode`.
"""
import functools
import inspect
import threading
import warnings


class _GradState(threading.local):
    enabled = True
    inference = False
    transforms = 0   # functorch transforms running their function (vmap levels included)


_grad_state = _GradState()


def is_grad_enabled():
    return _grad_state.enabled


def is_inference_mode_enabled():
    return _grad_state.inference


class _DecoratorContextManager:
    """A context manager that can also decorate functions (and generator functions)."""

    def __call__(self, func):
        if inspect.isclass(func):
            # deprecated in PyTorch, still allowed: calling the class (constructing an object)
            # runs inside the mode, its methods do not
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To preserve "
                          "the current behavior of class decoration, you can directly decorate "
                          "the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                # the mode is on only while the generator's own code runs, not between yields
                gen = func(*args, **kwargs)
                try:
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
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: `@no_grad` as well as `@no_grad()`."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    def __enter__(self):
        self.prev = _grad_state.enabled
        _grad_state.enabled = False

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
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

    def __call__(self, func):
        _grad_state.enabled = self.prev  # used as a decorator: change nothing until called
        return super().__call__(func)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _grad_state.enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)
