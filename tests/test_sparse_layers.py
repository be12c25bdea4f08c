"""The actor's sparse paths (agents/sparse_layers.py) compute what the dense layers do."""

import numpy as np
import pytest
import torch

from agents.sparse_layers import SparseInputLinear, legal_head, sparse_rows


def sparse_batch(rows=64, cols=300, density=0.07, seed=0):
    g = torch.Generator().manual_seed(seed)
    values = torch.randint(1, 20, (rows, cols), generator=g).float()
    return values * (torch.rand(rows, cols, generator=g) < density)


def pair(inputs=300, outputs=24, seed=0):
    torch.manual_seed(seed)
    dense = torch.nn.Linear(inputs, outputs)
    sparse = SparseInputLinear(inputs, outputs)
    sparse.load_state_dict(dense.state_dict())
    return dense, sparse


def test_sparse_rows_lists_every_nonzero_row_by_row():
    x = sparse_batch(rows=9).numpy()
    x[3] = 0                      # an empty row
    x[5, -1] = -2.5               # a last column, a negative value
    indptr, cols, vals = sparse_rows(x)
    rebuilt = np.zeros_like(x)
    for b in range(len(x)):
        rebuilt[b, cols[indptr[b]:indptr[b + 1]]] = vals[indptr[b]:indptr[b + 1]]
    assert np.array_equal(rebuilt, x) and indptr[3] == indptr[4]
    assert sparse_rows(np.ones((4, 10), np.float32)) is None      # dense: the plain layer


@pytest.mark.parametrize("rows", [1, 7, 64])
def test_sparse_input_linear_matches_linear_output_and_gradients(rows):
    dense, sparse = pair()
    x = sparse_batch(rows)
    g = torch.randn(rows, 24)
    for layer in (dense, sparse):
        layer.zero_grad()
        (layer(x) * g).sum().backward()
    assert torch.allclose(sparse(x), dense(x), atol=1e-4)
    assert torch.allclose(sparse.weight.grad, dense.weight.grad, atol=1e-3)
    assert torch.allclose(sparse.bias.grad, dense.bias.grad, atol=1e-4)
    with torch.inference_mode():
        assert torch.allclose(sparse(x), dense(x), atol=1e-4)


def test_sparse_input_linear_sees_changed_weights_and_inputs():
    """Its caches (the transposed weight, the last batch's nonzeros) follow in-place changes:
    an optimizer step, a ``load_state_dict``, an input edited between two calls."""
    dense, sparse = pair()
    x = sparse_batch(16)
    opt = torch.optim.SGD(sparse.parameters(), lr=0.1)
    sparse(x).sum().backward()
    opt.step()
    dense.load_state_dict(sparse.state_dict())
    assert torch.allclose(sparse(x), dense(x), atol=1e-4)
    x[0, :5] = 3.0                                     # same tensor, new values
    assert torch.allclose(sparse(x), dense(x), atol=1e-4)
    with torch.no_grad():
        sparse.weight.mul_(2)
        dense.weight.mul_(2)
    assert torch.allclose(sparse(x), dense(x), atol=1e-4)


def test_sparse_input_linear_falls_back_to_the_dense_layer():
    dense, sparse = pair()
    x = sparse_batch(8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert sparse(x).dtype == torch.bfloat16
    assert torch.allclose(sparse(torch.ones(3, 300)), dense(torch.ones(3, 300)), atol=1e-4)
    xg = x.clone().requires_grad_(True)               # an input that wants its gradient
    sparse(xg).sum().backward()
    assert xg.grad is not None


def test_legal_head_matches_the_full_head():
    torch.manual_seed(0)
    head = torch.nn.Linear(16, 50)
    h = torch.randn(12, 16)
    ids = torch.randint(50, (12, 5))
    valid = torch.rand(12, 5) < 0.7
    full = head(h).detach().gather(1, ids).masked_fill(~valid, -1e9)
    assert torch.allclose(legal_head(h, head, ids, valid), full, atol=1e-5)
    gain, x = torch.randn(50), torch.randn(12, 70)    # a move-skip actor: x ends in 50 moves
    skip = full + (gain * x[:, 20:]).gather(1, ids).masked_fill(~valid, 0)
    assert torch.allclose(legal_head(h, head, ids, valid, gain, x), skip, atol=1e-5)


def test_legal_head_gradients_match_the_full_heads():
    torch.manual_seed(1)
    grads = []
    for compiled in (True, False):
        torch.manual_seed(1)
        head = torch.nn.Linear(16, 50)
        gain = torch.randn(50, requires_grad=True)
        h = torch.randn(12, 16, requires_grad=True)
        x = torch.randn(12, 70)
        ids = torch.randint(50, (12, 5), generator=torch.Generator().manual_seed(2))
        valid = torch.rand(12, 5, generator=torch.Generator().manual_seed(3)) < 0.7
        if compiled:
            out = legal_head(h, head, ids, valid, gain, x)
        else:
            out = (head(h) + gain * x[:, 20:]).gather(1, ids).masked_fill(~valid, -1e9)
        (out * torch.randn(12, 5, generator=torch.Generator().manual_seed(4))).sum().backward()
        grads.append([h.grad, head.weight.grad, head.bias.grad, gain.grad])
    for mine, full in zip(*grads):
        assert torch.allclose(mine, full, atol=1e-5)
