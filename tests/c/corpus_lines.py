#!/usr/bin/env python3
"""The shared case corpus (tests/corpus/*.json) for the C test, both ways.

    corpus_lines.py lines  CORPUS_DIR > cases.txt     one case per line: KIND<TAB>HEX
    corpus_lines.py check  CORPUS_DIR verdicts.txt    compare the C program's output

`lines` writes each case's body exactly as the Rust corpus test builds it
(tests/src/lib.rs, `Case::body`): `raw` as is, else `request` serialised the way
serde_json serialises a `Value` (members sorted by name, compact, numbers as their
literal text, strings escaped like serde_json), hex-encoded so that any byte
survives the line format. tests/c/corpus.c reads those lines, validates each body
through ach_validate and prints each verdict line.

`check` compares each printed verdict with its case's expectations: `valid`,
`message` and the list of `[field, code]` pairs, in order, as the Rust test does.
Prints "N passed, N failed" and exits 1 on any failure.
"""

import glob
import json
import os
import sys


class Number(str):
    """A JSON number kept as the literal text it was written with."""


def load_cases(corpus_dir):
    cases = []
    for path in sorted(glob.glob(os.path.join(corpus_dir, "*.json"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # Numbers stay text, like serde_json's arbitrary_precision.
        for case in json.loads(text, parse_int=Number, parse_float=Number, parse_constant=Number):
            cases.append(case)
    return cases


def serialise(value):
    """serde_json::to_vec of a serde_json::Value (BTreeMap objects)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, Number):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(serialise(v) for v in value) + "]"
    if isinstance(value, dict):
        # BTreeMap<String, _> orders by bytes; UTF-8 preserves code point order.
        items = sorted(value.items(), key=lambda kv: kv[0])
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + serialise(v) for k, v in items) + "}"
    raise TypeError(f"unexpected JSON value {value!r}")


def body_bytes(case):
    if case.get("raw") is not None:
        return case["raw"].encode("utf-8")
    if case.get("request") is not None:
        return serialise(case["request"]).encode("utf-8")
    return b""


def write_lines(corpus_dir):
    out = sys.stdout
    for case in load_cases(corpus_dir):
        out.write(f"{case['kind']}\t{body_bytes(case).hex()}\n")


def check(corpus_dir, verdicts_path):
    cases = load_cases(corpus_dir)
    with open(verdicts_path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    failures = []
    if len(lines) != len(cases):
        failures.append(f"{len(cases)} cases but {len(lines)} verdict lines")
    for case, line in zip(cases, lines):
        try:
            verdict = json.loads(line)
        except ValueError as e:
            failures.append(f"{case['kind']} / {case['name']}: output is not JSON ({e}): {line}")
            continue
        got = (verdict.get("valid"), verdict.get("message"), [[e["field"], e["code"]] for e in verdict["errors"]])
        expected = (case["valid"], case["message"], [list(pair) for pair in case["fields"]])
        if got != expected:
            failures.append(f"{case['kind']} / {case['name']}: got {got}; expected {expected}")
    for failure in failures:
        print(failure)
    passed = len(cases) - len([f for f in failures if " / " in f])
    if len(lines) != len(cases):
        passed = 0
    print(f"corpus through C: {passed} passed, {len(cases) - passed} failed")
    return 1 if failures else 0


def main(argv):
    if len(argv) == 3 and argv[1] == "lines":
        write_lines(argv[2])
        return 0
    if len(argv) == 4 and argv[1] == "check":
        return check(argv[2], argv[3])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
