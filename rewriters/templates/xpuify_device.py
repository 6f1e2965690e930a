# xpuify: ignore-file  (this module is the device-agnostic layer: it must name CUDA)
"""Device helper written by xpuify (`xpuify fix --target compat`): one place that picks the device at run time
and wraps what differs between CUDA, Intel XPU, Apple MPS, XLA and CPU. Works with torch 1.13 and later.

Priority: the XPUIFY_DEVICE_PRIORITY environment variable (comma-separated, e.g. "xpu,cuda,cpu") or the
default baked in below. XPUIFY_DEVICE forces one device type. On an NVIDIA machine the result is "cuda", so
CUDA code behaves exactly as before.

Importing this module has no side effect: torch is imported, and the device picked (probing CUDA, XPU, MPS), at
first use (the first `DEV`, `device()`, ... a fixed file evaluates), so an environment set-up that runs after the
import (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER, XPUIFY_DEVICE) still counts. The pick does not initialise the
CUDA driver where NVML can count the devices (as torch's PYTORCH_NVML_BASED_CUDA_CHECK=1 does), so a pick that a
fixed file makes when it is imported (a default argument `device=xpuify_device.DEV`, a decorator) leaves a later
CUDA_VISIBLE_DEVICES in force, as the original `"cuda"` did.
"""
import contextlib
import os


class _LazyTorch:
    """`torch`, imported when first used: importing the helper imports nothing the file did not import."""

    def __getattr__(self, name):
        import torch as _torch
        return getattr(_torch, name)


torch = _LazyTorch()

__all__ = ["DEV", "device", "device_str", "device_ctx", "autocast", "init", "is_initialized", "module", "is_available", "device_count", "current_device", "set_device",
           "synchronize", "empty_cache", "ipc_collect", "memory_summary", "new_tensor", "manual_seed", "manual_seed_all", "GradScaler", "custom_fwd",
           "custom_bwd", "dist_backend", "dist_backend_available", "dist_available", "OutOfMemoryError"]

_DEFAULT_PRIORITY = "@PRIORITY@"


def _xpu_available():
    try:
        return hasattr(torch, "xpu") and torch.xpu.is_available()
    except Exception as e:  # a broken XPU runtime must not hide CUDA or CPU
        import warnings
        warnings.warn("xpuify_device: torch.xpu.is_available() failed: %s" % (e,))
        return False


def _cuda_available():
    """Whether CUDA has a device. torch.cuda.is_available() initialises the CUDA driver, which reads
    CUDA_VISIBLE_DEVICES then and never again; NVML counts the visible devices without it (torch's own
    PYTORCH_NVML_BASED_CUDA_CHECK=1 way). So where CUDA is not initialised yet, in a CUDA build of torch, NVML's
    "there are devices" answers; torch answers once CUDA is initialised, in other builds (ROCm, CPU), where NVML
    cannot, and where NVML sees none (torch 1.13's NVML count does not read device UUIDs in CUDA_VISIBLE_DEVICES)."""
    cuda = torch.cuda
    try:
        if torch.version.hip is None and torch.backends.cuda.is_built() and not cuda.is_initialized():
            count = getattr(cuda, "_device_count_nvml", None)
            if count is not None:
                import warnings
                with warnings.catch_warnings():  # "Can't initialize NVML": torch is asked instead
                    warnings.simplefilter("ignore")
                    n = count()
                if n > 0:
                    return True
    except Exception:  # a private API that changed or a broken NVML: torch is asked
        pass
    return cuda.is_available()


def _mps_available():
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _xla_available():
    try:
        import torch_xla  # noqa: F401
        return True
    except ImportError:
        return False


_PROBES = {"cuda": _cuda_available, "xpu": _xpu_available, "mps": _mps_available,
           "xla": _xla_available, "cpu": lambda: True}


def _pick():
    forced = os.environ.get("XPUIFY_DEVICE")
    if forced:
        return forced
    order = os.environ.get("XPUIFY_DEVICE_PRIORITY", _DEFAULT_PRIORITY)
    for name in [p.strip() for p in order.split(",") if p.strip()] + ["cpu"]:
        probe = _PROBES.get(name)
        if probe is not None and probe():
            return name
    return "cpu"


_DEV = None


def _dev():
    """The device type, picked at first use and cached: "cuda", "xpu", "mps", "xla" or "cpu"."""
    global _DEV
    if _DEV is None:
        _DEV = _pick()
    return _DEV


def __getattr__(name):
    # module attributes computed at first use (PEP 562): `xpuify_device._dev()` probes the devices only when read
    if name == "DEV":
        return _dev()
    if name == "OutOfMemoryError":
        return getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", RuntimeError)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


class _NoModule:
    """Stands in for a device without a torch module (XLA): every query answers "not available"."""

    def __getattr__(self, name):
        return None


def module(dev=None):
    """The torch module of a device type (torch.cuda, torch.xpu, torch.mps, torch.cpu)."""
    dev = dev or _dev()
    try:
        if hasattr(torch, "get_device_module"):
            return torch.get_device_module(dev)
        return getattr(torch, dev)
    except (AttributeError, RuntimeError, ValueError):
        return _NoModule()


def device(index=None):
    """A torch.device of the picked type. `index` may be an int, or what `.cuda(...)` takes: a torch.device or a
    string such as "cuda:1", whose index is kept (a CPU device stays the CPU)."""
    if isinstance(index, str):
        index = torch.device(index)
    if isinstance(index, torch.device):
        if index.type == "cpu":
            return index
        index = index.index
    return torch.device(_dev()) if index is None or _dev() == "cpu" else torch.device(_dev(), index)


def device_str(index=None):
    """"cuda:1", "xpu:1"; plain "cpu" on the CPU, where an index means nothing (map_location rejects "cpu:0").
    A device given instead of an index (a string such as "cuda:1", a torch.device) is read as device() reads it."""
    if isinstance(index, (str, torch.device)):
        return str(device(index))
    if _dev() == "cpu" or index is None:
        return _dev()
    return "%s:%s" % (_dev(), index)


def device_ctx(index):
    """`with torch.cuda.device(i):` for the picked device; a no-op on the CPU. `i` as torch.cuda.device takes it: an
    int, a torch.device or a string ("cuda:1" is index 1 of the picked device; no index: the current device). A
    torch.device of another accelerator that this host also has (a tensor's own device, `x.device`, on a host with
    CUDA and XPU) enters that accelerator's context, as torch.cuda.device(x.device) does for a CUDA tensor."""
    if isinstance(index, torch.device) and index.type not in ("cpu", _dev()):
        own = getattr(torch, index.type, None)
        available = getattr(own, "is_available", None)
        if getattr(own, "device", None) is not None and available is not None and available():
            return own.device(index.index)
    ctx = getattr(module(), "device", None)
    if _dev() == "cpu" or index is None or ctx is None:  # MPS and XLA have no per-index device context
        return contextlib.nullcontext()
    if isinstance(index, str):
        index = torch.device(index)
    if isinstance(index, torch.device):
        index = index.index
    return ctx(index)


def init():
    fn = getattr(module(), "init", None)
    if _dev() != "cpu" and fn is not None:
        fn()


def is_initialized():
    fn = getattr(module(), "is_initialized", None)
    return bool(fn()) if _dev() != "cpu" and fn is not None else False


def autocast(enabled=True, dtype=None, cache_enabled=None):
    """torch.cuda.amp.autocast's signature, on the picked device. On the CPU it autocasts to bfloat16, the CPU's
    autocast dtype (also where no dtype is given); a float16 autocast asked of the CPU (the CUDA dtype, as
    `dtype=torch.get_autocast_gpu_dtype()` gives it) is off there, as it was in the original on a host without CUDA:
    float16 matmuls on the CPU are slow and lose precision. Where the device cannot autocast at all (MPS before torch
    2.5, whose torch.autocast("mps") raises even when disabled) or not to the requested dtype, autocast is off too (a
    disabled autocast, which also decorates), with a warning where it was asked for."""
    if _dev() == "cpu" and dtype is not None and dtype != torch.bfloat16:
        return torch.autocast("cpu", enabled=False)
    kwargs = {"enabled": enabled}
    if dtype is not None:
        kwargs["dtype"] = dtype
    if cache_enabled is not None:
        kwargs["cache_enabled"] = cache_enabled
    if not _autocast_supports(_dev(), None) or (dtype is not None and not _autocast_supports(_dev(), dtype)):
        if enabled:
            import warnings
            warnings.warn("xpuify_device: %s autocast%s is not available in this torch build; running without "
                          "autocast" % (_dev(), "" if dtype is None else " to %s" % (dtype,)))
        off = _dev() if _dev() in ("cuda", "cpu", "xpu") and _autocast_supports(_dev(), None) else "cpu"
        return torch.autocast(off, enabled=False)
    return torch.autocast(_dev(), **kwargs)


_AUTOCAST_OK = {}


def _autocast_supports(dev, dtype):
    """Whether torch.autocast(dev, dtype) can be entered (CPU autocast took only bfloat16 before torch 2.1); dtype
    None: whether the device has autocast at all."""
    key = (dev, dtype)
    if key not in _AUTOCAST_OK:
        try:
            with (torch.autocast(dev, enabled=False) if dtype is None else torch.autocast(dev, dtype=dtype)):
                pass
            _AUTOCAST_OK[key] = True
        except (RuntimeError, ValueError):
            _AUTOCAST_OK[key] = False
    return _AUTOCAST_OK[key]


def is_available():
    return _dev() != "cpu"


def device_count():
    """How many devices of the picked type (torch.mps has no device_count before torch 2.4: one)."""
    if _dev() == "cpu":
        return 0
    fn = getattr(module(), "device_count", None)
    return fn() if fn is not None else 1


def current_device():
    """An int on every device, as torch.cuda.current_device() (MPS and XLA have one device: 0)."""
    fn = getattr(module(), "current_device", None)
    return fn() if _dev() in ("cuda", "xpu") and fn is not None else 0


def set_device(index):
    if isinstance(index, str):
        index = int(index.split(":", 1)[1]) if ":" in index else None
    elif isinstance(index, torch.device):
        index = index.index
    fn = getattr(module(), "set_device", None)
    if _dev() in ("cuda", "xpu") and fn is not None and index is not None:
        fn(index)


def synchronize(dev=None):
    """torch.cuda.synchronize(device=None); torch.mps.synchronize() takes no device."""
    fn = getattr(module(), "synchronize", None)
    if _dev() == "cpu" or fn is None:
        return
    if dev is None or _dev() not in ("cuda", "xpu"):
        fn()
    else:
        fn(dev)


class _CpuStream:
    """What CUDA streams do, on the CPU, where work runs in order: waiting and synchronizing are no-ops."""

    @property
    def device(self):
        return torch.device("cpu")

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or _CpuEvent()
        event.record(self)
        return event

    def synchronize(self):
        pass

    def query(self):
        return True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _CpuEvent:
    """A CUDA event on the CPU: records the wall-clock time; elapsed_time() in milliseconds like CUDA's."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._t = None

    def record(self, stream=None):
        import time
        self._t = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        if self._t is None or end._t is None:
            raise RuntimeError("xpuify_device: elapsed_time() needs both events recorded")
        return (end._t - self._t) * 1000.0


_CPU_STREAM = _CpuStream()


def _has_streams():
    return _dev() != "cpu" and getattr(module(), "current_stream", None) is not None


def current_stream(dev=None):
    if not _has_streams():  # the CPU, MPS and XLA: work runs in order on one queue
        return _CPU_STREAM
    return module().current_stream(dev)


def set_stream(stream):
    if not _has_streams():
        return None
    return module().set_stream(stream)


def stream(s):
    if not _has_streams() or isinstance(s, _CpuStream):
        return contextlib.nullcontext()
    return module().stream(s)


def _event_or_stream(kind, *args, **kwargs):
    if not _has_streams():
        # torch.cpu has no Event and (before torch 2.1) no Stream: work on the CPU is already in order
        return _CpuEvent(*args, **kwargs) if kind == "Event" else _CpuStream()
    # the device module's own class first (torch.cuda.Stream on CUDA: exactly what the CUDA code made), else
    # the generic torch.Stream/torch.Event of torch >= 2.4
    cls = getattr(module(), kind, None) or getattr(torch, kind)
    return cls(*args, **kwargs)


class _DeviceClass(type):
    """torch.cuda.Stream and torch.cuda.Event as the helper's names: calling one makes the picked device's object
    (exactly torch.cuda's on CUDA), and `isinstance(s, xpuify_device.Stream)` or an annotation works as with the
    CUDA class (a function in their place made isinstance raise TypeError)."""

    def __call__(cls, *args, **kwargs):
        return _event_or_stream(cls.__name__, *args, **kwargs)

    def __instancecheck__(cls, obj):
        kinds = [_CpuEvent if cls.__name__ == "Event" else _CpuStream]
        for owner in ((module() if _dev() != "cpu" else None), torch):
            kind = getattr(owner, cls.__name__, None) if owner is not None else None
            if isinstance(kind, type):
                kinds.append(kind)
        return isinstance(obj, tuple(kinds))


class Stream(metaclass=_DeviceClass):
    pass


class Event(metaclass=_DeviceClass):
    pass


# torch.mps's names for what torch.cuda calls memory_allocated and memory_reserved (no device argument there)
_MPS_MEM = {"memory_allocated": "current_allocated_memory", "memory_reserved": "driver_allocated_memory"}


def _mem(name, *args, default=0):
    mod = module()
    if _dev() == "mps":
        fn = getattr(mod, _MPS_MEM.get(name, name), None)
        return fn() if fn is not None else default
    fn = getattr(mod, name, None)
    if _dev() == "cpu" or fn is None:
        return default
    return fn(*args)


def empty_cache():
    _mem("empty_cache", default=None)


def memory_allocated(dev=None):
    return _mem("memory_allocated", dev)


def max_memory_allocated(dev=None):
    return _mem("max_memory_allocated", dev)


def memory_reserved(dev=None):
    return _mem("memory_reserved", dev)


def max_memory_reserved(dev=None):
    return _mem("max_memory_reserved", dev)


def reset_peak_memory_stats(dev=None):
    _mem("reset_peak_memory_stats", dev, default=None)


def reset_accumulated_memory_stats(dev=None):
    _mem("reset_accumulated_memory_stats", dev, default=None)


def memory_stats(dev=None):
    return _mem("memory_stats", dev, default={})


def ipc_collect():
    """torch.cuda.ipc_collect() on CUDA; no other device shares memory through CUDA IPC, so there is nothing to
    collect (torch.cuda.ipc_collect() raises without CUDA)."""
    if _dev() == "cuda":
        torch.cuda.ipc_collect()


def memory_summary(device=None, abbreviated=False):
    """torch.cuda.memory_summary() on CUDA. Elsewhere the device module's own memory_summary where it has one, else
    a table of its allocator statistics (torch.xpu.memory_stats(); on MPS the memory torch allocated and the driver
    holds; on the CPU a line saying there is no device memory): a report for people, never parsed."""
    dev = _dev()
    if dev == "cuda":
        return torch.cuda.memory_summary(device=device, abbreviated=abbreviated)
    own = getattr(module(), "memory_summary", None) if dev != "cpu" else None
    if own is not None:
        return own(device=device, abbreviated=abbreviated)
    if dev == "cpu":
        return "memory summary: no accelerator, no device memory"
    if dev == "mps":
        stats = {"allocated_bytes.current": memory_allocated(), "driver_allocated_bytes.current": memory_reserved()}
    else:
        stats = memory_stats(device)
    if abbreviated:
        stats = {k: v for k, v in stats.items() if ".all." in k or "." not in k or k.endswith(".current")}
    rows = [f"|  {k:<44}| {v:>20} |" for k, v in sorted(stats.items())]
    rule = "|" + "=" * 69 + "|"
    return "\n".join([rule, f"|  {dev.upper()} memory summary (allocator statistics){' ' * (69 - 41 - len(dev))}|", rule] + rows + [rule])


def mem_get_info(dev=None):
    return _mem("mem_get_info", dev, default=(0, 0))


def new_tensor(dtype, *args, **kwargs):
    """`torch.cuda.FloatTensor(...)` and the other legacy CUDA tensor types, called, on the picked device: sizes
    (ints, or one torch.Size) give an uninitialised tensor, one sequence or array gives a tensor of its data, no
    argument an empty one; `device=` as the legacy types take it."""
    import operator
    dev = device(kwargs.pop("device", None))
    if kwargs:
        raise TypeError("new_tensor() got unexpected keyword arguments %s" % ", ".join(sorted(kwargs)))
    if not args:
        return torch.empty(0, dtype=dtype, device=dev)
    if len(args) == 1 and isinstance(args[0], torch.Tensor):  # the legacy types alias a tensor of their own type
        t = args[0]
        if t.dtype != dtype or t.device.type != dev.type:
            raise TypeError("expected %s on %s (got %s on %s)" % (dtype, dev.type, t.dtype, t.device.type))
        return t[...]
    if len(args) == 1 and isinstance(args[0], torch.Size):
        return torch.empty(args[0], dtype=dtype, device=dev)
    sizes = []
    for a in args:
        try:
            sizes.append(operator.index(a))
        except TypeError:
            if len(args) != 1:
                raise
            return torch.tensor(a, dtype=dtype, device=dev)
    return torch.empty(*sizes, dtype=dtype, device=dev)


def manual_seed(seed):
    fn = getattr(module(), "manual_seed", None)
    if _dev() != "cpu" and fn is not None:
        fn(seed)


def manual_seed_all(seed):
    mod = module()
    fn = getattr(mod, "manual_seed_all", None) or getattr(mod, "manual_seed", None)  # torch.mps: manual_seed only
    if _dev() != "cpu" and fn is not None:
        fn(seed)


def get_device_name(dev=None):
    fn = getattr(module(), "get_device_name", None)
    if _dev() == "cpu" or fn is None:  # the CPU, MPS (no get_device_name), XLA
        import platform
        return platform.processor() or _dev()
    return fn(dev)


def get_device_properties(dev=None):
    return module().get_device_properties(dev)


_BF16 = {}


def is_bf16_supported():
    """torch.cuda.is_bf16_supported() for the picked device. torch.mps has none: MPS takes bfloat16 from macOS 14
    on, so a bfloat16 tensor made there answers (code that fell through to bf16 off CUDA keeps bf16 on a Mac)."""
    fn = getattr(module(), "is_bf16_supported", None)
    if fn is not None:
        return bool(fn())
    if _dev() == "mps":
        if "mps" not in _BF16:
            try:
                torch.ones(1, dtype=torch.bfloat16, device="mps")
                _BF16["mps"] = True
            except (RuntimeError, TypeError):
                _BF16["mps"] = False
        return _BF16["mps"]
    return _dev() == "cpu"


def GradScaler(*args, **kwargs):
    """torch.amp.GradScaler for the picked device; on torch < 2.3 the CUDA scaler, disabled off CUDA.
    Note: Intel Arc A-series GPUs lack FP64, which GradScaler's unscale step needs: prefer bf16 there."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler(_dev(), *args, **kwargs)
    if _dev() != "cuda":
        kwargs["enabled"] = False
    return torch.cuda.amp.GradScaler(*args, **kwargs)


def _amp_decorator(name, fwd=None, **kwargs):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, name):
        deco = getattr(amp, name)
        if fwd is not None:
            return deco(fwd, device_type=_dev(), **kwargs)
        return deco(device_type=_dev(), **kwargs)
    deco = getattr(torch.cuda.amp, name)
    return deco(fwd, **kwargs) if fwd is not None else deco(**kwargs)


def custom_fwd(fwd=None, **kwargs):
    return _amp_decorator("custom_fwd", fwd, **kwargs)


def custom_bwd(bwd=None, **kwargs):
    return _amp_decorator("custom_bwd", bwd, **kwargs)


_BACKENDS = {"cuda": "nccl", "xpu": "xccl", "cpu": "gloo", "mps": "gloo", "xla": "xla"}


def dist_backend():
    """The torch.distributed backend for the picked device: nccl, xccl (torch >= 2.8), ccl (oneCCL bindings,
    older torch), gloo."""
    import torch.distributed as dist
    if hasattr(dist, "get_default_backend_for_device"):
        try:
            return dist.get_default_backend_for_device(_dev())
        except (ValueError, RuntimeError):
            pass
    backend = _BACKENDS.get(_dev(), "gloo")
    if backend == "xccl" and not getattr(dist, "is_xccl_available", lambda: False)():
        try:  # before torch 2.8, Intel's bindings register the "ccl" backend when imported
            import oneccl_bindings_for_pytorch  # noqa: F401
            backend = "ccl"
        except ImportError:
            backend = "gloo"
    return backend


def dist_available():
    """Whether torch.distributed carries the picked device's tensors: CUDA (as torch.cuda.is_available() said), XPU
    with XCCL or oneCCL. Not MPS or the CPU: gloo carries CPU tensors, and no backend MPS ones, so a test that guards
    DDP or collectives on the device (`if torch.cuda.is_available(): model = DDP(model, device_ids=[dev])`) keeps
    its other branch there, as the original did."""
    if _dev() == "cuda":
        return True
    return _dev() == "xpu" and dist_backend() in ("xccl", "ccl") and dist_backend_available()


def dist_backend_available():
    import torch.distributed as dist
    return dist.is_available() and dist.is_backend_available(dist_backend()) if hasattr(
        dist, "is_backend_available") else dist.is_available()



