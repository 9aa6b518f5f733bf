"""torch.export's graph signature: what each placeholder and each output of an exported graph is.

An exported graph is a pure function of flat inputs. Its placeholders are, in order, the lifted
parameters (`p_fc1_weight`), buffers (`b_bn_running_mean`), tensor constants (`c_...`) and the
user's inputs; its outputs are the new values of mutated buffers and inputs, then the user's
outputs. `InputSpec`/`OutputSpec` say which is which and name the module attribute (`target`)
each one stands for; `ExportGraphSignature` answers the usual questions from them.
"""
import dataclasses
from enum import Enum, auto

__all__ = ["ConstantArgument", "CustomObjArgument", "ExportBackwardSignature",
           "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "SymBoolArgument", "SymFloatArgument", "SymIntArgument", "TensorArgument"]


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class TokenArgument:
    name: str


@dataclasses.dataclass
class SymIntArgument:
    name: str


@dataclasses.dataclass
class SymFloatArgument:
    name: str


@dataclasses.dataclass
class SymBoolArgument:
    name: str


@dataclasses.dataclass
class CustomObjArgument:
    name: str
    class_fqn: str
    fake_val: object = None


@dataclasses.dataclass
class ConstantArgument:
    name: str
    value: object


class InputKind(Enum):
    USER_INPUT = auto()
    PARAMETER = auto()
    BUFFER = auto()
    CONSTANT_TENSOR = auto()
    CUSTOM_OBJ = auto()
    TOKEN = auto()


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: object
    target: str = None
    persistent: bool = None

    def __post_init__(self):
        if self.kind == InputKind.BUFFER and self.persistent is None:
            raise AssertionError("InputSpec: a BUFFER input needs `persistent`")

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


class OutputKind(Enum):
    USER_OUTPUT = auto()
    LOSS_OUTPUT = auto()
    BUFFER_MUTATION = auto()
    PARAMETER_MUTATION = auto()
    GRADIENT_TO_PARAMETER = auto()
    GRADIENT_TO_USER_INPUT = auto()
    USER_INPUT_MUTATION = auto()
    TOKEN = auto()


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: object
    target: str = None

    def __str__(self):
        target = "" if self.target is None else f" target='{self.target}'"
        return f"{self.arg.name}: {self.kind.name}{target}"


@dataclasses.dataclass
class ExportBackwardSignature:
    gradients_to_parameters: dict
    gradients_to_user_inputs: dict
    loss_output: str


def _names(specs, kind):
    return tuple(s.target for s in specs if s.kind == kind)


class ExportGraphSignature:
    """The kinds and targets of an exported graph's placeholders and outputs."""

    def __init__(self, input_specs, output_specs):
        self.input_specs = list(input_specs)
        self.output_specs = list(output_specs)

    def __eq__(self, other):
        return (isinstance(other, ExportGraphSignature) and
                self.input_specs == other.input_specs and self.output_specs == other.output_specs)

    @property
    def parameters(self):
        return _names(self.input_specs, InputKind.PARAMETER)

    @property
    def buffers(self):
        return _names(self.input_specs, InputKind.BUFFER)

    @property
    def non_persistent_buffers(self):
        return tuple(s.target for s in self.input_specs
                     if s.kind == InputKind.BUFFER and s.persistent is False)

    @property
    def lifted_tensor_constants(self):
        return _names(self.input_specs, InputKind.CONSTANT_TENSOR)

    @property
    def lifted_custom_objs(self):
        return _names(self.input_specs, InputKind.CUSTOM_OBJ)

    @property
    def user_inputs(self):
        out = []
        for s in self.input_specs:
            if s.kind != InputKind.USER_INPUT:
                continue
            out.append(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name)
        return tuple(out)

    @property
    def user_outputs(self):
        out = []
        for s in self.output_specs:
            if s.kind not in (OutputKind.USER_OUTPUT, OutputKind.LOSS_OUTPUT):
                continue
            out.append(s.arg.value if isinstance(s.arg, ConstantArgument) else s.arg.name)
        return tuple(out)

    def _inputs_to(self, kind):
        return {s.arg.name: s.target for s in self.input_specs if s.kind == kind}

    @property
    def inputs_to_parameters(self):
        return self._inputs_to(InputKind.PARAMETER)

    @property
    def inputs_to_buffers(self):
        return self._inputs_to(InputKind.BUFFER)

    @property
    def inputs_to_lifted_tensor_constants(self):
        return self._inputs_to(InputKind.CONSTANT_TENSOR)

    @property
    def inputs_to_lifted_custom_objs(self):
        return self._inputs_to(InputKind.CUSTOM_OBJ)

    def _outputs_to(self, kind):
        return {s.arg.name: s.target for s in self.output_specs if s.kind == kind}

    @property
    def buffers_to_mutate(self):
        return self._outputs_to(OutputKind.BUFFER_MUTATION)

    @property
    def parameters_to_mutate(self):
        return self._outputs_to(OutputKind.PARAMETER_MUTATION)

    @property
    def user_inputs_to_mutate(self):
        return self._outputs_to(OutputKind.USER_INPUT_MUTATION)

    @property
    def backward_signature(self):
        return None

    @property
    def assertion_dep_token(self):
        return None

    @property
    def input_tokens(self):
        return tuple(s.arg.name for s in self.input_specs if s.kind == InputKind.TOKEN)

    @property
    def output_tokens(self):
        return tuple(s.arg.name for s in self.output_specs if s.kind == OutputKind.TOKEN)

    def replace_all_uses(self, old, new):
        """Rename an argument (a graph node was renamed)."""
        for spec in self.input_specs + self.output_specs:
            if getattr(spec.arg, "name", None) == old and not isinstance(spec.arg,
                                                                         ConstantArgument):
                spec.arg.name = new

    def __str__(self):
        lines = ["", "# inputs"] + [str(s) for s in self.input_specs]
        lines += ["", "# outputs"] + [str(s) for s in self.output_specs]
        return "\n".join(lines) + "\n"
