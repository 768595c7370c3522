"""The shared case corpus (tests/corpus/*.json) through the Python validators:
exactly the verdicts, messages and field lists the Rust test
(tests/tests/corpus.rs), the C test and the node test check."""

import pytest

import ach
from conftest import VALIDATORS, corpus_argument, corpus_cases

CASES = corpus_cases()


@pytest.mark.parametrize("case", CASES, ids=[f"{c['kind']}/{c['name']}" for c in CASES])
def test_every_case_gives_its_expected_verdict(case):
    argument = corpus_argument(case)
    verdict = VALIDATORS[case["kind"]](argument)
    assert list(verdict) == ["valid", "message", "errors"]
    assert verdict["valid"] is case["valid"]
    assert verdict["message"] == case["message"]
    assert [[e["field"], e["code"]] for e in verdict["errors"]] == case["fields"]
    for e in verdict["errors"]:
        assert list(e) == ["field", "code", "message"]
        assert isinstance(e["message"], str) and e["message"]
    # The same form as JSON text, as UTF-8 bytes, and through validate(kind, ...).
    text = argument if isinstance(argument, str) else ach.to_json(argument)
    assert VALIDATORS[case["kind"]](text) == verdict
    assert VALIDATORS[case["kind"]](text.encode("utf-8")) == verdict
    assert VALIDATORS[case["kind"]](bytearray(text.encode("utf-8"))) == verdict
    assert ach.validate(case["kind"], argument) == verdict


def test_the_corpus_has_every_kind_and_both_verdicts():
    assert len(CASES) >= 60
    for kind in VALIDATORS:
        assert any(c["kind"] == kind and c["valid"] for c in CASES), kind
        assert any(c["kind"] == kind and not c["valid"] for c in CASES), kind


def test_routing_numbers():
    valid = {"valid": True, "message": None, "errors": []}
    assert ach.validate_routing_number("021000021") == valid
    bad = ach.validate_routing_number("021000022")
    assert bad["valid"] is False
    assert bad["errors"][0]["field"] == "routing_number"
    assert "'021000022' is an invalid Routing Number" in bad["message"]
    assert ach.validate_routing_number("231380104")["errors"][0]["code"] == "not_found"
    for hostile in ["", "02100002\0", "9" * (1 << 20), "-0", "０２１００００２１", "02100002\ud800", " 021000021 "]:
        verdict = ach.validate_routing_number(hostile)
        assert verdict["valid"] is False and verdict["errors"][0]["field"] == "routing_number"
        assert len(ach.to_json(verdict)) < 16 * 1024


def test_misuse_raises():
    with pytest.raises(ach.InvalidArgument, match="kind must be transaction, customer or merchant"):
        ach.validate("payment", "{}")
    with pytest.raises(ach.InvalidArgument, match="kind must be a str"):
        ach.validate(1, "{}")
    with pytest.raises(ach.InvalidArgument, match="routing_number must be a str"):
        ach.validate_routing_number(21000021)
    for value in [{1, 2}, object(), {"amount": {1}}, {1: "a"}, [b"bytes"]]:
        with pytest.raises(ach.InvalidArgument):
            ach.validate_transaction(value)
    cyclic = {"name": "x"}
    cyclic["self"] = cyclic
    with pytest.raises(ach.InvalidArgument, match="contains itself"):
        ach.validate_customer(cyclic)
    assert issubclass(ach.InvalidArgument, ach.AchError)
    assert not issubclass(ach.AchError, (KeyError, TypeError, ValueError))
    with pytest.raises(TypeError):
        ach.validate_transaction()  # a missing argument is Python's own TypeError
