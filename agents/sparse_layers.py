"""The actor's sparse paths: inputs with few nonzeros, logits at the legal actions only.

A Mountain observation holds about 128 nonzero values of 1,809 (7%: card planes, counts).
On a CPU without bfloat16 matrix units the first layer's dense float32 matmuls (forward
and weight gradient, actor and critic) were most of the self-play trainer's update.
:class:`SparseInputLinear` is an ``nn.Linear`` (same parameters, same ``state_dict``) whose
forward, for a float32 batch outside autocast, sums the rows of the transposed weight at
each row's nonzero inputs (compiled), and whose weight gradient adds the output gradients
into those rows only: about 14x fewer multiply-adds, 2-3x faster end to end. Anything else
(bfloat16, autocast, an input that needs its gradient, more than ``MAX_DENSITY`` nonzeros)
runs the plain ``nn.Linear``.

:func:`legal_head` is the policy head at each row's legal actions only (about 6 of
Mountain's 1,845), compiled with its gradients: torch's indexing calls cost the
opponents' many small batches more than the arithmetic, and their backward was most of the
head's share of the update. :func:`agents.ppo_nets.legal_logits` calls it in float32.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch
import torch.nn as nn
from numba import njit

MAX_DENSITY = 0.25     # above this share of nonzeros the dense matmul is faster


@njit(cache=True)
def _nonzeros(x, indptr):
    """``indptr`` (rows + 1) of ``x``'s nonzeros, row by row; returns their number."""
    n = 0
    indptr[0] = 0
    for b in range(x.shape[0]):
        for j in range(x.shape[1]):
            n += x[b, j] != 0
        indptr[b + 1] = n
    return n


@njit(cache=True)
def _fill(x, cols, vals):
    """Each nonzero's column and value, row by row. Branch-free (every entry is written,
    the position moves on at nonzeros only; ``cols`` and ``vals`` have one spare slot): at
    7% nonzeros a branch per entry mispredicted often enough to cost twice as much."""
    k = 0
    for b in range(x.shape[0]):
        row = x[b]
        for j in range(x.shape[1]):
            v = row[j]
            cols[k] = j
            vals[k] = v
            k += v != 0


@njit(cache=True)
def _forward(indptr, cols, vals, weight_t, bias, out):
    """``out[b] = bias + sum of vals[k] * weight_t[cols[k]]`` over row b's nonzeros."""
    width = out.shape[1]
    for b in range(out.shape[0]):
        row = out[b]
        for o in range(width):
            row[o] = bias[o]
        for k in range(indptr[b], indptr[b + 1]):
            w = weight_t[cols[k]]
            v = vals[k]
            for o in range(width):
                row[o] += v * w[o]


@njit(cache=True)
def _weight_grad(indptr, cols, vals, grad_out, grad_t):
    """``grad_t[cols[k]] += vals[k] * grad_out[b]``: the transposed weight's gradient."""
    width = grad_out.shape[1]
    for b in range(grad_out.shape[0]):
        g = grad_out[b]
        for k in range(indptr[b], indptr[b + 1]):
            row = grad_t[cols[k]]
            v = vals[k]
            for o in range(width):
                row[o] += v * g[o]


class _SparseInputMatmul(torch.autograd.Function):
    """``x @ weight.T + bias`` from ``x``'s nonzeros (CSR arrays); no gradient for ``x``."""

    @staticmethod
    def forward(ctx, indptr, cols, vals, weight, bias, weight_t):
        out = np.empty((len(indptr) - 1, weight.shape[0]), np.float32)
        _forward(indptr, cols, vals, weight_t, bias.detach().numpy(), out)
        ctx.csr = (indptr, cols, vals)
        ctx.in_features = weight.shape[1]
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad_out):
        indptr, cols, vals = ctx.csr
        grad_weight = grad_bias = None
        if ctx.needs_input_grad[3]:
            grad_t = np.zeros((ctx.in_features, grad_out.shape[1]), np.float32)
            _weight_grad(indptr, cols, vals, grad_out.contiguous().numpy(), grad_t)
            grad_weight = torch.from_numpy(grad_t).t()
        if ctx.needs_input_grad[4]:
            grad_bias = grad_out.sum(0)
        return None, None, None, grad_weight, grad_bias, None


_LAST: list = [None, None]   # the last batch listed and its nonzeros (the critic reads the
                             # actor's batch next)


def batch_nonzeros(x: torch.Tensor):
    """:func:`sparse_rows` of the float32 batch ``x``, kept for the next call with the same
    unchanged tensor (the actor's and the critic's first layers read one batch; an
    inference-mode tensor is listed every time, as it keeps no version counter)."""
    if x.is_inference():    # no version counter: an in-place change could not be seen
        return sparse_rows(x.contiguous().numpy())
    key = (x.data_ptr(), x.shape, x.stride(), x._version)
    last = _LAST[0]
    if last is not None and last[0]() is x and last[1] == key:
        return _LAST[1]
    csr = sparse_rows(x.detach().contiguous().numpy())
    _LAST[0], _LAST[1] = (weakref.ref(x), key), csr
    return csr


def sparse_rows(x: np.ndarray):
    """``(indptr, cols, vals)``: the nonzeros of the float32 matrix ``x``, row by row (CSR),
    or None when more than ``MAX_DENSITY`` of it is nonzero."""
    indptr = np.empty(x.shape[0] + 1, np.int64)
    n = _nonzeros(x, indptr)
    if n > MAX_DENSITY * x.size:
        return None
    cols = np.empty(n + 1, np.int32)
    vals = np.empty(n + 1, np.float32)
    _fill(x, cols, vals)
    return indptr, cols[:n], vals[:n]


class SparseInputLinear(nn.Linear):
    """``nn.Linear`` that computes a large float32 batch from its nonzero inputs (module
    docstring); the result and the gradients are the dense layer's, up to float rounding."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.dim() != 2 or x.dtype != torch.float32 or x.requires_grad
                or self.weight.dtype != torch.float32 or x.device.type != "cpu"
                or torch.is_autocast_enabled("cpu")):
            return super().forward(x)
        csr = batch_nonzeros(x)
        if csr is None:
            return super().forward(x)
        return _SparseInputMatmul.apply(*csr, self.weight, self.bias, self.weight_t())

    def __getstate__(self):
        state = super().__getstate__()        # the cache (a weakref) is not pickled
        return {k: v for k, v in state.items() if k != "_weight_t"}

    def weight_t(self) -> np.ndarray:
        """The weight transposed (inputs by outputs, contiguous), kept until the weight
        changes: a frozen network (the league's, the rollouts') transposes it once."""
        w = self.weight
        key = (w.data_ptr(), w._version)
        cached = getattr(self, "_weight_t", None)
        if cached is None or cached[0]() is not w or cached[1] != key:
            cached = self._weight_t = (weakref.ref(w), key, w.detach().t().contiguous().numpy())
        return cached[2]


@njit(cache=True)
def _legal_head(h, weight, bias, ids, valid, gain, move, out):
    """``out[b, k] = bias[a] + h[b] . weight[a] (+ gain[a] * move[b, a])`` for ``a =
    ids[b, k]`` where ``valid``, else -1e9 (``gain`` empty: no move skip)."""
    skip = len(gain) > 0
    for b in range(ids.shape[0]):
        hb = h[b]
        for k in range(ids.shape[1]):
            if not valid[b, k]:
                out[b, k] = -1e9
                continue
            a = ids[b, k]
            w = weight[a]
            acc = bias[a]
            for o in range(hb.shape[0]):
                acc += hb[o] * w[o]
            if skip:
                acc += gain[a] * move[b, a]
            out[b, k] = acc


@njit(cache=True)
def _legal_head_grad(h, weight, ids, valid, move, grad_out, grad_h, grad_w, grad_b, grad_gain):
    """The gradients of :func:`_legal_head` (added into the zeroed ``grad_*`` arrays)."""
    skip = len(grad_gain) > 0
    for b in range(ids.shape[0]):
        hb = h[b]
        gh = grad_h[b]
        for k in range(ids.shape[1]):
            g = grad_out[b, k]
            if not valid[b, k] or g == 0:
                continue
            a = ids[b, k]
            w = weight[a]
            gw = grad_w[a]
            for o in range(hb.shape[0]):
                gh[o] += g * w[o]
                gw[o] += g * hb[o]
            grad_b[a] += g
            if skip:
                grad_gain[a] += g * move[b, a]


class _LegalHead(torch.autograd.Function):
    """:func:`_legal_head` with its gradients for ``h``, the head and the move-skip gains."""

    @staticmethod
    def forward(ctx, h, weight, bias, gain, ids, valid, move):
        hn, wn = h.detach().contiguous().numpy(), weight.detach().numpy()
        gn = gain.detach().numpy()
        out = np.empty(ids.shape, np.float32)
        _legal_head(hn, wn, bias.detach().numpy(), ids.numpy(), valid.numpy(), gn, move, out)
        ctx.saved = (hn, wn, ids.numpy(), valid.numpy(), move, len(gn))
        return torch.from_numpy(out)

    @staticmethod
    def backward(ctx, grad_out):
        hn, wn, ids, valid, move, n_gain = ctx.saved
        grad_h, grad_w = np.zeros_like(hn), np.zeros_like(wn)
        grad_b, grad_gain = np.zeros(len(wn), np.float32), np.zeros(n_gain, np.float32)
        _legal_head_grad(hn, wn, ids, valid, move, grad_out.contiguous().numpy(), grad_h,
                         grad_w, grad_b, grad_gain)
        return (torch.from_numpy(grad_h), torch.from_numpy(grad_w), torch.from_numpy(grad_b),
                torch.from_numpy(grad_gain) if n_gain else None, None, None, None)


def legal_head(h: torch.Tensor, head: nn.Linear, ids: torch.Tensor, valid: torch.Tensor,
               gain: torch.Tensor | None = None, x: torch.Tensor | None = None) -> torch.Tensor:
    """The logits of ``head`` on the float32 hidden batch ``h`` at the legal ids, padding
    at -1e9 (:func:`agents.ppo_nets.legal_logits`), with gradients; ``gain`` and ``x``: a
    move-skip actor's gains and its input (the move block is its last columns)."""
    if gain is None:
        gain, move = _NO_GAIN, np.zeros((0, 0), np.float32)
    else:
        move = np.ascontiguousarray(x.detach()[:, x.shape[1] - head.out_features:].float().numpy())
    return _LegalHead.apply(h, head.weight, head.bias, gain, ids, valid, move)


_NO_GAIN = torch.zeros(0)
