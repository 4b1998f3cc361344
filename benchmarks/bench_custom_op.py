"""The price of being an operator (issue 11, part 5): a trivial kernel ``f(x, y) = add(x, y)`` on 4-element
tensors, called directly, through ``custom_op`` and registered straight on the CPU key (``Library.define`` +
``impl``, called as ``ops.<ns>.f.default``); the same three in PyTorch when it is installed.  Prints each
time per call and its ratio to the direct call.

    PYTHONPATH=. python benchmarks/bench_custom_op.py [--number N] [--repeat R]
"""
import argparse
import timeit


def _best(cases: dict, number: int, repeat: int) -> dict:
    """Microseconds per call of each case, the best of ``repeat`` runs (the least disturbed by other
    processes); the cases take turns, so a change in the machine's load touches them all alike."""
    best = {name: float("inf") for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number * 1e6)
    return best


def measure_onion(number: int, repeat: int) -> dict:
    import onion
    from onion import Tensor
    from onion.library import Library, custom_op

    def f(x, y):
        return onion.add(x, y)

    x, y = onion.randn(4), onion.randn(4)
    lib = Library("bench_custom_op", "FRAGMENT")
    g = None
    try:
        lib.define("f(Tensor x, Tensor y) -> Tensor")
        lib.impl("f", f, "CPU")
        direct_op = onion.ops.bench_custom_op.f.default

        @custom_op("bench_custom_op::g", mutates_args=())
        def g(x: Tensor, y: Tensor) -> Tensor:
            return onion.add(x, y)

        return _best({"direct": lambda: f(x, y), "custom_op": lambda: g(x, y),
                      "define+impl": lambda: direct_op(x, y)}, number, repeat)
    finally:
        if g is not None:
            g._destroy()
        lib._destroy()


def measure_torch(number: int, repeat: int):
    try:
        import torch
    except ImportError:
        return None
    from torch import Tensor
    from torch.library import Library, custom_op

    def f(x, y):
        return torch.add(x, y)

    x, y = torch.randn(4), torch.randn(4)
    lib = Library("bench_custom_op", "FRAGMENT")
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", f, "CPU")
    direct_op = torch.ops.bench_custom_op.f.default

    @custom_op("bench_custom_op::g", mutates_args=())
    def g(x: Tensor, y: Tensor) -> Tensor:
        return torch.add(x, y)

    return _best({"direct": lambda: f(x, y), "custom_op": lambda: g(x, y),
                  "define+impl": lambda: direct_op(x, y)}, number, repeat)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--number", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=15)
    a = parser.parse_args(argv)
    results = {"onion": measure_onion(a.number, a.repeat), "torch": measure_torch(a.number, a.repeat)}
    print(f"{'':10} {'case':12} {'us/call':>8} {'x direct':>9}")
    for lib, r in results.items():
        if r is None:
            print(f"{lib:10} (not installed)")
            continue
        for case in ("direct", "custom_op", "define+impl"):
            print(f"{lib:10} {case:12} {r[case]:8.2f} {r[case] / r['direct']:9.2f}")
    print("targets (onion): custom_op <= 2.0x, define+impl <= 1.5x")
    return results


if __name__ == "__main__":
    main()
