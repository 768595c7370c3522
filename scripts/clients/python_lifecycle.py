"""A partner's lifecycle through the client openapi-python-client generated
from docs/openapi.json (scripts/clients-test), against `achd serve --sandbox`;
then every example of the document through the generated models and back.

Bodies are built with the generated models (`Model.from_dict`), answers read
as the generated models parse them: a status the document does not describe,
or an answer its model cannot hold, fails the run.
"""

import base64
import inspect
import json
import re
import ssl
import subprocess
import sys
import tempfile

from ach_payment_service_client import AuthenticatedClient, Client, models
from ach_payment_service_client.api.customers import create_customer
from ach_payment_service_client.api.feeds import get_status_changes_from_start, list_events_from_start
from ach_payment_service_client.api.merchants import get_merchant, submit_merchant
from ach_payment_service_client.api.operator import admin_approve_merchant, admin_create_partner, admin_set_clock
from ach_payment_service_client.api.reference import get_institution
from ach_payment_service_client.api.transactions import (
    create_transaction,
    get_transaction,
    reverse_transaction,
    void_transaction,
)
from ach_payment_service_client.types import UNSET

root = sys.argv[1]
failures = []


def expect(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")


def basic(key):
    return base64.b64encode(f"{key}:".encode()).decode()


def call(module, client, body=None, **params):
    """`module.sync_detailed`, the body made with the model the generated
    function takes."""
    if body is not None:
        model = inspect.signature(module.sync_detailed).parameters["body"].annotation
        model = [t for t in getattr(model, "__args__", (model,)) if hasattr(t, "from_dict")][0]
        params["body"] = model.from_dict(body)
    return module.sync_detailed(client=client, **params)


def payload(answer, status, what):
    expect(what, answer.status_code == status, f"status {answer.status_code}: {answer.content[:300]!r}")
    expect(what, answer.parsed is not None, "no parsed answer")
    return answer.parsed


data = tempfile.mkdtemp(prefix="ach-clients-")
achd = subprocess.Popen(
    [f"{root}/target/debug/achd", "serve", "--sandbox", "--data", data, "--listen", "127.0.0.1:0",
     "--admin-listen", "127.0.0.1:0", "--sandbox-start", "2026-11-23T10:00:00-05:00"],
    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
public = operator_url = None
for line in achd.stdout:
    m = re.match(r"operator plane on (https://\S+)", line)
    if m:
        operator_url = m.group(1)
    m = re.match(r"listening on (https://\S+)", line)
    if m:
        public = m.group(1)
        break
if not public or not operator_url:
    sys.exit("achd did not start")
tls = ssl.create_default_context(cafile=f"{data}/tls-cert.pem")


def client(url, key):
    return AuthenticatedClient(base_url=url, token=basic(key), prefix="Basic", verify_ssl=tls,
                               raise_on_unexpected_status=True)


try:
    op = client(operator_url, open(f"{data}/operator.key").read().strip())
    p = payload(call(admin_create_partner, op, {"name": "Generated Client"}), 201, "partner").payload
    pid, pkey = p.partner_id, p.api_key
    partner = client(public, pkey)

    app = json.load(open(f"{root}/examples/requests/merchant.json"))
    app["partner_id"] = pid
    app["velocities"]["decline_duplicates"] = False
    # What a typed client sends for "number" fields.
    app["velocities"]["lowest_amount_allowed"] = 1.0
    app["velocities"]["expected_checks_per_year"] = 1200.0
    mid = payload(call(submit_merchant, partner, app), 201, "merchant").id
    approved = payload(call(admin_approve_merchant, op, {}, merchant_id=mid), 200, "approve").payload
    merchant = client(public, approved.api_key)
    m = payload(call(get_merchant, partner, merchant_id=mid, partner_id=pid), 200, "read merchant").payload
    expect("merchant status", str(m.status) == "approved", m.status)

    customer = json.load(open(f"{root}/examples/requests/customer.json"))
    customer.update({"partner_id": pid, "merchant_id": mid})
    token = payload(call(create_customer, partner, customer), 201, "customer").payload.id

    txn = json.load(open(f"{root}/examples/requests/transaction.json"))
    txn.update({"partner_id": pid, "merchant_id": mid})
    inline = payload(call(create_transaction, partner, txn), 201, "inline").payload.id
    by_token = dict(txn, amount="31.00", customer={"id": token})
    tokened = payload(call(create_transaction, partner, by_token), 201, "by token").payload.id
    voided = payload(call(create_transaction, partner, dict(txn, amount="12.00")), 201, "to void").payload.id
    payload(call(void_transaction, partner, transaction_id=voided, partner_id=pid), 200, "void")

    # A refusal is the failure model, every problem with its field.
    bad = dict(txn, customer=dict(txn["customer"], routing_number="123456789"))
    refused = call(create_transaction, partner, bad)
    expect("refusal status", refused.status_code == 422, refused.status_code)
    expect("refusal model", type(refused.parsed).__name__ == "Failure", type(refused.parsed).__name__)
    expect("refusal field", refused.parsed is not None and refused.parsed.errors[0].field == "customer.routing_number",
           refused.content[:200])

    # The cut-off, then settlement (debits two banking days after their effective date).
    payload(call(admin_set_clock, op, {"now": "2026-11-23T18:00:00-05:00"}), 200, "cut-off")
    payload(call(admin_set_clock, op, {"now": "2026-11-30T09:00:00-05:00"}), 200, "settlement")
    t = payload(call(get_transaction, partner, transaction_id=inline, partner_id=pid), 200, "read").payload
    expect("settled", str(t.status) == "S", t.status)
    payload(call(reverse_transaction, partner, transaction_id=inline, partner_id=pid), 200, "reverse")

    changes = payload(call(get_status_changes_from_start, partner, partner_id=pid), 200, "status changes")
    seen = {(c.transaction_id, str(c.status)) for c in changes.payload.changes}
    for want in [(inline, "A"), (inline, "B"), (inline, "S"), (tokened, "B"), (voided, "R")]:
        expect("status changes", want in seen, want)
    events = payload(call(list_events_from_start, merchant), 200, "events")
    expect("events", len(events.events) >= len(seen), len(events.events))

    bank = payload(call(get_institution, partner, routing_number="021000021"), 200, "institution")
    expect("institution", bank.payload is not UNSET, bank)
finally:
    achd.terminate()
    achd.wait(timeout=30)

# Every example of the document through its model and back.
doc = json.load(open(f"{root}/docs/openapi.json"))
schemas = doc["components"]["schemas"]


def model_of(ref):
    name = ref.rsplit("/", 1)[-1]
    cls = getattr(models, name, None)
    return cls if hasattr(cls, "from_dict") else None


def same(sent, back):
    """Whether `back` holds `sent`: what a model adds is absent values only."""
    if isinstance(sent, dict):
        return isinstance(back, dict) and all(same(v, back.get(k)) for k, v in sent.items())
    if isinstance(sent, list):
        return isinstance(back, list) and len(sent) == len(back) and all(map(same, sent, back))
    if isinstance(sent, float) or isinstance(back, float):
        return float(sent) == float(back)
    return sent == back


examples = 0
for path, item in doc["paths"].items():
    for method, op_doc in item.items():
        if not isinstance(op_doc, dict):
            continue
        media = [op_doc.get("requestBody", {}).get("content", {})]
        media += [r.get("content", {}) for r in op_doc.get("responses", {}).values() if isinstance(r, dict)]
        for content in media:
            json_media = content.get("application/json", {})
            ref = json_media.get("schema", {}).get("$ref")
            found = [json_media["example"]] if "example" in json_media else []
            found += [e.get("value") for e in json_media.get("examples", {}).values() if "value" in e]
            cls = model_of(ref) if ref else None
            for example in found:
                if cls is None:
                    continue
                examples += 1
                try:
                    back = cls.from_dict(example).to_dict()
                except Exception as e:  # noqa: BLE001 - any refusal is a finding
                    failures.append(f"{method.upper()} {path}: example refused by {cls.__name__}: {e}")
                    continue
                expect(f"{method.upper()} {path} example", same(example, back), f"{example} -> {back}")
for name, schema in schemas.items():
    cls = model_of(name)
    for example in schema.get("examples", []) if isinstance(schema.get("examples"), list) else []:
        if cls is None or not isinstance(example, dict):
            continue
        examples += 1
        try:
            back = cls.from_dict(example).to_dict()
            expect(f"{name} example", same(example, back), f"{example} -> {back}")
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name}: example refused: {e}")

if failures:
    sys.exit("\n".join(failures))
print(f"clients-test (python): a lifecycle through the generated client; {examples} examples through its models")
