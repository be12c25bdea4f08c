"""Calling compiled kernels without numba's per-call type dispatch.

Numba resolves argument types on every call; for record arrays and the spec record that
costs about 15 us -- more than a whole single-game step. :class:`FastCall` resolves them once
and then calls the compiled entry point directly, as long as the arrays and records keep
their dtype (the same dtype object) and the arrays stay C-contiguous (otherwise it falls back
to the ordinary dispatcher). Spec records of one layout share one dtype object
(:func:`core.spec.spec_record`), so every variant of that layout takes the fast path.
:meth:`FastCall.bind` goes one step further for a call whose arguments are always the same
objects (a single game's own arrays): it checks them once and returns a call without
arguments.
"""

from __future__ import annotations

from functools import partial

import numpy as np


class FastCall:
    def __init__(self, kernel):
        self.kernel = kernel
        self.entry = None
        self.dtypes: tuple = ()

    def __getstate__(self):  # copies and pickles re-resolve the entry point on first use
        return {"kernel": self.kernel, "entry": None, "dtypes": ()}

    def __deepcopy__(self, memo):
        return FastCall(self.kernel)

    def _fits(self, args) -> bool:
        if len(args) != len(self.dtypes):
            return False
        for a, dtype in zip(args, self.dtypes):
            # identity, not equality: comparing record dtypes field by field costs microseconds
            if dtype is None:
                continue
            if isinstance(a, np.ndarray):
                if a.dtype is not dtype or not a.flags.c_contiguous:
                    return False
            elif not isinstance(a, np.void) or a.dtype is not dtype:
                return False
        return True

    def bind(self, *args):
        """``kernel(*args)`` as a call without arguments, checked once here: ``args`` must be
        the same objects at every call (their contents may change, not their dtype or shape)."""
        signature = tuple(self.kernel.typeof_pyval(a) for a in args)
        self.kernel.compile(signature)
        return partial(self.kernel.overloads[signature].entry_point, *args)

    def __call__(self, *args):
        if self.entry is not None and self._fits(args):
            return self.entry(*args)
        out = self.kernel(*args)
        if self.entry is None and all(not isinstance(a, np.ndarray) or a.flags.c_contiguous
                                      for a in args):
            signature = tuple(self.kernel.typeof_pyval(a) for a in args)
            self.entry = self.kernel.overloads[signature].entry_point
            self.dtypes = tuple(a.dtype if isinstance(a, (np.ndarray, np.void)) else None
                                for a in args)
        return out
