"""Recursion far deeper than the 256 frames a Tachyon stack can hold, plus mutual recursion."""

import sys

sys.setrecursionlimit(5000)


def leaf_work():
    total = 0
    for i in range(80000):
        total += i * i
    return total


def descend(depth):
    if depth == 0:
        return leaf_work()
    return descend(depth - 1) + 1


def ping(depth):
    return pong(depth - 1) if depth else leaf_work()


def pong(depth):
    return ping(depth - 1) if depth else leaf_work()


def main():
    for depth in (10, 200, 255, 300, 700):
        for _ in range(25):
            descend(depth)
    for _ in range(40):
        ping(400)


if __name__ == "__main__":
    main()
