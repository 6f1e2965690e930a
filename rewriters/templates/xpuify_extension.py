def xpuify_extension(*args, **kwargs):
    """Written by xpuify (rule XPU606): CUDAExtension where CUDA is found, else SyclExtension or CppExtension.

    CUDA toolkit found (CUDA_HOME; or ROCm): CUDAExtension(*args, **kwargs), unchanged. Else torch >= 2.7 with a
    SYCL compiler (SYCL_HOME) and a hand-ported .sycl file beside every .cu source: SyclExtension with those in
    place of the .cu files, XPUIFY_SYCL and XPUIFY_NO_CUDA defined. Else CppExtension without the CUDA sources,
    XPUIFY_NO_CUDA defined (C++ sources keep CUDA-only statements under #ifndef XPUIFY_NO_CUDA). Outside CUDA the nvcc entries of extra_compile_args and the dlink options are dropped.
    """
    import os
    import sys
    from torch.utils import cpp_extension

    def sources():
        return list(args[1] if len(args) > 1 else kwargs.get("sources", []))

    def cuda_source(path):
        return os.path.splitext(path)[1] in (".cu", ".cuh")

    def sycl_twin(path):
        return os.path.splitext(path)[0] + ".sycl"

    def build(extension, new_sources, macros, drop):
        a, kw = list(args), dict(kwargs)
        if len(a) > 1:
            a[1] = new_sources
        elif "sources" in kw:
            kw["sources"] = new_sources
        flags = kw.get("extra_compile_args")
        if isinstance(flags, dict):
            kw["extra_compile_args"] = {k: v for k, v in flags.items() if not k.startswith(drop)}
        kw.pop("dlink", None)
        kw.pop("dlink_libraries", None)
        kw["define_macros"] = list(kw.get("define_macros") or []) + [(m, None) for m in macros]
        return extension(*a, **kw)

    if cpp_extension.CUDA_HOME is not None or getattr(cpp_extension, "IS_HIP_EXTENSION", False):
        return cpp_extension.CUDAExtension(*args, **kwargs)
    elif (getattr(cpp_extension, "SyclExtension", None) is not None and getattr(cpp_extension, "SYCL_HOME", None)
          is not None and all(os.path.isfile(sycl_twin(s)) for s in sources() if cuda_source(s))):
        ported = [sycl_twin(s) if cuda_source(s) else s for s in sources()]
        return build(cpp_extension.SyclExtension, ported, ("XPUIFY_SYCL", "XPUIFY_NO_CUDA"), ("nvcc",))
    else:
        left_out = [s for s in sources() if cuda_source(s)]
        print("xpuify: CUDA_HOME is None: building %s as a CppExtension, left out: %s"
              % (args[0] if args else kwargs.get("name"), ", ".join(left_out) or "nothing"), file=sys.stderr)
        kept = [s for s in sources() if not cuda_source(s)]
        return build(cpp_extension.CppExtension, kept, ("XPUIFY_NO_CUDA",), ("nvcc", "sycl"))
