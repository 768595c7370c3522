// A partner's lifecycle through types openapi-typescript generated from
// docs/openapi.json and openapi-fetch, against `achd serve --sandbox`
// (scripts/clients-test starts it and passes its two addresses and keys).
// Type-checked with `tsc --noEmit` first: a body or a parameter the document
// does not describe fails the build, not the run.
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";
import { readFileSync } from "node:fs";

const [publicUrl, operatorUrl, operatorKey, root] = process.argv.slice(2) as [string, string, string, string];
const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString("base64")}`;
const client = (baseUrl: string, key: string) => createClient<paths>({ baseUrl, headers: { Authorization: basic(key) } });
const failures: string[] = [];
const expect = (what: string, ok: boolean, detail: unknown = "") => {
  if (!ok) failures.push(`${what}: ${JSON.stringify(detail)}`);
};

const op = client(operatorUrl, operatorKey);
const partnerAnswer = await op.POST("/admin/partners", { body: { name: "Typed Client" } });
if (!partnerAnswer.data) throw new Error(`partner: ${JSON.stringify(partnerAnswer.error)}`);
const { partner_id: pid, api_key: pkey } = partnerAnswer.data.payload;
const partner = client(publicUrl, pkey);

const application = JSON.parse(readFileSync(`${root}/examples/requests/merchant.json`, "utf8"));
application.partner_id = pid;
application.velocities.decline_duplicates = false;
const submitted = await partner.POST("/merchants", { body: application });
if (!submitted.data) throw new Error(`merchant: ${JSON.stringify(submitted.error)}`);
const mid = submitted.data.id;
const approved = await op.POST("/admin/merchants/{merchant_id}/approve", {
  params: { path: { merchant_id: mid } },
  body: {},
});
if (!approved.data) throw new Error(`approve: ${JSON.stringify(approved.error)}`);
const merchant = client(publicUrl, approved.data.payload.api_key);

const customer = await partner.POST("/customers", {
  body: {
    partner_id: pid, merchant_id: mid, name: "Grace Hopper", routing_number: "026009593",
    account_number: "12345678", account_type: "savings",
  },
});
if (!customer.data) throw new Error(`customer: ${JSON.stringify(customer.error)}`);
const token = customer.data.payload.id;

const debit = (amount: string, account: { id: string } | undefined) => ({
  partner_id: pid, merchant_id: mid, amount, description: "typed client", type: "debit" as const,
  standard_entry_class: "PPD" as const,
  customer: account ?? { name: "Ada Lovelace", routing_number: "021000021", account_number: "987654321", account_type: "checking" as const },
});
const created: string[] = [];
for (const [amount, account] of [["20.00", undefined], ["21.00", { id: token }], ["22.00", undefined]] as const) {
  const answer = await partner.POST("/transactions", { body: debit(amount, account) });
  if (!answer.data) throw new Error(`create ${amount}: ${JSON.stringify(answer.error)}`);
  created.push(answer.data.payload.id);
}
const [inline, tokened, voided] = created as [string, string, string];
const voidAnswer = await partner.PUT("/transactions/{transaction_id}/void", {
  params: { path: { transaction_id: voided }, query: { partner_id: pid } },
});
expect("void", voidAnswer.response.status === 200, voidAnswer.error);

// A refusal is the failure model, each problem with its field.
const refused = await partner.POST("/transactions", {
  body: { ...debit("5.00", undefined), customer: { name: "X", routing_number: "123456789", account_number: "1234", account_type: "checking" } },
});
expect("refusal", refused.response.status === 422 && refused.error?.errors?.[0]?.field === "customer.routing_number", refused.error);

for (const now of ["2026-11-23T18:00:00-05:00", "2026-11-30T09:00:00-05:00"]) {
  const moved = await op.POST("/admin/clock", { body: { now } });
  expect(`clock ${now}`, moved.response.status === 200, moved.error);
}
const read = await partner.GET("/transactions/{transaction_id}", {
  params: { path: { transaction_id: inline }, query: { partner_id: pid } },
});
expect("settled", read.data?.payload.status === "S", read.data ?? read.error);
const reversed = await partner.PUT("/transactions/{transaction_id}/reverse", {
  params: { path: { transaction_id: inline }, query: { partner_id: pid } },
});
expect("reverse", reversed.response.status === 200, reversed.error);

const changes = await partner.GET("/status-changes", { params: { query: { partner_id: pid } } });
const seen = new Set((changes.data?.payload.changes ?? []).map((c) => `${c.transaction_id}/${c.status}`));
for (const want of [`${inline}/S`, `${tokened}/B`, `${voided}/R`]) expect("status changes", seen.has(want), want);
const events = await merchant.GET("/events");
expect("events", (events.data?.events.length ?? 0) >= seen.size, events.error);
const bank = await partner.GET("/institutions/{routing_number}", { params: { path: { routing_number: "021000021" } } });
expect("institution", bank.response.status === 200, bank.error);

if (failures.length > 0) {
  console.error(failures.join("\n"));
  process.exit(1);
}
console.log("clients-test (typescript): a lifecycle through openapi-fetch, type-checked");
