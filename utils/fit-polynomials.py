#!/usr/bin/env python3
"""Fits the polynomials of gc_expf and gc_erff (lib/Math/MathLibrary.c) and prints them.

usage: /usr/bin/python3 utils/fit-polynomials.py      (needs numpy)

exp: e^r = 1 + r + r^2 P(r) on |r| <= ln 2 / 2, P of degree 4, minimax in
relative error.
erf below 1: erf(x) = x (1 + P(x^2)), P of degree 6, minimax in relative error.
erf from 1 to 4: log(erfc(x)) = Q(x - 1), Q of degree 8, minimax in absolute error.
Minimax by Lawson's iteration (weighted least squares whose weights grow where
the error is largest) on a dense grid, against double-precision exp, erf and erfc.
"""
import math

import numpy as np


def minimax(basis, target, scale, degree, iterations=200, lowest=0):
    """Coefficients of basis^lowest .. basis^(lowest + degree), lowest first, and the
    largest error |fit - target| / scale."""
    a = np.stack([basis**(lowest + k) for k in range(degree + 1)], 1)
    weights = np.ones_like(basis)
    for _ in range(iterations):
        row = np.sqrt(weights) / scale
        coefficients, *_ = np.linalg.lstsq(a * row[:, None], target * row, rcond=None)
        error = np.abs(a @ coefficients - target) / scale
        weights = weights * error
        weights /= weights.sum()
    return coefficients, error.max()


def show(name, coefficients, error):
    print(f"{name}: max error {error:.3g}, highest degree first:")
    for c in reversed(coefficients):
        print(f"  {c:.9e}")


def main():
    half = math.log(2) / 2
    r = np.linspace(-half, half, 20000)
    p, error = minimax(r, np.expm1(r) - r, np.exp(r), 4, lowest=2)
    show("P (e^r = 1 + r + r^2 P(r) on |r| <= ln 2 / 2)", p, error)
    z = np.linspace(0.0, 1.0, 20000)
    ratio = np.array([math.erf(math.sqrt(v)) / math.sqrt(v) if v > 0 else 2 / math.sqrt(math.pi)
                      for v in z])
    p, error = minimax(z, ratio - 1.0, ratio, 6)
    show("P (erf(x) / x - 1 in x^2 on [0, 1])", p, error)
    x = np.linspace(1.0, 4.0, 20000)
    q, error = minimax(x - 1.0, np.array([math.log(math.erfc(v)) for v in x]), np.ones_like(x), 8)
    show("Q (log erfc(x) in x - 1 on [1, 4])", q, error)


if __name__ == "__main__":
    main()
