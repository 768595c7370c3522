"""``ach.Engine``: a sandbox's whole lifecycle in memory and in a file, the
file reopened, misuse, and threads sharing one engine."""

import os
import re
import threading
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

import ach
from conftest import ENCRYPTION_KEY, OPERATOR, START, Tenant

ID = re.compile(r"^[a-z]{3}_[0-9A-Za-z]{22}$")


def lifecycle(engine):
    """Operator, partner, merchant, customer, transactions, void, feed, replay,
    refusals; answers the ids a reopened engine must still know."""
    t = Tenant(engine, roomy=False)
    assert ID.match(t.id) and ID.match(t.merchant)

    # A stored customer, and a debit by its token.
    customer = {
        "partner_id": t.id,
        "merchant_id": t.merchant,
        "name": "Grace Hopper",
        "routing_number": "026009593",
        "account_number": "918273645500",
        "account_type": "savings",
    }
    status, body = engine.request("POST", "/customers", api_key=t.key, body=customer)
    assert status == 201, body
    token = body["payload"]["id"]
    assert token.startswith("cus_")
    by_token = t.transaction(Decimal("12.34"), customer={"id": token})
    status, body = engine.request("POST", "/transactions", api_key=t.key, body=by_token)
    assert status == 201, body
    assert body == {"success": True, "payload": {"id": body["payload"]["id"]}}
    kept = body["payload"]["id"]

    # Inline, given as JSON text and as bytes.
    inline = ach.to_json(t.transaction("20.00"))
    status, body = engine.request("POST", "/transactions", api_key=t.key, body=inline)
    assert status == 201, body
    voided = body["payload"]["id"]
    status, body = engine.request("POST", "/transactions", api_key=t.key, body=inline.encode())
    assert status == 201, body

    # Void one.
    answer = engine.request("PUT", f"/transactions/{voided}/void", api_key=t.key, query={"partner_id": t.id})
    assert answer == (200, {"success": True, "payload": {"id": voided, "status": "voided"}})

    # The feed, with the query as a dict and as text.
    status, feed = engine.request("GET", "/status-changes/0", api_key=t.key, query={"partner_id": t.id})
    assert status == 200 and feed["success"] == "true"
    changes = [(c["transaction_id"], c["status"]) for c in feed["payload"]["changes"]]
    assert (kept, "A") in changes and (voided, "R") in changes
    assert engine.request("GET", "/status-changes/0", api_key=t.key, query=f"partner_id={t.id}") == (200, feed)
    assert engine.request("GET", f"/status-changes/0?partner_id={t.id}", api_key=t.key) == (200, feed)

    # An idempotent request made again: the first answer, marked replayed.
    body = t.transaction("5.00")
    first = engine.request_full("POST", "/transactions", api_key=t.key, body=body, idempotency_key="k-1")
    again = engine.request_full("POST", "/transactions", api_key=t.key, body=body, idempotency_key="k-1")
    assert first[0] == 201 and first[2] == {}
    assert again == (201, first[1], {"Idempotent-Replayed": "true"})

    # Refusals are data.
    status, body = engine.request("POST", "/transactions", api_key=t.key, body=t.transaction("abc"))
    assert status == 422
    assert body["success"] is False and body["error_type"] == "E"
    assert body["errors"][0]["field"] == "amount"
    assert engine.request("GET", "/categories") == (401, {"success": False, "message": "Authentication failed."})
    status, body = engine.request("POST", "/transactions", api_key=t.key, body="{")
    assert status == 400 and body["errors"][0]["code"] == "invalid_json"
    status, body = engine.request("POST", "/transactions", api_key=t.key, body=b"\xff\xfe")
    assert status == 400 and body["errors"][0]["code"] == "invalid_json"
    status, body = engine.request("GET", "/nope", api_key=t.key)
    assert status == 404

    # Read one back: amounts with cents come back exact, never as float.
    status, body = engine.request("GET", f"/transactions/{kept}", api_key=t.key, query={"partner_id": t.id})
    assert status == 200, body
    assert body["payload"]["amount"] == Decimal("12.34") and not isinstance(body["payload"]["amount"], float)
    return t, kept, voided


def test_a_sandbox_in_memory():
    with ach.Engine(sandbox=True, start=START, operator_key=OPERATOR) as engine:
        assert not engine.closed
        lifecycle(engine)
        # The sandbox clock moves only when the operator says.
        status, body = engine.request(
            "POST", "/admin/clock", api_key=OPERATOR, body={"now": "2026-11-23T18:30:00-05:00"}
        )
        assert status == 200 and body["payload"]["now"] == "2026-11-23T23:30:00+00:00"
        assert body["payload"]["originated"] >= 1
    assert engine.closed
    with pytest.raises(ach.ClosedError):
        engine.request("GET", "/categories")


def test_a_sandbox_in_a_file_is_reopened_with_its_data(tmp_path):
    path = tmp_path / "sandbox.redb"
    engine = ach.Engine(str(path), sandbox=True, start=START, operator_key=OPERATOR)
    t, kept, voided = lifecycle(engine)
    assert os.path.exists(f"{path}.key")
    assert "sandbox.redb" in repr(engine)
    engine.close()
    engine.close()  # twice is harmless
    assert engine.closed and "closed" in repr(engine)
    with pytest.raises(ach.ClosedError):
        engine.request("GET", "/categories", api_key=t.key)
    with pytest.raises(ach.ClosedError):
        engine.request_full("GET", "/categories", api_key=t.key)

    with ach.Engine(path, sandbox=True, operator_key=OPERATOR) as again:
        for txn, status in [(kept, "A"), (voided, "R")]:
            answer = again.request("GET", f"/transactions/{txn}", api_key=t.key, query={"partner_id": t.id})
            assert answer[0] == 200 and answer[1]["payload"]["status"] == status
        # The replay is remembered across the reopen.
        body = t.transaction("5.00")
        replay = again.request_full("POST", "/transactions", api_key=t.key, body=body, idempotency_key="k-1")
        assert replay[0] == 201 and replay[2] == {"Idempotent-Replayed": "true"}

    # The same file with another key is refused.
    with pytest.raises(ach.WrongKeyError):
        ach.Engine(path, encryption_key=ENCRYPTION_KEY)
    # A database without its key file.
    os.rename(f"{path}.key", f"{path}.moved")
    with pytest.raises(ach.StorageError, match="exists but its key file"):
        ach.Engine(path)
    os.rename(f"{path}.moved", f"{path}.key")


def test_a_file_open_twice_is_a_storage_error(tmp_path):
    path = tmp_path / "once.redb"
    with ach.Engine(path):
        with pytest.raises(ach.StorageError, match="cannot open the engine"):
            ach.Engine(path)
    ach.Engine(path).close()


def test_an_unreadable_key_file(tmp_path):
    path = tmp_path / "keyed.redb"
    ach.Engine(path).close()
    with open(f"{path}.key", "w") as f:
        f.write("not a key")
    with pytest.raises(ach.KeyFileError, match="cannot open the engine"):
        ach.Engine(path)


def test_options_are_checked_as_ach_engine_open_checks_them(tmp_path):
    cases = [
        (dict(sandbox="yes"), "sandbox must be true or false"),
        (dict(sandbox=1), "sandbox must be true or false"),
        (dict(start=START), "start applies only to a sandbox (sandbox: true)"),
        (dict(sandbox=True, start="monday"), "start: "),
        (dict(sandbox=True, start=True), "start must be an RFC 3339 string or milliseconds"),
        (dict(sandbox=True, start=datetime(2026, 11, 23, 10)), "start: a datetime must have a time zone"),
        (dict(sandbox=True, start=253402300800000), "start: not a time in milliseconds"),
        (dict(operator_key=""), "operator_key must be 1 to 256 bytes"),
        (dict(operator_key="k" * 257), "operator_key must be 1 to 256 bytes"),
        (dict(operator_key=7), "operator_key must be a string"),
        (dict(encryption_key="abc"), "encryption_key must be 64 hex digits"),
        (dict(path=""), "path must not be empty"),
        (dict(path=7), "path must be a string"),
        (dict(path=b"\xff.redb"), "path must be UTF-8"),
        (dict(operator_key={1}), "has no JSON form"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ach.InvalidArgument) as refused:
            ach.Engine(**kwargs)
        assert message in str(refused.value), kwargs
    with pytest.raises(TypeError):
        ach.Engine(bogus=1)  # an unknown keyword is Python's own TypeError
    # Every form of start.
    eastern = timezone(timedelta(hours=-5))
    for start in [START, 1795446000000, datetime(2026, 11, 23, 10, tzinfo=eastern)]:
        with ach.Engine(sandbox=True, start=start, operator_key=OPERATOR) as engine:
            status, body = engine.request("POST", "/admin/clock", api_key=OPERATOR, body={"now": START})
            assert status == 200, (start, body)
    with ach.Engine(tmp_path / "bytes.redb") as engine:
        assert engine.request("GET", "/categories")[0] == 401
    with ach.Engine(os.fsencode(tmp_path / "bytes2.redb")):
        pass


def test_request_misuse_raises():
    with ach.Engine(sandbox=True) as engine:
        for args, kwargs, message in [
            ((1, "/"), {}, "method must be a str"),
            (("GET", None), {}, "path must be a str"),
            (("GET", "/"), {"api_key": 7}, "api_key must be a str"),
            (("GET", "/"), {"idempotency_key": b"k"}, "idempotency_key must be a str"),
            (("GET", "/"), {"query": [1]}, "query must be a str or a dict"),
            (("POST", "/"), {"body": {1, 2}}, "has no JSON form"),
        ]:
            with pytest.raises(ach.InvalidArgument, match=message):
                engine.request(*args, **kwargs)
        # What the router cannot read is its 400, as over HTTPS: a lone
        # surrogate, a body nested deeper than JSON is read.
        deep = []
        for _ in range(2000):
            deep = [deep]
        for kwargs in [{"api_key": "pk_\ud800"}, {"body": deep}, {"body": {"a": "\udfff"}}]:
            status, body = engine.request("POST", "/transactions", **kwargs)
            assert status == 400 and body["errors"][0]["code"] == "invalid_json", kwargs


def test_threads_share_one_engine():
    threads, each = 8, 25
    with ach.Engine(sandbox=True, start=START, operator_key=OPERATOR) as engine:
        t = Tenant(engine)
        answers = []
        errors = []
        barrier = threading.Barrier(threads)

        def work(n):
            try:
                barrier.wait()
                for i in range(each):
                    body = t.transaction(f"{n + 1}.{i:02d}")
                    answers.append(engine.request("POST", "/transactions", api_key=t.key, body=body))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert errors == []
        assert len(answers) == threads * each
        assert all(status == 201 for status, _ in answers), [a for a in answers if a[0] != 201][:3]
        ids = {body["payload"]["id"] for _, body in answers}
        assert len(ids) == threads * each
        # Every one is in the feed.
        status, feed = engine.request("GET", "/status-changes/0", api_key=t.key, query={"partner_id": t.id})
        assert status == 200
        assert ids <= {c["transaction_id"] for c in feed["payload"]["changes"]}


def test_close_while_other_threads_call():
    engine = ach.Engine(sandbox=True, start=START, operator_key=OPERATOR)
    t = Tenant(engine)
    outcomes = []

    def work():
        for i in range(50):
            try:
                outcomes.append(engine.request("POST", "/transactions", api_key=t.key, body=t.transaction("1.00"))[0])
            except ach.ClosedError:
                outcomes.append("closed")

    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    engine.close()
    for w in workers:
        w.join()
    assert set(outcomes) <= {201, "closed"}
