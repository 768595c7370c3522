"""Shared helpers of the Python package's tests: the repository's data, the
Rust side (python/examples/rust_side.rs), and a sandbox with a partner and an
approved merchant."""

import copy
import json
import os
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

import ach

REPO = Path(__file__).resolve().parents[2]
OPERATOR = "ok_python_test_operator_key_0123456789"
START = "2026-11-23T10:00:00-05:00"
# A fixed key, so that a copy of a database file opens without its key file.
ENCRYPTION_KEY = "ab" * 32
BIG = "99999999.99"
ROOMY = {
    "max_transaction_amount": BIG,
    "min_transaction_amount": "0.01",
    "daily_count": 1_000_000_000,
    "daily_amount": BIG,
    "period_count": 1_000_000_000,
    "period_amount": BIG,
    "monthly_count": 1_000_000_000,
    "monthly_amount": BIG,
    "monthly_average_amount": BIG,
}


def load_json(path):
    """A JSON file with numbers kept exact (``int``, ``Decimal``)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def compact(value):
    """The verdict's JSON as serde_json writes it (members in order, compact,
    non-ASCII as UTF-8): what the Rust side prints."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def corpus_cases():
    """Every case of tests/corpus, in the Rust corpus test's order (files by
    name, cases in order)."""
    cases = []
    for path in sorted((REPO / "tests/corpus").glob("*.json")):
        cases.extend(load_json(path))
    return cases


def corpus_argument(case):
    """What a Python caller passes for a corpus case: the ``raw`` text, the
    request object itself, or, for a request that is not an object or array,
    its JSON text (a ``str`` is JSON text to the validators)."""
    if case.get("raw") is not None:
        return case["raw"]
    request = case["request"]
    if isinstance(request, (dict, list)):
        return copy.deepcopy(request)
    return ach.to_json(request)


VALIDATORS = {
    "transaction": ach.validate_transaction,
    "customer": ach.validate_customer,
    "merchant": ach.validate_merchant,
}


def rust_side_binary():
    """The Rust side's binary: $ACH_RUST_SIDE, or built (debug) here."""
    given = os.environ.get("ACH_RUST_SIDE")
    if given:
        return given
    subprocess.run(
        ["cargo", "build", "-q", "-p", "ach-python", "--example", "rust_side"],
        cwd=REPO,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    if not target.is_absolute():
        target = REPO / target
    return str(target / "debug/examples/rust_side")


@pytest.fixture(scope="session")
def rust_side():
    binary = rust_side_binary()

    def run(*args, stdin=""):
        done = subprocess.run(
            [binary, *args], input=stdin.encode("utf-8"), capture_output=True, check=True
        )
        return done.stdout.decode("utf-8").splitlines()

    return run


def debit_body(partner, merchant, amount, description):
    """A PPD debit of `amount` from one fixed inline account."""
    return {
        "partner_id": partner,
        "merchant_id": merchant,
        "amount": amount,
        "description": description,
        "type": "debit",
        "standard_entry_class": "PPD",
        "customer": {
            "name": "Ada Lovelace",
            "routing_number": "021000021",
            "account_number": "987654321",
            "account_type": "checking",
        },
    }


def merchant_application(partner_id, classes=None):
    application = load_json(REPO / "examples/requests/merchant.json")
    application["partner_id"] = partner_id
    if classes is not None:
        application["standard_entry_classes"] = classes
    return application


class Tenant:
    """A partner with an approved merchant on an engine."""

    def __init__(self, engine, classes=("PPD", "WEB"), roomy=True):
        self.engine = engine
        status, body = engine.request(
            "POST", "/admin/partners", api_key=OPERATOR, body={"name": "Python Partner"}
        )
        assert status == 201, body
        self.id = body["payload"]["partner_id"]
        self.key = body["payload"]["api_key"]
        self.merchant, self.merchant_key = self.approved_merchant(list(classes), roomy)

    def approved_merchant(self, classes, roomy=True):
        application = merchant_application(self.id, classes)
        application["velocities"]["decline_duplicates"] = False
        status, body = self.engine.request("POST", "/merchants", api_key=self.key, body=application)
        assert status == 201, body
        merchant = body["id"]
        approval = {"limits": ROOMY} if roomy else {}
        status, body = self.engine.request(
            "POST", f"/admin/merchants/{merchant}/approve", api_key=OPERATOR, body=approval
        )
        assert status == 200, body
        return merchant, body["payload"]["api_key"]

    def transaction(self, amount, merchant=None, **extra):
        body = debit_body(self.id, merchant or self.merchant, amount, "python")
        body.update(extra)
        return body

    def debit(self, amount, merchant=None):
        status, body = self.engine.request(
            "POST", "/transactions", api_key=self.key, body=self.transaction(amount, merchant)
        )
        assert status == 201, body
        return body["payload"]["id"]

    def feed_pointer(self):
        status, body = self.engine.request(
            "GET", "/status-changes/0", api_key=self.key, query={"partner_id": self.id}
        )
        assert status == 200, body
        return body["payload"]["new_pointer"]
