"""The JSON text the package writes for Python values: numbers exact, never
through a rounded float; strings escaped as serde_json escapes."""

import json
import sys
from collections import OrderedDict
from decimal import Decimal
from enum import IntEnum

import pytest

import ach


class Color(IntEnum):
    RED = 1


class Weird(float):
    def __repr__(self):  # never called by ach: float.__repr__ is
        return "not a number"


class Shouting(str):
    def __str__(self):  # never called
        raise AssertionError("user code ran")


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "null"),
        (True, "true"),
        (False, "false"),
        (0, "0"),
        (-42, "-42"),
        (2**63, "9223372036854775808"),
        (-(2**200), str(-(2**200))),
        (Color.RED, "1"),
        (125.5, "125.5"),
        (0.1, "0.1"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e16, "1e+16"),
        (1.5e-7, "1.5e-07"),
        (-0.0, "-0.0"),
        (100.0, "100.0"),
        (Weird(2.5), "2.5"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (Decimal("125.50"), "125.50"),
        (Decimal("1E+2"), "1E+2"),
        (Decimal("-0"), "-0"),
        (Decimal("0.00000015"), "1.5E-7"),
        (Decimal("NaN"), "NaN"),
        (Decimal("-sNaN"), "NaN"),
        (Decimal("-Infinity"), "-Infinity"),
        ("", '""'),
        ("a\"b\\c\u0000\u001f\u007f\n\r\t\b\f", '"a\\"b\\\\c\\u0000\\u001f\u007f\\n\\r\\t\\b\\f"'),
        ("é😀\u2028", '"é😀\u2028"'),
        ("\ud800", '"\\ud800"'),
        ("a\udfffb", '"a\\udfffb"'),
        ("\ud83d\ude00", '"😀"'),
        (Shouting("x"), '"x"'),
        ([], "[]"),
        ((1, "a"), '[1,"a"]'),
        ({}, "{}"),
        ({"b": 1, "a": [None, {"c": Decimal("1.10")}]}, '{"b":1,"a":[null,{"c":1.10}]}'),
        (OrderedDict([("z", 1), ("y", 2)]), '{"z":1,"y":2}'),
    ],
)
def test_values_are_written_exactly(value, text):
    assert ach.to_json(value) == text


def test_ints_past_pythons_digit_limit():
    limit = getattr(sys, "get_int_max_str_digits", lambda: 0)()
    # Past 4,300 digits str(int) refuses; the package writes the digits itself.
    values = [7**20000, 10**5000, 10**5000 + 1, 2**20000 - 1, 10**9 * 2**20000, -(3**10000)]
    try:
        if limit:
            sys.set_int_max_str_digits(0)
        expected = [str(v) for v in values]
    finally:
        if limit:
            sys.set_int_max_str_digits(limit)
    assert [ach.to_json(v) for v in values] == expected


def test_what_json_dumps_writes_the_same_is_the_same():
    value = {"name": "Ada", "n": [1, -2, 3.25, 1e100, True, None], "t": "\u0001\u00e9", "x": {}}
    assert ach.to_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_deep_nesting_needs_no_native_stack():
    deep = []
    for _ in range(200_000):
        deep = [deep]
    assert ach.to_json(deep) == "[" * 200_001 + "]" * 200_001
    verdict = ach.validate_transaction(deep)
    assert verdict["valid"] is False and verdict["errors"][0]["code"] == "invalid_json"


def test_cycles_and_values_without_json_are_misuse():
    a = []
    b = [a]
    a.append(b)
    with pytest.raises(ach.InvalidArgument, match="contains itself"):
        ach.to_json(a)
    # The same object twice, not inside itself, is fine.
    shared = {"x": 1}
    assert ach.to_json([shared, shared]) == '[{"x":1},{"x":1}]'
    deep_cycle = d = {}
    for _ in range(100):
        d["d"] = {}
        d = d["d"]
    d["back"] = deep_cycle
    with pytest.raises(ach.InvalidArgument, match="contains itself"):
        ach.to_json(deep_cycle)
    for value in [{1}, b"x", object(), {None: 1}, 1j]:
        with pytest.raises(ach.InvalidArgument):
            ach.to_json(value)


def test_a_float_amount_is_never_rounded_to_cents():
    base = {
        "partner_id": "par_0123456789abcdefghijKL",
        "merchant_id": "mer_0123456789abcdefghijKL",
        "description": "Invoice 42",
        "type": "debit",
        "standard_entry_class": "PPD",
        "customer": {
            "name": "Ada Lovelace",
            "routing_number": "021000021",
            "account_number": "123456789",
            "account_type": "checking",
        },
    }
    assert ach.validate_transaction({**base, "amount": 125.5})["valid"] is True
    assert ach.validate_transaction({**base, "amount": Decimal("125.50")})["valid"] is True
    assert ach.validate_transaction({**base, "amount": 12550 // 100})["valid"] is True
    refused = ach.validate_transaction({**base, "amount": 0.1 + 0.2})
    assert [e["field"] for e in refused["errors"]] == ["amount"]
    assert "0.30000000000000004" in refused["errors"][0]["message"]
    nan = ach.validate_transaction({**base, "amount": float("nan")})
    assert nan["errors"][0]["code"] == "invalid_json"
