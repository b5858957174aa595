"""Which XLA backend compiled an optimized module, read from what that backend leaves in
the text. Several passes differ between pipelines (where CSE runs, whether calls are
inlined before DCE, buffer alignment), so the matcher, the fate engine and the memory
estimate all ask the same question; this module is the one answer."""

from __future__ import annotations

from ..hlo.model import Module

_GPU_LIBRARIES = ("__cublas", "__cudnn", "__triton")


def compiled_for_gpu(module: Module) -> bool:
    """Whether XLA's GPU backend compiled ``module``: an instruction in any computation (a
    loop's body may hold all the kernels) carries a GPU backend config (a stream,
    ``operation_queue_id``, or a Triton fusion) or calls cuBLAS, cuDNN or Triton."""
    for c in module.computations:
        for i in c.instructions:
            if (i.custom_call_target or "").startswith(_GPU_LIBRARIES):
                return True
            bc = i.attrs.get("backend_config")
            if bc and ("operation_queue_id" in str(bc) or "__triton" in str(bc)):
                return True
    return False
