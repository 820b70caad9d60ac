"""How many reserved rows does an audit need? Closed-form planning before any data are spent.

Run: python docs/examples/plan_sample_size.py
"""

from __future__ import annotations

from certify import plan


def main() -> None:
    for n in (10, 15, 30, 100):
        print(f"n = {n:3d} per class, 40 tests: ceiling epsilon_lower = {plan.ceiling(n, 40, 0.95):.3f}")
    need = plan.required_n(1.0, n_tests=5, confidence_level=0.95)
    print(f"to refute epsilon = 1 with 5 tests at 95%: at least {need} reserved rows per class")
    p = plan.power(60, fpr=0.02, fnr=0.02, n_tests=5, confidence_level=0.95, epsilon0=1.0)
    print(f"a test with 2% error rates and 60 rows per class refutes epsilon = 1 with probability {p:.2f}")


if __name__ == "__main__":
    main()
