"""Hostile input through ``ach.Engine`` and the validators: every case of the
shared table (tests/hostile/*.json, described in tests/hostile/README.md) for
the host ``python``, judged as the Rust runners judge it
(``ach_tests::hostile::check``), plus what only Python can pass (bodies as
dicts with floats, NaN, lone surrogates; bytes; query dicts).

Every row is answered, never a crash: an invalid request or form is data (the
API's status and envelope with a catalogue message, or a verdict); misuse of
the package raises ``ach.AchError``. After every row nothing was stored:
neither partner's status-changes feed nor any merchant's events feed moved;
at the end (and after reopening the database file) each partner's daily
limits, set up to leave room for exactly one more debit, still do.

The host ``python`` has no override in the table: it sends a body as the
router's runner does (text as it is, bytes as they are), so the router's
expectations hold. Cases that need a ``Content-Type`` are left to the hosts
that have one (the Python API, like the C envelope, has none).
"""

import copy
import json
import random
import re
import string
import sys
from decimal import Decimal

import pytest

import ach
from conftest import OPERATOR, REPO, ROOMY, START, debit_body, merchant_application

sys.path.insert(0, str(REPO / "tests/c"))
from corpus_lines import Number  # noqa: E402 - after its directory is on the path
from corpus_lines import serialise as serde_text  # noqa: E402

HOSTILE = REPO / "tests/hostile"
MB = 1 << 20
AUTHENTICATION_FAILED = "Authentication failed."


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_int=Number, parse_float=Number, parse_constant=Number)


def set_path(value, path, member):
    parts = path.split("/")
    at = value
    for p in parts[:-1]:
        at = at[int(p)] if isinstance(at, list) else at[p]
    last = parts[-1]
    if isinstance(at, list):
        at[int(last)] = member
    else:
        at[last] = member


def body_text(case, bases):
    if "body" in case:
        return case["body"]
    base = case.get("body_json")
    if base is None and "base" in case:
        base = bases[case["base"]]
    if base is None:
        return None
    v = copy.deepcopy(base)
    for path, member in case.get("set", {}).items():
        set_path(v, path, member)
    raw = sorted(case.get("set_raw", {}).items())
    for i, (path, _) in enumerate(raw):
        set_path(v, path, f"@@raw{i}@@")
    text = serde_text(v)
    for i, (_, literal) in enumerate(raw):
        text = text.replace(f'"@@raw{i}@@"', literal)
    return text


def corpus(host="python"):
    bases = read(HOSTILE / "support/bases.json")
    cases, skipped = [], 0
    for path in sorted(HOSTILE.glob("*.json")):
        for raw in read(path)["cases"]:
            over = raw.get("hosts", {}).get(host, {})
            if "skip" in over:
                skipped += 1
                continue
            if "content_type" in raw:
                skipped += 1  # no Content-Type in this API (see the module's text)
                continue
            c = {**raw, **{k: v for k, v in over.items() if k != "why"}, "file": path.name}
            c["body"] = body_text(c, bases)
            cases.append(c)
    return cases, skipped


# ------------------------------------------------------------------ templates

CYRILLIC = dict(zip("aceopxykmABEKMOT", "асеорхукмАВЕКМОТ"))


def cyrillic(id_):
    out = "".join(CYRILLIC.get(c, c) for c in id_)
    assert out != id_
    return out


def fullwidth(id_):
    def wide(c):
        return chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else "\uff10"

    last = len(id_) - 1
    out = "".join(wide(c) if c.isdigit() or i == last else c for i, c in enumerate(id_))
    assert out != id_
    return out


def forge(pointer):
    return pointer[:3] + ("B" if pointer[3] == "A" else "A") + pointer[4:]


def expand(template, values):
    """Every ``{{token}}`` expanded verbatim: bytes (``{{hex ..}}`` may put any)."""
    out = bytearray()
    rest = template
    while "{{" in rest:
        at = rest.index("{{")
        end = rest.index("}}", at)
        out += rest[:at].encode("utf-8")
        out += token(rest[at + 2 : end], values)
        rest = rest[end + 2 :]
    out += rest.encode("utf-8")
    return bytes(out)


def text(template, values):
    return expand(template, values).decode("utf-8")


def token(t, values):
    word, _, arg = t.partition(" ")
    if word == "repeat":
        n, _, unit = arg.partition(" ")
        return (unit * int(n)).encode("utf-8")
    if word == "nested_arrays":
        return ("[" * int(arg) + "]" * int(arg)).encode()
    if word == "nested_objects":
        return ('{"a":' * int(arg) + "1" + "}" * int(arg)).encode()
    if word == "hex":
        return bytes.fromhex(arg)
    if word == "cyrillic":
        return cyrillic(values[arg]).encode("utf-8")
    if word == "fullwidth":
        return fullwidth(values[arg]).encode("utf-8")
    if word == "upper":
        return values[arg].upper().encode("utf-8")
    if word == "forge":
        return forge(values[arg]).encode("utf-8")
    sliced = re.fullmatch(r"(.*)\[(\d+):\]", t)
    if sliced:
        return values[sliced.group(1)].encode("utf-8")[int(sliced.group(2)) :]
    return values[t].encode("utf-8")


# ------------------------------------------------------------------ judging

CATALOGUE = json.loads((HOSTILE / "support/catalogue.json").read_text(encoding="utf-8"))
CATALOGUE_RE = {
    int(code): re.compile(".*".join(map(re.escape, template.split("{}"))), re.S)
    for code, template in CATALOGUE.items()
}


def is_catalogued(message):
    return any(r.fullmatch(message) for r in CATALOGUE_RE.values())


MISSING = object()


def pointer(value, path):
    for part in path.split("/")[1:]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return MISSING
    return value


def check(expect, status, body, values):
    """``ach_tests::hostile::check``: the answer against a case's ``expect``."""
    short = ach.to_json(body)[:300]
    assert status == int(expect["status"]), f"status {status}, expected {expect['status']}: {short}"
    if "json" in expect:
        for path, want in expect["json"].items():
            got = pointer(body, path)
            if want is None:
                assert got is MISSING, f"{path} is {got!r}, expected absent: {short}"
            else:
                assert got == text(want, values), f"{path} is {got!r}: {short}"
        return
    assert len(ach.to_json(body).encode("utf-8")) <= 16 * 1024, f"a large refusal: {short}"
    first = (body.get("errors") or [{}])[0]
    problem = (first.get("field", ""), first.get("code", ""))
    expected = (expect.get("field", ""), expect.get("code", ""))
    if status == 401:
        exact = {"success": False, "message": AUTHENTICATION_FAILED}
        if expected[0]:
            exact["errors"] = [{"field": expected[0], "code": expected[1], "message": first.get("message")}]
        assert body == exact, f"not exactly the authentication failure: {short}"
        return
    assert body["success"] is False and body["error_type"] == "E", f"not a refusal envelope: {short}"
    message = expect["message"]
    if isinstance(message, Number):
        code = int(message)
        assert body["error_code"] == code and CATALOGUE_RE[code].fullmatch(body["message"]), short
    else:
        assert body["message"] == message, short
    assert problem == expected, f"first problem {problem}, expected {expected}: {short}"


def assert_invalid_verdict(name, verdict):
    assert list(verdict) == ["valid", "message", "errors"], name
    assert verdict["valid"] is False, f"{name}: accepted"
    assert is_catalogued(verdict["message"]), f"{name}: {verdict['message']}"
    assert verdict["errors"], name
    for e in verdict["errors"]:
        assert list(e) == ["field", "code", "message"], name
        assert re.fullmatch(r"[a-z_]+", e["code"]) and e["message"], name
    assert len(ach.to_json(verdict)) <= 16 * 1024, name


# ------------------------------------------------------------------ the fixture


def transaction(merchant, amount, partner):
    return debit_body(partner, merchant, amount, "test")


class Fixture:
    def __init__(self, engine):
        self.engine = engine
        self.a = self.tenant()
        self.b = self.tenant()

    def call(self, method, path, key=None, body=None, status=None, **kw):
        answer = self.engine.request(method, path, api_key=key, body=body, **kw)
        if status is not None:
            assert answer[0] == status, f"{method} {path}: {answer}"
        return answer[1]

    def roomy_merchant(self, t, classes):
        application = merchant_application(t["id"], classes)
        application["velocities"]["decline_duplicates"] = False
        merchant = self.call("POST", "/merchants", t["key"], application, 201)["id"]
        approved = self.call("POST", f"/admin/merchants/{merchant}/approve", OPERATOR, {"limits": ROOMY}, 200)
        return merchant, approved["payload"]["api_key"]

    def debit(self, t, amount, merchant=None):
        body = transaction(merchant or t["merchant"], amount, t["id"])
        return self.call("POST", "/transactions", t["key"], body, 201)["payload"]["id"]

    def feed_pointer(self, t):
        page = self.call("GET", f"/status-changes/0?partner_id={t['id']}", t["key"], status=200)
        return page["payload"]["new_pointer"]

    def tenant(self):
        created = self.call("POST", "/admin/partners", OPERATOR, {"name": "Test Partner"}, 201)["payload"]
        t = {"id": created["partner_id"], "key": created["api_key"]}
        t["merchant"], t["merchant_key"] = self.roomy_merchant(t, ["PPD", "WEB"])
        t["second"], _ = self.roomy_merchant(t, ["PPD"])
        customer = {
            "partner_id": t["id"],
            "merchant_id": "global",
            "name": "Grace Hopper",
            "routing_number": "026009593",
            "account_number": "918273645500",
            "account_type": "savings",
        }
        t["customer"] = self.call("POST", "/customers", t["key"], customer, 201)["payload"]["id"]
        t["pending"] = self.debit(t, "10.00")
        t["early_pointer"] = self.feed_pointer(t)
        t["last"] = self.debit(t, "20.00")
        t["pointer"] = self.feed_pointer(t)
        t["events"] = self.call("GET", "/events", t["merchant_key"], status=200)["new_pointer"]
        # Room for exactly one more debit of 1.00 today: for the merchant (2
        # debits, 30.00 so far) and for the partner overall (2 debits).
        limits = {"daily_count": 3, "daily_amount": "31.00"}
        self.call("POST", f"/admin/merchants/{t['merchant']}/limits", OPERATOR, limits, 200)
        self.call("POST", f"/admin/partners/{t['id']}/limits", OPERATOR, {"daily_count": 3}, 200)
        return t

    def values(self):
        v = {"operator": OPERATOR}
        for side, t in (("a", self.a), ("b", self.b)):
            for name, value in t.items():
                v[f"{side}.{name}"] = value
        return v

    def assert_nothing_stored(self, name):
        for t in (self.a, self.b):
            page = self.call("GET", f"/status-changes/{t['pointer']}?partner_id={t['id']}", t["key"])
            assert page["payload"]["changes"] == [], f"{name}: the status-changes feed moved"
            events = self.call("GET", f"/events/{t['events']}", t["merchant_key"])
            assert events["events"] == [], f"{name}: the events feed moved"
        valid = transaction(self.a["merchant"], "1.00", self.a["id"])
        assert ach.validate_transaction(valid) == {"valid": True, "message": None, "errors": []}, name

    def assert_counters_unchanged(self):
        for t in (self.a, self.b):
            self.debit(t, "1.00")
            status, body = self.engine.request(
                "POST", "/transactions", api_key=t["key"], body=transaction(t["merchant"], "1.00", t["id"])
            )
            assert (status, body.get("error_code")) == (403, 22), body
            status, body = self.engine.request(
                "POST", "/transactions", api_key=t["key"], body=transaction(t["second"], "1.00", t["id"])
            )
            assert (status, body.get("error_code")) == (403, 24), body

    def request_of(self, c, values):
        """A case as a Python caller sends it: the body as text (a ``str``), or
        as ``bytes`` when it is not UTF-8."""
        kw = {
            "method": text(c.get("method", "GET"), values),
            "path": text(c["path"], values),
            "api_key": text(c["key"], values) if "key" in c else None,
            "idempotency_key": text(c["idempotency_key"], values) if "idempotency_key" in c else None,
            "body": None,
        }
        if c["body"] is not None:
            data = expand(c["body"], values)
            try:
                kw["body"] = data.decode("utf-8")
            except UnicodeDecodeError:
                kw["body"] = data
        return kw

    def run(self, c, values):
        r = self.request_of(c, values)
        status, body = self.engine.request(**r)
        check(c["expect"], status, body, values)
        if c.get("like_unknown"):
            # Another partner's id is answered exactly as a never-issued one.
            real = values[c["like_unknown"]]
            never = real[:4] + "".join(random.choices(string.ascii_letters + string.digits, k=len(real) - 4))
            twin = {k: v.replace(real, never) for k, v in values.items()}
            unknown = self.engine.request(**self.request_of(c, twin))
            same = (unknown[0], json.loads(ach.to_json(unknown[1]).replace(never, real)))
            assert same == (status, json.loads(ach.to_json(body))), "answered unlike a never-issued id"
        self.validators_agree(c, r)
        self.assert_nothing_stored(c["name"])

    def validators_agree(self, c, r):
        """A body the router refuses for what it holds is refused by the form's
        validator too, with the same message; for a rule (422), with the same
        first problem."""
        validator = {
            "/transactions": ach.validate_transaction,
            "/customers": ach.validate_customer,
            "/merchants": ach.validate_merchant,
        }.get(r["path"])
        if r["method"] != "POST" or validator is None or not isinstance(r["body"], str):
            return
        if r["api_key"] != self.a["key"] or r["idempotency_key"] is not None:
            return
        e = c["expect"]
        if int(e["status"]) not in (400, 422) or not isinstance(e.get("message"), Number):
            return
        verdict = validator(r["body"])
        assert_invalid_verdict(f"{c['name']} (validator)", verdict)
        assert CATALOGUE_RE[int(e["message"])].fullmatch(verdict["message"]), c["name"]
        if int(e["status"]) == 422:
            first = verdict["errors"][0]
            assert (first["field"], first["code"]) == (e["field"], e["code"]), c["name"]


def python_rows(f):
    """What only Python can pass: bodies as dicts (floats, NaN, lone
    surrogates, NUL in text members, deep nesting), bytes, query dicts."""
    a = f.a

    def tx(field=None, value=None):
        v = transaction(a["merchant"], "1.00", a["id"])
        if field:
            set_path(v, field, value)
        return v

    def refused(status, message, field, code):
        return {"status": status, "message": Number(message), "field": field, "code": code}

    post = {"method": "POST", "path": "/transactions", "api_key": a["key"]}
    deep = []
    for _ in range(2000):
        deep = [deep]
    rows = []
    for path in ("/transactions", "/customers", "/merchants"):
        rows.append((f"2,000 nested arrays as a value: {path}", {**post, "path": path, "body": deep},
                     refused(400, 10, "", "invalid_json")))
    rows.append(("2,000 nested arrays as a member", {**post, "body": {"partner_id": a["id"], "customer": deep}},
                 refused(400, 10, "", "invalid_json")))
    rows.append(("4 MB body as a dict", {**post, "body": tx("description", "x" * 4 * MB)},
                 refused(413, 10, "", "over_limit")))
    for field, value, expect in [
        ("description", "Invoice\u000042", refused(422, 10, "description", "invalid_format")),
        ("customer/name", "Ada\u0000Lovelace", refused(422, 10, "customer.name", "invalid_format")),
        ("customer/account_number", "98765\u00004321", refused(422, 13, "customer.account_number", "invalid_format")),
        ("merchant_id", a["merchant"] + "\u0000", refused(422, 11, "merchant_id", "invalid_format")),
        ("amount", "1.00\u0000", refused(422, 14, "amount", "invalid_amount")),
        ("partner_id", a["id"] + "\u0000", {"status": 401}),
    ]:
        rows.append((f"NUL in {field} (body as a dict)", {**post, "body": tx(field, value)}, expect))
    rows.append(("NUL in the query dict's partner_id",
                 {**post, "body": None, "query": {"partner_id": a["id"] + "\u0000"}}, {"status": 401}))
    rows.append(("a lone surrogate in a body str", {**post, "body": ach.to_json(tx("description", "x")).replace('"x"', '"\ud800"')},
                 refused(400, 10, "", "invalid_json")))
    rows.append(("a lone surrogate in a body dict", {**post, "body": tx("description", "\udfff")},
                 refused(400, 10, "", "invalid_json")))
    rows.append(("a lone surrogate in the key", {"method": "GET", "path": "/categories", "api_key": "pk_\ud800"},
                 refused(400, 10, "", "invalid_json")))
    rows.append(("bytes of invalid UTF-8 as the body", {**post, "body": b"\xff\xfe\xfd"},
                 refused(400, 10, "", "invalid_json")))
    rows.append(("a bytearray body", {**post, "body": bytearray(ach.to_json(tx("amount", "abc")).encode())},
                 refused(422, 14, "amount", "invalid_amount")))
    rows.append(("a memoryview body", {**post, "body": memoryview(ach.to_json(tx("amount", "abc")).encode())},
                 refused(422, 14, "amount", "invalid_amount")))
    # Python numbers as amounts: written exactly (never rounded to cents), so
    # refused as the same literal would be; NaN and infinity are not JSON.
    amount = refused(422, 14, "amount", "invalid_amount")
    for what, value, expect in [
        ("-0.0", -0.0, amount),
        ("0.1 + 0.2", 0.1 + 0.2, amount),
        ("10**400", 10**400, amount),
        ("a Decimal of 3 places", Decimal("1.001"), amount),
        ("inf", float("inf"), refused(400, 10, "", "invalid_json")),
        ("NaN", float("nan"), refused(400, 10, "", "invalid_json")),
    ]:
        rows.append((f"amount {what} (a Python number)", {**post, "body": tx("amount", value)}, expect))
    return rows


# ------------------------------------------------------------------ the tests


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "hostile.redb"
    engine = ach.Engine(path, sandbox=True, start=START, operator_key=OPERATOR)
    f = Fixture(engine)
    f.path = path
    f.assert_nothing_stored("the set-up")
    yield f
    engine.close()


def test_the_hostile_table_is_refused_clearly_and_stores_nothing(fixture):
    f = fixture
    values = f.values()
    cases, skipped = corpus()
    assert len(cases) > 350, len(cases)
    failed = []
    for c in cases:
        try:
            f.run(c, values)
        except AssertionError as e:
            failed.append(f"{c['name']} ({c['file']}): {str(e)[:400]}")
    rows = python_rows(f)
    for name, request, expect in rows:
        try:
            status, body = f.engine.request(**request)
            check(expect, status, body, values)
            f.assert_nothing_stored(name)
        except AssertionError as e:
            failed.append(f"{name}: {str(e)[:400]}")
    print(f"{len(cases)} table cases ({skipped} left to other hosts), {len(rows)} Python rows")
    assert failed == [], f"{len(failed)} failed:\n" + "\n".join(failed)


def test_hostile_forms_through_the_validators_are_data(fixture):
    partner = "par_0123456789abcdefghijKL"
    tx = transaction("mer_0123456789abcdefghijKL", "1.00", partner)
    customer = {
        "partner_id": partner,
        "merchant_id": "global",
        "name": "Grace Hopper",
        "routing_number": "026009593",
        "account_number": "918273645599",
        "account_type": "savings",
    }
    deep = []
    for _ in range(2000):
        deep = [deep]
    valid_verdict = {"valid": True, "message": None, "errors": []}
    for validate, valid, member in [
        (ach.validate_transaction, tx, "description"),
        (ach.validate_customer, customer, "name"),
        (ach.validate_merchant, merchant_application(partner), "support_contact"),
    ]:
        assert validate(valid) == valid_verdict
        text = ach.to_json(valid)
        forms = [
            ("100,000 nested arrays", "[" * 100_000 + "]" * 100_000),
            ("100,000 nested objects", '{"a":' * 100_000 + "1" + "}" * 100_000),
            ("2,000 nested arrays (value)", deep),
            ("2,000 nested arrays in a member", {**valid, member: deep}),
            ("10 MB of spaces", " " * 10 * MB),
            ("10 MB string member", {**valid, member: "x" * 10 * MB}),
            ("NUL bytes", text.replace('"mer_', '"mer_\\u0000').replace('"0', '"\\u00000')),
            ("a raw NUL", text + "\u0000"),
            ("an escaped lone surrogate", {**valid, member: "\ud800"}),
            ("a raw lone surrogate", '{"partner_id":"\ud800"}'),
            ("invalid UTF-8 bytes", b"\xff\xfe\xfd\x00"),
            ("400-digit numbers", {**valid, "amount": 10**400, member: 10**400}),
            ("negative zero", {**valid, "amount": -0.0, member: -0.0}),
            ("NaN", {**valid, "amount": float("nan")}),
            ("look-alike ids and digits", text.replace("mer_", "ｍer_").replace("0", "０")),
            ("not JSON at all", "hello"),
            ("empty", ""),
            ("empty bytes", b""),
            ("a JSON string", '"transaction"'),
            ("a list", [valid]),
        ]
        for what, form in forms:
            verdict = validate(form)
            assert_invalid_verdict(what, verdict)
            assert validate(valid) == valid_verdict, f"after {what}"


def test_the_database_reopened_stored_nothing(fixture):
    f = fixture
    f.engine.close()
    f.engine = ach.Engine(f.path, sandbox=True, start=START, operator_key=OPERATOR)
    f.assert_nothing_stored("reopened")
    f.assert_counters_unchanged()
