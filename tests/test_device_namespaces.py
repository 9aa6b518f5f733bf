"""The device and build namespaces ember has nothing behind, against a CPU-only torch: mps and
xpu (no device: the queries, the no-ops and the errors of a build without them),
backends.mkldnn (no oneDNN; the flags round-trip), utils.cpp_extension (imports; building
refuses with a message naming why), utils.model_zoo (torch.hub's load_url)."""
import importlib

import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(lib, expr):
    try:
        value = eval(expr, {"lib": lib})
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return (type(e).__name__, str(e))
    if isinstance(value, (bool, int, float, str, tuple, list, dict, type(None))):
        return ("ok", value)
    return ("ok", type(value).__name__)


MPS = ["lib.mps.is_available()", "lib.mps.device_count()", "lib.mps.manual_seed(1)",
       "lib.mps.seed()", "lib.mps.synchronize()", "lib.mps.empty_cache()",
       "lib.mps.current_allocated_memory()", "lib.mps.driver_allocated_memory()",
       "lib.mps.get_rng_state()", "lib.mps.recommended_max_memory()",
       "lib.mps.set_per_process_memory_fraction(0.5)", "lib.mps.compile_shader('')",
       "lib.backends.mps.is_available()", "lib.backends.mps.is_built()",
       "lib.backends.mps.is_macos_or_newer(14, 0)"]
XPU = ["lib.xpu.is_available()", "lib.xpu.device_count()", "lib.xpu.is_initialized()",
       "lib.xpu.manual_seed(1)", "lib.xpu.manual_seed_all(1)", "lib.xpu.seed()",
       "lib.xpu.seed_all()", "lib.xpu.synchronize()", "lib.xpu.current_device()",
       "lib.xpu.empty_cache()", "lib.xpu.memory_allocated()", "lib.xpu.max_memory_allocated()",
       "lib.xpu.memory_reserved()", "lib.xpu.max_memory_reserved()", "lib.xpu.memory_stats()",
       "lib.xpu.memory_stats_as_nested_dict()", "lib.xpu.memory_snapshot()",
       "lib.xpu.is_bf16_supported()", "lib.xpu.get_device_name()", "lib.xpu.init()",
       "lib.xpu.initial_seed()", "lib.xpu.get_rng_state()", "lib.xpu.set_device(0)",
       "lib.xpu.get_arch_list()", "lib.xpu.get_rng_state_all()", "lib.xpu.default_generators",
       "lib.xpu.is_tf32_supported()", "lib.xpu.get_gencode_flags()",
       "lib.xpu.get_device_properties()", "lib.xpu.get_device_capability()",
       "lib.xpu.mem_get_info()", "lib.xpu.can_device_access_peer(0, 1)",
       "lib.xpu.current_stream()", "lib.xpu.Stream()", "lib.xpu.Event()",
       "lib.xpu.set_rng_state(lib.ones(2, dtype=lib.uint8))", "lib.xpu.set_stream(None)",
       "lib.get_device_module('xpu').__name__.split('.')[-1]",
       "lib.get_device_module('mps').__name__.split('.')[-1]"]


@pytest.mark.parametrize("expr", MPS + XPU)
def test_device_modules_as_torch(expr):
    assert _outcome(ember, expr) == _outcome(torch, expr)


def test_xpu_context_managers_as_torch():
    for lib in (torch, ember):
        with lib.xpu.stream(None):
            pass
        for make in (lambda: lib.xpu.device(0), lambda: lib.xpu.device(-1),
                     lambda: lib.xpu.device(None), lambda: lib.xpu.device_of(lib.ones(1))):
            with pytest.raises(NotImplementedError, match="compiled without XPU"):
                with make():
                    pass


def test_mkldnn_as_torch_except_availability():
    assert ember.backends.mkldnn.is_available() is False  # no oneDNN behind ember's kernels
    got = []
    for lib in (torch, ember):
        mk = lib.backends.mkldnn
        out = [mk.enabled, mk.deterministic, mk.is_acl_available(), mk.VERBOSE_ON]
        prev = mk.set_flags(False, True)
        out += [prev, (mk.enabled, mk.deterministic)]
        mk.set_flags(*prev)
        with mk.flags(enabled=False):
            out.append(mk.enabled)
        out.append(mk.enabled)
        with mk.verbose(mk.VERBOSE_OFF):
            pass
        got.append(out)
    assert got[0] == got[1]
    with pytest.raises(AssertionError, match="verbose mode"):
        with ember.backends.mkldnn.verbose(ember.backends.mkldnn.VERBOSE_ON):
            pass


def test_cpp_extension_imports_and_refuses_to_build():
    cpp = importlib.import_module("ember.utils.cpp_extension")
    assert cpp.CUDA_HOME is None
    for call in (lambda: cpp.load("ext", ["ext.cpp"]),
                 lambda: cpp.load_inline("ext", "int f() { return 1; }"),
                 lambda: cpp.CppExtension("ext", ["ext.cpp"]), lambda: cpp.BuildExtension(),
                 lambda: cpp.include_paths()):
        with pytest.raises(RuntimeError, match="ember has no C\\+\\+ extensions.*ember.library"):
            call()


def test_model_zoo_is_hubs_load_url():
    import ember.utils.model_zoo as mz
    import ember.hub
    assert mz.load_url is ember.hub.load_state_dict_from_url
    pytest.importorskip("tqdm")
    assert mz.tqdm.__name__ == "tqdm"


def test_utils_submodules_reachable_as_attributes():
    for name in ("hooks", "_pytree", "model_zoo", "benchmark", "flop_counter", "module_tracker",
                 "cpp_extension"):
        assert getattr(ember.utils, name).__name__ == f"ember.utils.{name}"
    assert ember.futures.Future and ember.nn.attention.SDPBackend
