"""A workload whose stack changes at every sample (recursion to varying depths, a loop whose
opcodes move): it fills the profiler's 512 KiB record buffer in a few seconds."""


def level(n, k):
    if n == 0:
        s = 0
        for i in range(200 + 50 * k):
            s += i * i
        return s
    return level(n - 1, k) + n


def main():
    k = 0
    while True:
        for depth in (3, 17, 5, 40, 9, 28, 1, 60):
            level(depth, k % 7)
        k += 1


main()
