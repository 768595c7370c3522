// Misuse (wrong argument types) throws real `Error` objects; an invalid form is
// data. Routing numbers: the embedded default directory, then the real FedACH
// file loaded into the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ach, sharedData } from './module.mjs';

function throwsError(fn, pattern) {
  assert.throws(fn, (e) => e instanceof Error && pattern.test(e.message));
}

test('wrong argument types throw Error', () => {
  for (const name of ['validateTransaction', 'validateCustomer', 'validateMerchant']) {
    for (const bad of [42, undefined, null, true, () => ({})]) {
      throwsError(() => ach[name](bad), new RegExp(`^${name} expects an object or a JSON string$`));
    }
  }
  throwsError(() => ach.checkRoutingNumber(21000021), /^checkRoutingNumber expects a string$/);
  throwsError(() => ach.loadRoutingDirectory({}), /^loadRoutingDirectory expects the file's text$/);
  throwsError(() => ach.loadRoutingDirectory('garbage'), /^not a FedACH directory: /);
});

test('an invalid form is data, not an exception', () => {
  const v = ach.validateTransaction({ merchant_id: 'mer_1', amount: '1.234' });
  assert.equal(v.valid, false);
  assert.equal(v.message, 'Failed to accept this transaction');
  assert.ok(v.errors.length > 1);
  for (const e of v.errors) assert.deepEqual(Object.keys(e).sort(), ['code', 'field', 'message']);
  const malformed = ach.validateCustomer('{"name": ');
  assert.equal(malformed.valid, false);
  assert.deepEqual(malformed.errors.map((e) => e.code), ['invalid_json']);
});

test('a JS object and its JSON text give the same verdict', () => {
  const body = {
    partner_id: 'par_0123456789abcdefghijKL', merchant_id: 'global', name: 'Grace Hopper',
    routing_number: '026009593', account_number: '000123456789', account_type: 'savings',
  };
  assert.deepEqual(ach.validateCustomer(body), { valid: true, message: null, errors: [] });
  assert.deepEqual(ach.validateCustomer(JSON.stringify(body)), ach.validateCustomer(body));
});

test('checkRoutingNumber, then loadRoutingDirectory with the real FedACH file', () => {
  assert.deepEqual(ach.checkRoutingNumber('021000021'), { valid: true, message: null, errors: [] });
  assert.deepEqual(ach.checkRoutingNumber('021000022'), {
    valid: false,
    message: "'021000022' is an invalid Routing Number",
    errors: [{ field: 'routing_number', code: 'invalid_check_digit', message: "'021000022' is an invalid Routing Number" }],
  });
  // Not nine digits is told apart from a bad check digit, as the server tells them apart.
  assert.equal(ach.checkRoutingNumber('02100002').errors[0].code, 'invalid_format');
  const notFound = "Routing Number '231380104' was not found";
  assert.deepEqual(ach.checkRoutingNumber('231380104'), {
    valid: false,
    message: notFound,
    errors: [{ field: 'routing_number', code: 'not_found', message: notFound }],
  });

  const file = join(sharedData, 'fedach/FedACHdir.txt');
  assert.ok(existsSync(file), `${file} is missing (set ACH_SHARED_DATA to shared/data)`);
  assert.equal(ach.loadRoutingDirectory(readFileSync(file, 'utf8')), 18198);
  assert.deepEqual(ach.checkRoutingNumber('231380104'), { valid: true, message: null, errors: [] });
  assert.equal(ach.checkRoutingNumber('021000021').valid, true);
});
