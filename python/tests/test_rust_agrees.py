"""Python and Rust answer alike, byte for byte, in the same run: the Rust side
(python/examples/rust_side.rs) makes the same ach_core calls in a plain Rust
program, and its JSON is compared with the JSON of Python's answers.

- the validators, on every corpus case (the Rust side builds each body as the
  Rust corpus test does: `Case::body`, members sorted) and on the exact bytes
  Python validated (corpus and hostile forms);
- the router: every corpus case posted to copies of one database file, one
  opened by ``ach.Engine``, one by the Rust side as ``ach_engine_open`` opens
  it, each request as the C library's envelope.
"""

import re
import shutil

import ach
from conftest import (
    ENCRYPTION_KEY,
    OPERATOR,
    START,
    VALIDATORS,
    Tenant,
    compact,
    corpus_argument,
    corpus_cases,
)

CASES = corpus_cases()


def test_validators_agree_on_the_corpus_as_rust_builds_it(rust_side):
    lines = rust_side("corpus")
    assert len(lines) == len(CASES)
    for case, line in zip(CASES, lines):
        name, rust = line.split("\t", 1)
        assert name == case["name"]
        python = compact(VALIDATORS[case["kind"]](corpus_argument(case)))
        assert python == rust, case["name"]


def hostile_forms():
    """Forms that are not the corpus': what the Python caller can pass."""
    valid = corpus_argument(next(c for c in CASES if c["kind"] == "transaction" and c["valid"]))
    deep = []
    for _ in range(2000):
        deep = [deep]
    return [
        ("transaction", b"\xff\xfe\xfd"),
        ("transaction", b'{"a":\x00}'),
        ("transaction", "not json"),
        ("transaction", ""),
        ("customer", "\ud800"),
        ("merchant", deep),
        ("transaction", {**valid, "amount": float("nan")}),
        ("transaction", {**valid, "amount": 0.1 + 0.2}),
        ("transaction", {**valid, "amount": 10**400}),
        ("transaction", {**valid, "description": "x" * (1 << 20)}),
        ("transaction", {**valid, "description": "Invoice\u000042"}),
        ("customer", {"name": "\ud83d\ude00", "partner_id": 7}),
    ]


def test_validators_agree_on_the_bytes_python_validated(rust_side):
    forms = [(c["kind"], corpus_argument(c)) for c in CASES] + hostile_forms()
    stdin = []
    for kind, form in forms:
        if isinstance(form, (bytes, bytearray)):
            data = bytes(form)
        elif isinstance(form, str):
            data = form.encode("utf-8", "surrogatepass")
        else:
            data = ach.to_json(form).encode("utf-8")
        stdin.append(f"{kind}\t{data.hex()}\n")
    lines = rust_side("verdicts", stdin="".join(stdin))
    assert len(lines) == len(forms)
    for (kind, form), rust in zip(forms, lines):
        assert compact(VALIDATORS[kind](form)) == rust, repr(form)[:200]


# Ids and keys the engines issue at random: the two engines' answers are
# compared with each replaced by its order of first appearance.
ISSUED = re.compile(r"\b[a-z]{2,4}_[0-9A-Za-z]{22,40}\b")


def normalised(texts, fixed):
    seen = {}

    def name(m):
        token = m.group(0)
        if token in fixed:
            return token
        return seen.setdefault(token, f"<issued {len(seen)}>")

    return [ISSUED.sub(name, t) for t in texts]


PLACEHOLDER_PARTNER = "par_0123456789abcdefghijKL"
PLACEHOLDER_MERCHANT = "mer_0123456789abcdefghijKL"


def with_ids(value, tenant):
    """The corpus' placeholder ids replaced by the tenant's."""
    if isinstance(value, str):
        return value.replace(PLACEHOLDER_PARTNER, tenant.id).replace(PLACEHOLDER_MERCHANT, tenant.merchant)
    if isinstance(value, dict):
        return {k: with_ids(v, tenant) for k, v in value.items()}
    if isinstance(value, list):
        return [with_ids(v, tenant) for v in value]
    return value


def test_the_router_agrees_on_every_corpus_case(rust_side, tmp_path):
    original = tmp_path / "original.redb"
    options = dict(sandbox=True, start=START, operator_key=OPERATOR, encryption_key=ENCRYPTION_KEY)
    with ach.Engine(str(original), **options) as engine:
        tenant = Tenant(engine)
        tenant_values = (tenant.id, tenant.key, tenant.merchant, tenant.merchant_key)
    python_copy, rust_copy = tmp_path / "python.redb", tmp_path / "rust.redb"
    shutil.copyfile(original, python_copy)
    shutil.copyfile(original, rust_copy)

    paths = {"transaction": "/transactions", "customer": "/customers", "merchant": "/merchants"}
    requests = []
    for case in CASES:
        body = with_ids(corpus_argument(case), tenant)
        requests.append((paths[case["kind"]], body))
    # And a replay: the same idempotent request twice.
    replay = ("/transactions", tenant.transaction("3.00"))
    requests += [replay, replay]

    envelopes = []
    python = []
    with ach.Engine(python_copy, **options) as engine:
        for i, (path, body) in enumerate(requests):
            key = "replay-1" if i >= len(CASES) else None
            status, answer, headers = engine.request_full(
                "POST", path, api_key=tenant.key, body=body, idempotency_key=key
            )
            replayed = "true" if headers == {"Idempotent-Replayed": "true"} else "false"
            assert headers in ({}, {"Idempotent-Replayed": "true"})
            python.append(f"{status}\t{replayed}\t{ach.to_json(answer)}")
            member = f',"idempotency_key":"{key}"' if key else ""
            envelopes.append(
                '{"method":"POST","path":' + ach.to_json(path) + ',"api_key":' + ach.to_json(tenant.key)
                + member + ',"body":' + ach.to_json(body) + "}\n"
            )
    rust_options = ach.to_json({"path": str(rust_copy), **options})
    rust = rust_side("route", rust_options, stdin="".join(envelopes))
    assert len(rust) == len(python)
    fixed = set(tenant_values)
    names = [c["name"] for c in CASES] + ["replay", "replayed"]
    for name, p, r in zip(names, normalised(python, fixed), normalised(rust, fixed)):
        assert p == r, name
    statuses = [int(line.split("\t")[0]) for line in python]
    assert 201 in statuses and 422 in statuses and 400 in statuses
    assert python[-1].split("\t")[1] == "true" and python[-2].split("\t")[1] == "false"
