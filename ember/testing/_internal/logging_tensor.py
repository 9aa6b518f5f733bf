"""torch.testing._internal.logging_tensor: a wrapper subclass and a dispatch mode that log
every aten op they see, one line per call (`$2: f32[2] = torch._ops.aten.mul.Tensor($0, $1)`),
which PyTorch's tests compare with expected op sequences.

LoggingTensor wraps a tensor (`elem`) with `_make_wrapper_subclass`; its `__torch_dispatch__`
unwraps the arguments, runs the op on the wrapped tensors, wraps the results and logs the call.
It works with autograd in one of two ways (never both in one test): the wrapped tensor does not
require grad and the LoggingTensor does (`requires_grad=True`), so autograd records on the
wrappers and backward's ops are logged too; or the wrapped tensor requires grad, and autograd
runs on it, below the logging. LoggingTensorMode logs every op called in its scope.
"""
import contextlib
import functools
import itertools
import logging
import traceback
import weakref

from ..._core.tensor import Tensor
from ...overrides import enable_reentrant_dispatch
from ...utils._dtype_abbrs import dtype_abbrs as _dtype_abbrs
from ...utils._python_dispatch import TorchDispatchMode
from ...utils._pytree import tree_map

__all__ = ["LoggingTensor", "LoggingTensorMode", "LoggingTensorReentrant",
           "LoggingTensorHandler", "log_input", "capture_logs",
           "capture_logs_with_logging_tensor_mode"]

logger = logging.getLogger("LoggingTensor")


class LoggingTensor(Tensor):
    elem: Tensor

    __slots__ = ["elem"]

    context = contextlib.nullcontext

    @staticmethod
    def __new__(cls, elem, *args, **kwargs):
        # the wrapper holds no data of its own, only elem's metadata
        r = Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(),
            dtype=elem.dtype, layout=elem.layout, device=elem.device,
            requires_grad=kwargs.get("requires_grad", False))
        r.elem = elem.detach() if r.requires_grad else elem
        return r

    def __repr__(self):
        return super().__repr__(tensor_contents=f"{self.elem}")

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(e):
            return e.elem if isinstance(e, cls) else e

        def wrap(e):
            return cls(e) if isinstance(e, Tensor) else e

        with cls.context():
            rs = tree_map(wrap, func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs)))
        logger.info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)  # noqa: G004
        return rs


class LoggingTensorMode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        rs = func(*args, **kwargs)
        logger.info(f"{func.__module__}.{func.__name__}", args, kwargs, rs)  # noqa: G004
        return rs


class LoggingTensorReentrant(LoggingTensor):
    context = enable_reentrant_dispatch


class _ShortIds:
    """Tensor -> a small number, in order of first sight; a tensor's entry goes with it."""

    def __init__(self):
        self._ids = {}
        self.next_id = 0

    def __call__(self, t):
        entry = self._ids.get(id(t))
        if entry is None or entry[0]() is not t:
            key = id(t)
            ref = weakref.ref(t, lambda _, key=key, ids=self._ids: ids.pop(key, None))
            entry = self._ids[key] = (ref, self.next_id)
            self.next_id += 1
        return entry[1]


class LoggingTensorHandler(logging.Handler):
    def __init__(self, log_list, use_shortid_for_all_tensors, with_type, tracebacks_list):
        logging.Handler.__init__(self)
        self.log_list = log_list
        self.use_shortid_for_all_tensors = use_shortid_for_all_tensors
        self.tracebacks_list = tracebacks_list
        self._shortid = _ShortIds()
        self.with_type = with_type

    def _fmt(self, a, with_type=False):
        cond_cls = Tensor if self.use_shortid_for_all_tensors else LoggingTensor
        if isinstance(a, cond_cls):
            maybe_type = ""
            if with_type and self.with_type:
                maybe_type = f": {_dtype_abbrs[a.dtype]}[{', '.join(map(str, a.shape))}]"
            return f"${self._shortid(a)}{maybe_type}"
        return repr(a)

    def emit(self, record):
        fmt_args = ", ".join(itertools.chain(
            (str(tree_map(self._fmt, a)) for a in record.args[0]),
            (f"{k}={str(tree_map(self._fmt, v))}" for k, v in record.args[1].items())))
        fmt_rets = tree_map(functools.partial(self._fmt, with_type=True), record.args[2])
        self.log_list.append(f"{fmt_rets} = {record.msg}({fmt_args})")
        if self.tracebacks_list is not None:
            self.tracebacks_list.append(record.traceback)


def log_input(name, var):
    logger.info("input", (name,), {}, var)  # noqa: PLE1205


class GatherTraceback(logging.Filter):
    """Attach the Python stack of each logged call (ember has no TorchScript or C++ frames)."""

    def __init__(self, python=True, script=True, cpp=False):
        self.python, self.script, self.cpp = python, script, cpp

    def filter(self, record):
        record.traceback = traceback.extract_stack() if self.python else []
        return True


@contextlib.contextmanager
def capture_logs(is_mode=False, python_tb=False, script_tb=False, cpp_tb=False):
    collect_traceback = python_tb or script_tb or cpp_tb
    log_list = []
    tracebacks_list = []
    handler = LoggingTensorHandler(log_list, with_type=True, use_shortid_for_all_tensors=is_mode,
                                   tracebacks_list=tracebacks_list if collect_traceback else None)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    tb_filter = None
    if collect_traceback:
        tb_filter = GatherTraceback(python=python_tb, script=script_tb, cpp=cpp_tb)
        logger.addFilter(tb_filter)
    try:
        if collect_traceback:
            yield log_list, tracebacks_list
        else:
            yield log_list
    finally:
        logger.removeHandler(handler)
        if tb_filter is not None:
            logger.removeFilter(tb_filter)


@contextlib.contextmanager
def capture_logs_with_logging_tensor_mode(python_tb=False, script_tb=False, cpp_tb=False):
    with LoggingTensorMode(), capture_logs(True, python_tb, script_tb, cpp_tb) as logs:
        yield logs
