"""CPU-bound pure Python with one idle pause, so cpu mode and wall mode see different time."""

import math
import time


def primes_below(limit):
    sieve = bytearray([1]) * limit
    sieve[:2] = b"\x00\x00"
    for n in range(2, math.isqrt(limit) + 1):
        if sieve[n]:
            sieve[n * n :: n] = bytearray(len(range(n * n, limit, n)))
    return [n for n, is_prime in enumerate(sieve) if is_prime]


def matrix_product(size):
    a = [[(i * j) % 7 for j in range(size)] for i in range(size)]
    b = [[(i + j) % 5 for j in range(size)] for i in range(size)]
    columns = list(zip(*b, strict=True))
    return [[sum(x * y for x, y in zip(row, col, strict=True)) for col in columns] for row in a]


def main():
    for _ in range(9):
        primes_below(600000)
        matrix_product(85)
    time.sleep(0.2)
    matrix_product(60)


if __name__ == "__main__":
    main()
