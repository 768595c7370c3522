#!/usr/bin/env python3
"""The requests of tests/postgres/backup.sh to a running `achd serve` (Python 3
standard library only; HTTPS trusting the certificate achd made in its data
directory).

  backup_load.py setup  STATE PUBLIC OPERATOR DATA
      a partner and its approved merchant (duplicates allowed); the ids and
      keys are written to STATE (JSON)
  backup_load.py create STATE PUBLIC OPERATOR DATA PHASE COUNT
      COUNT transactions of distinct amounts, recorded in STATE under PHASE
  backup_load.py check  STATE PUBLIC OPERATOR DATA
      every transaction in STATE answers 200 with its amount; a new one is
      created (201)

PUBLIC and OPERATOR are the addresses achd printed (https://HOST:PORT); DATA
is its data directory (operator.key, tls-cert.pem).
"""

import base64
import decimal
import http.client
import json
import os
import ssl
import sys
import urllib.parse

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def fail(message):
    sys.exit(f"backup_load.py: {message}")


class Achd:
    def __init__(self, public, operator, data):
        self.tls = ssl.create_default_context(cafile=os.path.join(data, "tls-cert.pem"))
        with open(os.path.join(data, "operator.key"), encoding="utf-8") as f:
            self.operator_key = f.read().strip()
        self.conns = {}
        self.addrs = {"public": public, "operator": operator}

    def conn(self, plane):
        if plane not in self.conns:
            url = urllib.parse.urlsplit(self.addrs[plane])
            self.conns[plane] = http.client.HTTPSConnection(
                url.hostname, url.port, context=self.tls, timeout=30)
        return self.conns[plane]

    def call(self, method, path, key, body=None):
        """The status and the JSON answer (numbers as Decimal)."""
        plane = "operator" if path.startswith("/admin/") else "public"
        auth = base64.b64encode(f"{key}:".encode()).decode()
        headers = {"Authorization": f"Basic {auth}", "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn = self.conn(plane)
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        raw = response.read()
        try:
            answer = json.loads(raw, parse_float=decimal.Decimal) if raw else None
        except ValueError:
            answer = raw.decode(errors="replace")
        return response.status, answer

    def expect(self, method, path, key, body, status):
        got, answer = self.call(method, path, key, body)
        if got != status:
            fail(f"{method} {path}: {got}, expected {status}: {answer}")
        return answer


def example(name):
    with open(os.path.join(ROOT, "examples", "requests", name), encoding="utf-8") as f:
        return json.load(f)


def amount(n):
    """A distinct amount for the n-th transaction: 1.01, 1.02, ..."""
    return f"{1 + n // 100}.{n % 100:02d}"


def setup(achd, state):
    p = achd.expect("POST", "/admin/partners", achd.operator_key, {"name": "Acme"}, 201)
    partner_id, partner_key = p["payload"]["partner_id"], p["payload"]["api_key"]
    app = example("merchant.json")
    app["partner_id"] = partner_id
    app["velocities"]["decline_duplicates"] = False
    m = achd.expect("POST", "/merchants", partner_key, app, 201)
    merchant_id = m["id"]
    limits = {"limits": {"monthly_count": 1000000, "monthly_amount": "90000000.00"}}
    a = achd.expect("POST", f"/admin/merchants/{merchant_id}/approve", achd.operator_key, limits, 200)
    state.update(partner_id=partner_id, partner_key=partner_key, merchant_id=merchant_id,
                 merchant_key=a["payload"]["api_key"], transactions=[])


def create_one(achd, state, n):
    txn = example("transaction.json")
    txn["partner_id"] = state["partner_id"]
    txn["merchant_id"] = state["merchant_id"]
    txn["amount"] = amount(n)
    v = achd.expect("POST", "/transactions", state["partner_key"], txn, 201)
    return {"id": v["payload"]["id"], "amount": amount(n)}


def create(achd, state, phase, count):
    start = len(state["transactions"])
    for n in range(start + 1, start + count + 1):
        t = create_one(achd, state, n)
        t["phase"] = phase
        state["transactions"].append(t)


def check(achd, state):
    ids = state["transactions"]
    for t in ids:
        path = f"/transactions/{t['id']}?partner_id={state['partner_id']}"
        v = achd.expect("GET", path, state["partner_key"], None, 200)
        got = v["payload"]["amount"]
        if decimal.Decimal(str(got)) != decimal.Decimal(t["amount"]):
            fail(f"{t['id']} ({t['phase']} the backup): amount {got}, expected {t['amount']}")
    create_one(achd, state, len(ids) + 1)
    phases = {}
    for t in ids:
        phases[t["phase"]] = phases.get(t["phase"], 0) + 1
    print(" ".join(f"{k}={v}" for k, v in sorted(phases.items())))


def main():
    if len(sys.argv) < 6:
        fail(__doc__)
    command, state_file, public, operator, data = sys.argv[1:6]
    achd = Achd(public, operator, data)
    state = {}
    if command != "setup":
        with open(state_file, encoding="utf-8") as f:
            state = json.load(f)
    if command == "setup":
        setup(achd, state)
    elif command == "create":
        create(achd, state, sys.argv[6], int(sys.argv[7]))
    elif command == "check":
        check(achd, state)
        return
    else:
        fail(f"unknown command {command}")
    with open(state_file + ".tmp", "w", encoding="utf-8") as f:
        json.dump(state, f, indent=1)
    os.replace(state_file + ".tmp", state_file)


if __name__ == "__main__":
    main()
