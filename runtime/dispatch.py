"""The launch fast path: a call's arguments -> cache key -> the `Binding`'s launch function.

For a kernel and one *kind signature* of its arguments (one `ArgKind` per parameter: the exact
Python type of the argument and what the compiled spec asks of it), `Dispatch` generates a
function that, per call:

* checks the arity and each argument's exact type (``type(a) is T``); a difference returns
  `MISS` and the launch tries its other dispatches, then the full path;
* reads each array once: a torch tensor's ``data_ptr()``, ``dtype``, ``shape``, ``stride()`` and
  ``get_device()`` (no `DeviceArray` is built), any other array's `arrays.as_device_array`;
* reads a tensor map (`tma.TMABinding`) as its `launch_key` (array kind, device, plan, rank:
  what the compiled spec and the full path's checks depend on) and its 128 descriptor bytes;
* checks each scalar against its dtype's range where an annotation fixes the dtype (else
  `MISS`), and for an unannotated int that it fits Int64, with the Int32 flag in the key;
* builds the key (per array: dtype, extents, strides, device, pointer % modulus; per unannotated
  int: the Int32 flag; per constexpr: the value, or for a static object a token of its value,
  remembered for the last object by identity, since hashing a plan or layout costs about a
  microsecond), finds the launch function made for that key
  (`binding.Binding`; `NO_ENTRY` if none) and calls it with the stream the arguments imply
  unless the launch gave one (`streams`): torch's current stream of the tensor's device, CuPy's,
  a ``__cuda_array_interface__`` ``stream`` entry, else 0.

Why every check stays: the first call with a key took the full path (`arguments.prepare` and
`common_device`: dtype, rank, static extents and strides, non-negative strides and 32-bit
indexing, pointer and stride alignment, one device), which raised on any broken rule before
the entry was made. Everything those rules read is in the key, and the modulus is a multiple of
every alignment the kernel can require (16, the element sizes, an annotated ``align=``), so a
call with an equal key satisfies them all.

When the cache is invalid: entries hold launch functions of compiled kernels, so they are
valid while the compile key is. The key's other parts are the block shape (a `FastPath` per
kernel and block) and what the frontend checks per launch before the dispatch (the toolchain;
the globals a kernel reads); the frontend drops the kernel's `FastPath`s when one changed. A
`FastPath` keeps at most `MAX_DISPATCHES` kind signatures and `MAX_ENTRIES` keys per signature
(then it starts that signature's entries afresh).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from ..compiler.hardware import dtypes
from ..compiler.params.signature import Scalar, ScalarSpec, Tensor, TensorMapSpec, TensorSpec
from .arguments import AUTO_ALIGN, _int_range
from .arrays import DeviceArray, as_device_array
from .streams import _cupy_current, current_stream_reader
from .tma import TMABinding

MISS = object()
"""A dispatch's answer when its guards fail: the arguments are of other kinds."""
NO_ENTRY = object()
"""A dispatch's answer when the kinds match but no launch function was made for the key."""
MAX_DISPATCHES = 8
MAX_ENTRIES = 1024
_PLAIN = (bool, int, float, str, type(None))
_INT32 = _int_range(dtypes.Int32)
_INT64 = _int_range(dtypes.Int64)


class ArgKind(NamedTuple):
    """What the dispatch expects of one argument.

    role: "torch" (a torch tensor), "array" (any other device array; `array_kind` is its
    `DeviceArray.kind`), "tensor_map" (a `TMABinding` of a device array, `array_kind` its
    array's kind), "scalar" or "constexpr". type: the exact Python type. modulus: the
    pointer modulus of an array. auto_int: an unannotated int (Int32 or Int64 by value).
    bounds: (lo, hi) of a scalar whose int dtype an annotation fixes.
    """

    role: str
    type: type
    modulus: int = 0
    array_kind: str = ""
    auto_int: bool = False
    bounds: tuple[int, int] | None = None


def kind_of(value: Any, launch_value: Any, spec: Any, annotation: Any) -> ArgKind | None:
    """The `ArgKind` of an argument that took the full path (`value` as given, `launch_value`
    as `arguments.prepare` returned it), or None when the fast path does not take it (a numpy
    scalar, say: it keeps the full path)."""
    if isinstance(spec, TensorSpec):
        modulus = AUTO_ALIGN
        if isinstance(annotation, Tensor) and annotation.align:
            modulus = math.lcm(modulus, annotation.align)
        if not isinstance(launch_value, DeviceArray):
            return None
        role = "torch" if launch_value.kind == "torch" and type(value) is not DeviceArray else "array"
        return ArgKind(role, type(value), modulus, launch_value.kind)
    if isinstance(spec, TensorMapSpec):
        if type(value) is not TMABinding or value.host:
            return None  # a host binding: the full path refuses it (param_bytes)
        return ArgKind("tensor_map", TMABinding, array_kind=value.device_array.kind)
    if isinstance(spec, ScalarSpec):
        if type(value) not in (bool, int, float):
            return None
        if not spec.dtype.is_int:
            return ArgKind("scalar", type(value))
        if isinstance(annotation, Scalar):
            return ArgKind("scalar", type(value), bounds=_int_range(spec.dtype))
        return ArgKind("scalar", type(value), auto_int=True)
    return ArgKind("constexpr", type(value))


def _snippets(kinds: Sequence[ArgKind], names: Sequence[str]):
    """(body lines, key parts, call inputs, stream expression) of the generated dispatch."""
    body, key, inputs = [], [], []
    stream = "0"
    streams = []  # per array, in order: (expression, final?)
    for i, (k, name) in enumerate(zip(kinds, names)):
        if k.role == "torch":
            body.append(f"p{i} = a{i}.data_ptr(); s{i} = a{i}.shape; t{i} = a{i}.stride(); "
                        f"g{i} = a{i}.get_device()")
            key += [f"a{i}.dtype", f"s{i}", f"t{i}", f"g{i}", f"p{i} % {k.modulus}"]
            inputs += [f"p{i}", f"s{i}", f"t{i}"]
            streams.append((f"TORCH_STREAM(g{i})", True))
        elif k.role == "array":
            body += [f"d{i} = AS({name!r}, a{i})", f"if d{i} is None:", "    return MISS"]
            key += [f"d{i}.dtype.name", f"d{i}.shape", f"d{i}.strides", f"d{i}.device",
                    f"d{i}.ptr % {k.modulus}"]
            inputs += [f"d{i}.ptr", f"d{i}.shape", f"d{i}.strides"]
            if k.array_kind == "cupy":
                streams.append((f"CUPY_STREAM(d{i}.device)", True))
            elif k.array_kind != "dlpack":
                streams.append((f"d{i}.stream", False))
        elif k.role == "tensor_map":  # the descriptor by value; the key: kind, device, plan
            key.append(f"a{i}.launch_key")
            inputs.append(f"a{i}.descriptor_bytes")
            if k.array_kind == "torch":
                streams.append((f"TORCH_STREAM(a{i}.device_array.device)", True))
            elif k.array_kind == "cupy":
                streams.append((f"CUPY_STREAM(a{i}.device_array.device)", True))
            elif k.array_kind != "dlpack":
                streams.append((f"a{i}.device_array.stream", False))
        elif k.role == "scalar":
            lo, hi = k.bounds if k.bounds else _INT64 if k.auto_int else (None, None)
            if lo is not None:
                body += [f"if not {lo} <= a{i} <= {hi}:", "    return MISS"]
            if k.auto_int:
                key.append(f"{_INT32[0]} <= a{i} <= {_INT32[1]}")
            inputs.append(f"a{i}")
        elif k.type in _PLAIN:
            key.append(f"a{i}")
        else:  # a static object (a layout, a plan): its hash can cost a microsecond
            body += [f"m{i} = MEMO{i}[0]", f"if a{i} is m{i}[0]:", f"    k{i} = m{i}[1]",
                     "else:", f"    k{i} = TOKEN(MEMO{i}, a{i})", f"    if k{i} is MISS:",
                     "        return MISS"]
            key.append(f"k{i}")
    for expr, final in reversed(streams):
        stream = expr if final else f"({expr} if {expr} is not None else {stream})"
    return body, key, inputs, stream


_TEMPLATE = """\
def dispatch(args, gx, gy, gz, smem, stream, sdev):
{head}
    launch = ENTRIES.get({key})
    if launch is None:
        return NO_ENTRY
    if stream is None:
        stream = {stream}
    return launch(gx, gy, gz, smem, stream, sdev{inputs})

def key_of(args):
{head}
    return {key}
"""


class Dispatch:
    """The generated dispatch of one kind signature (module docstring) and its entries."""

    def __init__(self, kinds: Sequence[ArgKind], names: Sequence[str]):
        self.kinds = tuple(kinds)
        self.entries: dict[tuple, Callable] = {}
        n = len(kinds)
        body, key, inputs, stream = _snippets(kinds, names)
        unpack = ", ".join(f"a{i}" for i in range(n)) + ("," if n == 1 else "")
        head = [f"if len(args) != {n}:", "    return MISS"]
        if n:
            head.append(f"{unpack} = args")
            head += ["if " + " or ".join(f"type(a{i}) is not T{i}" for i in range(n)) + ":",
                     "    return MISS"]
        head += body
        source = _TEMPLATE.format(
            head="\n".join("    " + line for line in head),
            key="(" + ", ".join(key) + ("," if len(key) == 1 else "") + ")",
            stream=stream, inputs="".join(", " + x for x in inputs))
        tokens: dict[Any, int] = {}
        namespace: dict[str, Any] = {
            "MISS": MISS, "NO_ENTRY": NO_ENTRY, "ENTRIES": self.entries, "AS": as_device_array,
            "TOKEN": lambda memo, value: _token(tokens, memo, value),
            "TORCH_STREAM": (current_stream_reader("torch")
                             if any(k.role == "torch" or k.array_kind == "torch"
                                    for k in kinds) else None),
            "CUPY_STREAM": _cupy_current,
            **{f"T{i}": k.type for i, k in enumerate(kinds)},
            **{f"MEMO{i}": [(_UNSEEN, None)] for i in range(len(kinds))},
        }
        exec(compile(source, "<tylo dispatch>", "exec"), namespace)  # noqa: S102
        self.run: Callable = namespace["dispatch"]
        self.key_of: Callable = namespace["key_of"]
        self.source = source

    def add(self, key: tuple, launch: Callable) -> None:
        """Install `launch` for `key` (a `Binding`'s install hook)."""
        if key not in self.entries and len(self.entries) >= MAX_ENTRIES:
            self.entries.clear()
        self.entries[key] = launch


_UNSEEN = object()


def _token(tokens: dict, memo: list, value: Any) -> Any:
    """A small int standing for `value` (equal values, one token), remembered in `memo` as one
    (object, token) pair (one assignment: safe across threads); `MISS` if unhashable."""
    try:
        token = tokens.setdefault(value, len(tokens))
    except TypeError:
        return MISS
    memo[0] = (value, token)
    return token


def _miss(args, gx, gy, gz, smem, stream, sdev):
    return MISS


class FastPath:
    """The dispatches of one kernel and block shape; `run` is the one that matched last."""

    def __init__(self) -> None:
        self.dispatches: list[Dispatch] = []
        self.run: Callable = _miss

    def others(self, args, gx, gy, gz, smem, stream, sdev) -> Any:
        """Try the dispatches other than `run`: None when one launched (it becomes `run`), the
        `Dispatch` whose kinds match but that has no entry for the key, else `MISS`."""
        for d in self.dispatches:
            if d.run is not self.run:
                r = d.run(args, gx, gy, gz, smem, stream, sdev)
                if r is None:
                    self.run = d.run
                    return None
                if r is NO_ENTRY:
                    return d
        return MISS

    def dispatch_for(self, kinds: Sequence[ArgKind], names: Sequence[str]) -> Dispatch:
        """The dispatch of this kind signature (made on first use; the oldest is dropped past
        `MAX_DISPATCHES`); it becomes `run`."""
        kinds = tuple(kinds)
        for d in self.dispatches:
            if d.kinds == kinds:
                break
        else:
            d = Dispatch(kinds, names)
            self.dispatches.append(d)
            if len(self.dispatches) > MAX_DISPATCHES:
                self.dispatches.pop(0)
        self.run = d.run
        return d
