"""A small user step for `hlodiff run --step tests/steps/tiny_step.py:make_step` tests."""

import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


def step(w, x, y):
    l, g = jax.value_and_grad(loss)(w, x, y)
    return w - 0.1 * g, l


def make_step():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
    w = jax.random.normal(k1, (32, 8))
    x = jax.random.normal(k2, (16, 32))
    y = jax.random.normal(k3, (16, 8))
    return step, (w, x, y)


def not_a_pair():
    return 42
