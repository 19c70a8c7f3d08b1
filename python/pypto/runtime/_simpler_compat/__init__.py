"""Simpler's names, for builds that import them when the real Simpler is not installed.

PyPTO's generated ``orchestration/host_orch.py`` imports ``CallConfig``,
``CommBufferSpec``, ``DataType``, ``TaskArgs`` and ``TensorArgType`` from
``simpler.task_interface``. :mod:`pypto.runtime._simpler_shim` makes ``simpler`` and
``simpler.task_interface`` resolve to this package **only when no real ``simpler`` is
importable** (its finder is the last one on ``sys.meta_path``), so an installed Simpler is
never shadowed.
"""
