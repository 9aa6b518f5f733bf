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


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors (`is_inference()`): they
    never join a graph later (saving one for backward raises) and cannot be modified in place
    outside inference mode. `inference_mode(False)` switches back to normal mode inside.

    A dispatch mode marks each op's new outputs while the flag is on; a view inherits the
    flag of its base and an in-place op's result keeps its own.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool) or mode is None:
            return super().__new__(cls)
        return cls()(mode)  # used as a bare decorator: @inference_mode

    def __enter__(self):
        from .._dispatch import dispatcher as _dispatcher
        self.prev = (_grad_state.enabled, _grad_state.inference)
        _grad_state.enabled = not self.mode
        _grad_state.inference = bool(self.mode)
        if self.mode:
            _dispatcher._modes.append(_mark_inference)

    def __exit__(self, *exc):
        from .._dispatch import dispatcher as _dispatcher
        _grad_state.enabled, _grad_state.inference = self.prev
        if self.mode:
            _dispatcher._modes.remove(_mark_inference)

    def clone(self):
        return self.__class__(self.mode)


def _mark_inference(op, args, level):
    from .._dispatch.dispatcher import call_in_modes
    from .tensor import Tensor
    out = call_in_modes(op, args, level - 1)
    if _grad_state.inference:
        for t in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(t, Tensor) and not (op._mutates and t is args[0]):
                base = t._base
                if base is None or base._inference:
                    t._inference = True
    return out
