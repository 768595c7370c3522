"""The figure: validation from Python against the same Rust call, same run.

Times ``ach.validate_transaction`` on a typical valid transaction given as
JSON text (``str``) and as a ``dict``, and the Rust call it makes (today's
date and ``ach_core::validation::check_bytes``, by python/examples/rust_side.rs
``bench``, a release build) on the same bytes, and prints the ratios. Each
side runs rounds of 10,000 calls for SECONDS and keeps its fastest round's
mean (the least disturbed by the rest of the machine).

    python bench/validate_bench.py RUST_SIDE_BINARY [SECONDS]

A benchmark, not a test: it never fails on a figure.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ach

REPO = Path(__file__).resolve().parents[2]
ROUND = 10_000


def best_ns(call, argument, seconds):
    best = float("inf")
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter_ns()
        for _ in range(ROUND):
            call(argument)
        best = min(best, (time.perf_counter_ns() - start) / ROUND)
    return best


def main():
    binary = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
    form = json.loads((REPO / "examples/requests/transaction.json").read_text(encoding="utf-8"))
    form["amount"] = "125.50"  # money as text, as a Python caller keeps it
    text = ach.to_json(form)
    assert ach.validate_transaction(text)["valid"] and ach.validate_transaction(form)["valid"]

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        f.write(text)
    try:
        rust = float(subprocess.run([binary, "bench", f.name, str(seconds)], capture_output=True,
                                    text=True, check=True).stdout)
    finally:
        os.unlink(f.name)
    as_text = best_ns(ach.validate_transaction, text, seconds)
    as_dict = best_ns(ach.validate_transaction, form, seconds)

    print(f"validation of a typical transaction ({len(text)} bytes), best of rounds of {ROUND:,} calls:")
    print(f"  Rust   check_bytes                       {rust:8.0f} ns")
    print(f"  Python validate_transaction(str)         {as_text:8.0f} ns   {as_text / rust:.2f} x Rust (budget 1.5)")
    print(f"  Python validate_transaction(dict)        {as_dict:8.0f} ns   {as_dict / rust:.2f} x Rust")


if __name__ == "__main__":
    main()
