"""A chip process: runs the simulated chip for the parent Python process.

``python -m pypto.runtime._chip_worker`` starts one (``pypto.runtime`` registers an
equivalent command that loads only the native module, so that it starts without importing
the package); the parent passes a control socket and shared memory as inherited
descriptors, and this process serves its runs until the parent closes the channel. A kernel
that crashes here takes down only this process; the parent reports which task it was.
"""

from __future__ import annotations

import sys

from pypto import _native

if __name__ == "__main__":
    sys.exit(_native.chip_worker_main())
