"""The weights-only unpickler: reads a pickle but builds nothing that is not on an allow-list.

`torch.load(f)` uses it by default (`weights_only=True`); `add_safe_globals` and the
`safe_globals` context manager extend the list. See the Note below for why it exists and what
exactly it permits.

Note [Why unpickling is dangerous, and what this unpickler allows]
-------------------------------------------------------------------
A pickle is not data, it is a program for a small stack machine. Its instructions push
constants (`BININT`, `BINUNICODE`), build containers (`EMPTY_DICT`, `SETITEMS`), and -- the
dangerous part -- *name* and *call* Python objects:

    GLOBAL 'os system'        push the object os.system (importing `os` if needed)
    BINUNICODE 'rm -rf ~'     push a string
    TUPLE1                    wrap it in a 1-tuple
    REDUCE                    call os.system('rm -rf ~')

`pickle.load` runs such a program faithfully, so loading an untrusted checkpoint with it is
running untrusted code. Other instructions are as bad in subtler ways: `BUILD` calls an
object's `__setstate__` or writes its `__dict__`, `NEWOBJ` calls `cls.__new__`, `INST`/`OBJ`
and the extension registry (`EXT1`...) name classes through side doors.

A checkpoint only ever needs a handful of names: the functions that rebuild tensors
(`torch._utils._rebuild_tensor_v2`, `_rebuild_parameter`, ...), a few classes whose
constructors are harmless (`collections.OrderedDict`, `torch.Size`, `torch.device`), dtypes
and storage types (as values, never called), and the builtins that protocol 2 uses to spell
bytes, sets and complex numbers. So this unpickler is its own small interpreter:

* `GLOBAL`/`STACK_GLOBAL` never import anything. The dotted name is looked up in two tables --
  the one the caller passes (ember's objects under PyTorch's names) and the user's
  `add_safe_globals` list -- and anything else is refused with an error that names the global
  and the fix. Modules in `_blocklisted_modules` are refused even if the user allow-lists them.
  Because nothing is imported or called before this check, a refused object's code never runs.
* `REDUCE` and `NEWOBJ` call only objects that came from those tables and are marked callable;
  tensor classes are values only (they appear as the `new_type` argument of
  `_rebuild_from_type_v2`), and `Parameter` is created through its constructor.
* `BUILD` sets state only on `OrderedDict` (the `_metadata` of a state dict), on tensors (their
  Python attributes, never their internals) and on user allow-listed types.
* `SETITEM(S)`, `APPEND(S)` and `ADDITEMS` only fill real dicts, lists and sets, so no
  user-defined `__setitem__` can run.
* `BINPERSID` hands only `('storage', ...)` ids to the loader, which checks them against the
  archive's records (a declared size must match the bytes that are really there).
* Every length read from the stream is checked against the bytes that remain, so a huge
  declared size fails at once instead of allocating or hanging, and the interpreter is an
  iterative loop, so deeply nested input cannot exhaust the C stack.

A malformed program -- a stack underflow, a missing memo entry, arguments of the wrong type --
surfaces as `pickle.UnpicklingError`; what the loader or a rebuild function reports (a missing
record, a view outside its storage) stays the `RuntimeError` PyTorch raises.

What remains allowed is still code: the rebuild functions run with attacker-chosen arguments.
They therefore validate what they receive (integer sizes, strides inside the storage, known
dtypes) before touching memory; see `ember.serialization.pickling._tensor_on_storage`.
"""
import _compat_pickle
import codecs
import pickle
import struct
import sys
from collections import Counter, OrderedDict
from pickle import UnpicklingError

_blocklisted_modules = ("sys", "os", "posix", "nt", "subprocess")

# ---- the user's allow-list (add_safe_globals / safe_globals) ------------------------------------
_marked_safe_globals = set()


def add_safe_globals(safe_globals):
    """Allow these functions or classes (or `(obj, "dotted.name")` pairs) in weights-only loads."""
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def get_safe_globals():
    return list(_marked_safe_globals)


def clear_safe_globals():
    global _marked_safe_globals
    _marked_safe_globals = set()


def _remove_safe_globals(safe_globals):
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals - set(safe_globals)


class safe_globals:
    """Context manager: allow these globals for the loads inside the `with` block."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc):
        _remove_safe_globals(self.safe_globals)


def _user_allowed_globals():
    names = {}
    for entry in _marked_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            obj, name = entry
            names[name] = obj
        else:
            names[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return names


# ---- builtins that protocol 2 uses to spell bytes, bytearrays, sets and complex numbers ---------
def _encode(text, encoding="utf-8", errors="strict"):
    """`_codecs.encode`, as protocol 2 uses it for bytes: text codecs only."""
    if type(text) is not str or not codecs.lookup(encoding)._is_text_encoding:
        raise UnpicklingError(f"_codecs.encode is only allowed on str with a text encoding, "
                              f"got {type(text).__name__} and {encoding!r}")
    return codecs.encode(text, encoding, errors)


def _bytearray(source=b""):
    """`bytearray`, but not `bytearray(n)`, which would allocate n bytes from a declared size."""
    if isinstance(source, int):
        raise UnpicklingError("bytearray(int) is not allowed in a weights-only load")
    return bytearray(source)


SAFE_BUILTINS = {
    "collections.OrderedDict": OrderedDict,
    "collections.Counter": Counter,
    "_codecs.encode": _encode,
    "builtins.bytearray": _bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
}


_CHECKED_READ = 1 << 16  # longer reads are first checked against the bytes that remain
_MAX_NAME = 1 << 12  # a GLOBAL's module or name


class _Stop(Exception):
    def __init__(self, value):
        self.value = value


def _op(code):
    """Register the decorated method as the handler of pickle opcode `code`."""
    def register(fn):
        fn.opcode = code[0]
        return fn
    return register


class Unpickler:
    """Runs a pickle program from `file` (read/readline), building only allow-listed objects.

    `allowed`: dotted name -> object, the default allow-list (the user's is added per load).
    `callables`: the objects of `allowed` that REDUCE may call (the rest are values only).
    `constructors`: classes NEWOBJ may call as `cls(*args)` (Parameter).
    `tensor_type`, `set_state(tensor, state)`: BUILD on a tensor sets its Python attributes.
    `persistent_load(pid)`: turns a `('storage', ...)` persistent id into its storage.
    """

    def __init__(self, file, *, allowed, callables, constructors, tensor_type, set_state,
                 persistent_load, encoding="utf-8"):
        self._file = file  # seekable: the loader reads unseekable streams into memory first
        self.read = file.read
        self.readline = file.readline
        self.encoding = encoding
        self.persistent_load = persistent_load
        self._tensor_type = tensor_type
        self._set_state = set_state
        user = _user_allowed_globals()
        self._globals = {**allowed, **user}
        self._callable_ids = {id(obj) for obj in callables} | {id(obj) for obj in user.values()}
        self._constructor_ids = {id(cls) for cls in constructors}
        self._user_type_ids = {id(obj) for obj in user.values() if isinstance(obj, type)}

    def load(self):
        self.stack = []
        self.metastack = []
        self.memo = {}
        read, dispatch = self.read, self._dispatch
        first = True
        try:
            while True:
                key = read(1)
                if not key:
                    if first:
                        raise EOFError("Ran out of input")  # (PyTorch's says nothing)
                    raise UnpicklingError("pickle data was truncated")
                first = False
                handler = dispatch.get(key[0])
                if handler is None:
                    raise UnpicklingError(f"Unsupported operand {key[0]}")
                handler(self)
        except _Stop as stop:
            return stop.value
        except (UnpicklingError, EOFError, RuntimeError):
            raise  # RuntimeError: what the loader or a rebuild function reports, as in PyTorch
        except Exception as e:  # a malformed program: stack underflow, bad types, ...
            raise UnpicklingError(f"{type(e).__name__}: {e}") from e

    # ---- reading helpers ------------------------------------------------------------------------
    def _read(self, n):
        if n > _CHECKED_READ and n > self._bytes_left():  # file.read(n) would allocate n first
            raise UnpicklingError(f"pickle data was truncated (a length of {n} is declared, "
                                  f"{self._bytes_left()} bytes remain)")
        data = self.read(n)
        if len(data) != n:
            raise UnpicklingError(f"pickle data was truncated (wanted {n} bytes, "
                                  f"{len(data)} remain)")
        return data

    def _bytes_left(self):
        here = self._file.tell()
        end = self._file.seek(0, 2)
        self._file.seek(here)
        return end - here

    def _read_length(self, fmt):
        n = struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]
        if n < 0:
            raise UnpicklingError(f"negative length {n} in pickle data")
        if n > sys.maxsize:
            raise UnpicklingError(f"pickle data was truncated (a length of {n} is declared)")
        return n

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    # ---- framing and stack ----------------------------------------------------------------------
    @_op(pickle.PROTO)
    def load_proto(self):
        proto = self._read(1)[0]
        if proto > pickle.HIGHEST_PROTOCOL:
            raise UnpicklingError(f"unsupported pickle protocol: {proto}")

    @_op(pickle.STOP)
    def load_stop(self):
        raise _Stop(self.stack.pop())

    @_op(pickle.MARK)
    def load_mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    @_op(pickle.POP)
    def load_pop(self):
        if self.stack:
            self.stack.pop()
        else:
            self._pop_mark()

    @_op(pickle.POP_MARK)
    def load_pop_mark(self):
        self._pop_mark()

    @_op(pickle.DUP)
    def load_dup(self):
        self.stack.append(self.stack[-1])

    # ---- memo -----------------------------------------------------------------------------------
    @_op(pickle.BINPUT)
    def load_binput(self):
        self.memo[self._read(1)[0]] = self.stack[-1]

    @_op(pickle.LONG_BINPUT)
    def load_long_binput(self):
        self.memo[self._read_length("<I")] = self.stack[-1]

    @_op(pickle.MEMOIZE)
    def load_memoize(self):
        self.memo[len(self.memo)] = self.stack[-1]

    @_op(pickle.BINGET)
    def load_binget(self):
        self.stack.append(self._memo_get(self._read(1)[0]))

    @_op(pickle.LONG_BINGET)
    def load_long_binget(self):
        self.stack.append(self._memo_get(self._read_length("<I")))

    def _memo_get(self, i):
        try:
            return self.memo[i]
        except KeyError:
            raise UnpicklingError(f"Memo value not found at index {i}") from None

    # ---- constants ------------------------------------------------------------------------------
    @_op(pickle.NONE)
    def load_none(self):
        self.stack.append(None)

    @_op(pickle.NEWTRUE)
    def load_true(self):
        self.stack.append(True)

    @_op(pickle.NEWFALSE)
    def load_false(self):
        self.stack.append(False)

    @_op(pickle.BININT)
    def load_binint(self):
        self.stack.append(struct.unpack("<i", self._read(4))[0])

    @_op(pickle.BININT1)
    def load_binint1(self):
        self.stack.append(self._read(1)[0])

    @_op(pickle.BININT2)
    def load_binint2(self):
        self.stack.append(struct.unpack("<H", self._read(2))[0])

    @_op(pickle.LONG1)
    def load_long1(self):
        n = self._read(1)[0]
        self.stack.append(int.from_bytes(self._read(n), "little", signed=True))

    @_op(pickle.LONG4)
    def load_long4(self):
        n = self._read_length("<i")
        self.stack.append(int.from_bytes(self._read(n), "little", signed=True))

    @_op(pickle.BINFLOAT)
    def load_binfloat(self):
        self.stack.append(struct.unpack(">d", self._read(8))[0])

    @_op(pickle.BINUNICODE)
    def load_binunicode(self):
        self.stack.append(str(self._read(self._read_length("<I")), "utf-8", "surrogatepass"))

    @_op(pickle.SHORT_BINUNICODE)
    def load_short_binunicode(self):
        self.stack.append(str(self._read(self._read(1)[0]), "utf-8", "surrogatepass"))

    @_op(pickle.BINUNICODE8)
    def load_binunicode8(self):
        self.stack.append(str(self._read(self._read_length("<Q")), "utf-8", "surrogatepass"))

    def _py2_string(self, data):
        return data if self.encoding == "bytes" else data.decode(self.encoding, "strict")

    @_op(pickle.BINSTRING)
    def load_binstring(self):
        self.stack.append(self._py2_string(self._read(self._read_length("<i"))))

    @_op(pickle.SHORT_BINSTRING)
    def load_short_binstring(self):
        self.stack.append(self._py2_string(self._read(self._read(1)[0])))

    @_op(pickle.BINBYTES)
    def load_binbytes(self):
        self.stack.append(self._read(self._read_length("<I")))

    @_op(pickle.SHORT_BINBYTES)
    def load_short_binbytes(self):
        self.stack.append(self._read(self._read(1)[0]))

    @_op(pickle.BINBYTES8)
    def load_binbytes8(self):
        self.stack.append(self._read(self._read_length("<Q")))

    @_op(pickle.BYTEARRAY8)
    def load_bytearray8(self):
        self.stack.append(bytearray(self._read(self._read_length("<Q"))))

    # ---- containers -----------------------------------------------------------------------------
    @_op(pickle.EMPTY_TUPLE)
    def load_empty_tuple(self):
        self.stack.append(())

    @_op(pickle.TUPLE)
    def load_tuple(self):
        items = self._pop_mark()  # (before naming self.stack: popping the mark replaces it)
        self.stack.append(tuple(items))

    @_op(pickle.TUPLE1)
    def load_tuple1(self):
        self.stack[-1] = (self.stack[-1],)

    @_op(pickle.TUPLE2)
    def load_tuple2(self):
        self._pack(2)

    @_op(pickle.TUPLE3)
    def load_tuple3(self):
        self._pack(3)

    def _pack(self, n):
        if len(self.stack) < n:
            raise UnpicklingError(f"stack underflow: a {n}-tuple of {len(self.stack)} items")
        self.stack[-n:] = [tuple(self.stack[-n:])]

    @_op(pickle.EMPTY_LIST)
    def load_empty_list(self):
        self.stack.append([])

    @_op(pickle.APPEND)
    def load_append(self):
        item = self.stack.pop()
        self._target(list, "APPEND").append(item)

    @_op(pickle.APPENDS)
    def load_appends(self):
        items = self._pop_mark()
        self._target(list, "APPENDS").extend(items)

    @_op(pickle.EMPTY_DICT)
    def load_empty_dict(self):
        self.stack.append({})

    @_op(pickle.SETITEM)
    def load_setitem(self):
        value = self.stack.pop()
        key = self.stack.pop()
        self._target((dict, OrderedDict, Counter), "SETITEM")[key] = value

    @_op(pickle.SETITEMS)
    def load_setitems(self):
        items = self._pop_mark()
        if len(items) % 2:
            raise UnpicklingError("SETITEMS needs key/value pairs, got an odd number of items")
        target = self._target((dict, OrderedDict, Counter), "SETITEMS")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    @_op(pickle.EMPTY_SET)
    def load_empty_set(self):
        self.stack.append(set())

    @_op(pickle.ADDITEMS)
    def load_additems(self):
        items = self._pop_mark()
        self._target(set, "ADDITEMS").update(items)

    @_op(pickle.FROZENSET)
    def load_frozenset(self):
        items = self._pop_mark()
        self.stack.append(frozenset(items))

    def _target(self, types, opcode):
        target = self.stack[-1]
        types = types if isinstance(types, tuple) else (types,)
        if type(target) not in types:
            names = ", ".join(t.__name__ for t in types)
            raise UnpicklingError(f"Can only {opcode} into {names}, but got "
                                  f"{type(target).__name__}")
        return target

    # ---- names and calls: the risky part (see the Note above) -----------------------------------
    @_op(pickle.GLOBAL)
    def load_global(self):
        module = self._read_line()
        name = self._read_line()
        self.stack.append(self._find_global(module, name))

    @_op(pickle.STACK_GLOBAL)
    def load_stack_global(self):
        name = self.stack.pop()
        module = self.stack.pop()
        if type(module) is not str or type(name) is not str:
            raise UnpicklingError("STACK_GLOBAL requires str module and name")
        self.stack.append(self._find_global(module, name))

    def _read_line(self):
        line = self.readline(_MAX_NAME)
        if not line.endswith(b"\n"):
            raise UnpicklingError("pickle data was truncated (in a GLOBAL name) or the name is "
                                  f"longer than {_MAX_NAME} bytes")
        return line[:-1].decode("utf-8")

    def _find_global(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # names written by Python 2
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module.partition(".")[0] in _blocklisted_modules or full in _blocklisted_modules:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose module "
                                  f"{module} is blocked.")
        try:
            return self._globals[full]
        except KeyError:
            pass
        shown = full[len("builtins."):] if full.startswith("builtins.") else full
        raise UnpicklingError(
            f"Unsupported global: GLOBAL {shown} was not an allowed global by default. Please "
            f"use `torch.serialization.add_safe_globals([{shown}])` or the "
            f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist "
            "this global if you trust this class/function.")

    @_op(pickle.REDUCE)
    def load_reduce(self):
        args = self.stack.pop()
        func = self.stack[-1]
        if id(func) not in self._callable_ids:
            raise UnpicklingError(f"Trying to call reduce for unrecognized function {func!r}")
        if type(args) is not tuple:
            raise UnpicklingError(f"REDUCE arguments must be a tuple, got "
                                  f"{type(args).__name__}")
        self.stack[-1] = func(*args)

    @_op(pickle.NEWOBJ)
    def load_newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        self.stack.append(self._new(cls, args, {}))

    @_op(pickle.NEWOBJ_EX)
    def load_newobj_ex(self):
        kwargs = self.stack.pop()
        args = self.stack.pop()
        cls = self.stack.pop()
        self.stack.append(self._new(cls, args, kwargs))

    def _new(self, cls, args, kwargs):
        if type(args) is not tuple or type(kwargs) is not dict:
            raise UnpicklingError("NEWOBJ needs a tuple of arguments")
        if id(cls) in self._constructor_ids:
            return cls(*args, **kwargs)  # Parameter(data, requires_grad)
        if id(cls) in self._callable_ids and isinstance(cls, type):
            return cls.__new__(cls, *args, **kwargs)
        raise UnpicklingError(f"Can only create new object for nn.Parameter or classes "
                              f"allowlisted via `add_safe_globals` but got {cls!r}")

    @_op(pickle.BUILD)
    def load_build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is OrderedDict:
            if type(state) is not dict or not all(type(k) is str for k in state):
                raise UnpicklingError("OrderedDict state must be a dict with str keys")
            inst.__dict__.update(state)
        elif isinstance(inst, self._tensor_type):
            self._set_state(inst, state)
        elif id(type(inst)) in self._user_type_ids:
            self._build_allowed(inst, state)
        else:
            raise UnpicklingError(f"Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {type(inst)}")

    @staticmethod
    def _build_allowed(inst, state):
        """What pickle's BUILD does, for a type the user allow-listed."""
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        slotstate = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slotstate = state
        if state:
            inst.__dict__.update(state)
        if slotstate:
            for k, v in slotstate.items():
                setattr(inst, k, v)

    @_op(pickle.BINPERSID)
    def load_binpersid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
            raise UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                  f"{pid!r:.80}")
        self.stack.append(self.persistent_load(pid))


Unpickler._dispatch = {fn.opcode: fn for fn in vars(Unpickler).values()
                       if callable(fn) and hasattr(fn, "opcode")}
