"""Duck-typed device arrays for the runtime tests: nothing is dereferenced, addresses are made up.

`FakeTensor` has the parts of ``torch.Tensor`` a launch reads (its class says module "torch");
its dtypes are interned like torch's (``torch.float32`` is one object), so that the launch fast
path, which keys on the dtype object, sees equal dtypes as one. `FakeCAI` is known only by its
``__cuda_array_interface__`` (strides in bytes).
"""

from __future__ import annotations

BASE = 0x7F00_0000_0000


class FakeCAI:
    def __init__(self, shape, typestr="<f4", strides=None, ptr=BASE, stream=None, mask=None):
        self.__cuda_array_interface__ = {
            "version": 3, "data": (ptr, False), "shape": tuple(shape), "typestr": typestr,
            "strides": None if strides is None else tuple(strides), "descr": [("", typestr)],
            "stream": stream, "mask": mask,
        }


class FakeTorchDevice:
    def __init__(self, kind, index=None):
        self.type, self.index = kind, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTorchDtype:
    _interned: dict[str, "FakeTorchDtype"] = {}

    def __new__(cls, name):
        if name not in cls._interned:
            dtype = cls._interned[name] = super().__new__(cls)
            dtype.name = name
        return cls._interned[name]

    def __str__(self):
        return f"torch.{self.name}"


class FakeTensor:
    def __init__(self, shape, stride, dtype="float32", device=("cuda", 0), ptr=BASE):
        self.shape, self._stride, self._ptr = tuple(shape), tuple(stride), ptr
        self.dtype, self.device = FakeTorchDtype(dtype), FakeTorchDevice(*device)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):
        return self.device.index if self.is_cuda else -1

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._stride


FakeTensor.__module__ = "torch"
