#!/usr/bin/env bash
# The C side of libach, end to end:
#   1. build libach (cargo build -p ach-ffi: libach.so and libach.a);
#   2. compile tests/c/test_ach.c and the hostile-input table tests/c/hostile.c with
#      gcc -std=c99 -Wall -Wextra -Werror -pedantic against the committed
#      include/ach.h, once linked with libach.a and once with libach.so, and run
#      them under valgrind (no leak, no invalid access);
#   3. the same for tests/c/test_bank_files.c: a sandbox cut-off, its origination
#      file fetched and checked, a return file composed in C posted back;
#   4. run the shared JSON case corpus through ach_validate (tests/c/corpus.c) and
#      compare every verdict with the case's expectations (tests/c/corpus_lines.py);
#   5. build and run the examples: examples/c/batch_submit.c and the GnuCOBOL
#      program examples/cobol/achdemo.cob, checking their output.
# Installs valgrind and gnucobol with apt-get when they are missing. Exits non-zero
# on any failure. Honours CARGO_TARGET_DIR.
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/../.."

step() { printf '\n== %s\n' "$*"; }
fail() {
    printf 'FAILED: %s\n' "$*" >&2
    exit 1
}

apt_updated=0
install_pkg() { # install_pkg COMMAND PACKAGE: make COMMAND available via apt-get
    command -v "$1" >/dev/null 2>&1 && return 0
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || return 1
        sudo=(sudo -n)
    fi
    command -v apt-get >/dev/null 2>&1 || return 1
    if [ "$apt_updated" = 0 ]; then
        "${sudo[@]}" apt-get update -qq || return 1
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$2" >/dev/null || return 1
    command -v "$1" >/dev/null 2>&1
}

command -v gcc >/dev/null || fail "gcc is required"
command -v python3 >/dev/null || fail "python3 is required"

step "tools"
if install_pkg valgrind valgrind; then
    echo "valgrind: $(valgrind --version)"
else
    echo "WARNING: valgrind is not available and could not be installed: the tests run without it"
fi
install_pkg cobc gnucobol || fail "GnuCOBOL (cobc, Debian package gnucobol) is not available and could not be installed"
echo "cobc: $(cobc --version | head -1)"

step "build libach (cargo build -p ach-ffi)"
cargo build -p ach-ffi
target="${CARGO_TARGET_DIR:-target}"
lib="$(cd "$target/debug" && pwd)"
[ -f "$lib/libach.a" ] && [ -f "$lib/libach.so" ] || fail "libach.a / libach.so missing in $lib"
out="$target/c-tests"
rm -rf "$out"
mkdir -p "$out"

cflags=(-std=c99 -Wall -Wextra -Werror -pedantic -g -Iinclude)
# The system libraries libach.a needs on Linux (what `cargo rustc -p ach-ffi
# --crate-type staticlib -- --print native-static-libs` prints).
static_libs=(-lpthread -ldl -lm -lrt -lutil -lgcc_s)

run_checked() { # run_checked NAME COMMAND...: under valgrind when available
    local name="$1"
    shift
    if command -v valgrind >/dev/null 2>&1; then
        local log="$out/$name.valgrind.log"
        if ! LD_LIBRARY_PATH="$lib" valgrind --leak-check=full --show-leak-kinds=definite \
            --errors-for-leak-kinds=definite --error-exitcode=1 --log-file="$log" "$@"; then
            cat "$log" >&2
            fail "$name (under valgrind; log above)"
        fi
        printf '   valgrind %s: %s; %s\n' "$name" \
            "$(grep -Eo 'definitely lost: [0-9,]+ bytes' "$log" || echo 'no leaks possible')" \
            "$(grep -Eo 'ERROR SUMMARY: [0-9]+ errors' "$log")" >&2
    else
        LD_LIBRARY_PATH="$lib" "$@" || fail "$name"
    fi
}

# compile_and_run NAME ARGS...: build tests/c/NAME.c against include/ach.h twice,
# on libach.a and on libach.so, check each links the library it should, and run
# both with ARGS.
compile_and_run() {
    local name="$1"
    shift
    gcc "${cflags[@]}" -o "$out/${name}_static" "tests/c/$name.c" "$lib/libach.a" "${static_libs[@]}"
    gcc "${cflags[@]}" -o "$out/${name}_shared" "tests/c/$name.c" -L"$lib" -lach -lpthread
    # ldd's output is read whole before grep looks at it: `ldd | grep -q` under
    # pipefail failed now and then (grep -q exits at its match, ldd gets SIGPIPE).
    local static_deps shared_deps
    static_deps=$(ldd "$out/${name}_static")
    shared_deps=$(LD_LIBRARY_PATH="$lib" ldd "$out/${name}_shared")
    if grep -q libach <<<"$static_deps"; then fail "${name}_static links libach.so"; fi
    grep -q 'libach\.so' <<<"$shared_deps" || fail "${name}_shared does not link libach.so"
    run_checked "${name}_static" "$out/${name}_static" "$@"
    run_checked "${name}_shared" "$out/${name}_shared" "$@"
}

step "C tests: compile (static, shared) and run under valgrind"
compile_and_run test_ach "$out"

step "C hostile-input table: compile (static, shared) and run under valgrind"
compile_and_run hostile "$out"

step "C bank files (cut-off, origination file, return file): compile (static, shared) and run under valgrind"
compile_and_run test_bank_files

step "the shared JSON case corpus through ach_validate"
gcc "${cflags[@]}" -o "$out/corpus" tests/c/corpus.c -L"$lib" -lach
python3 tests/c/corpus_lines.py lines tests/corpus >"$out/corpus-cases.txt"
run_checked corpus "$out/corpus" "$out/corpus-cases.txt" >"$out/corpus-verdicts.txt"
python3 tests/c/corpus_lines.py check tests/corpus "$out/corpus-verdicts.txt" || fail "corpus verdicts differ"

step "example: examples/c/batch_submit"
gcc "${cflags[@]}" -o "$out/batch_submit" examples/c/batch_submit.c -L"$lib" -lach
run_checked batch_submit "$out/batch_submit" examples/c/transactions.jsonl examples/requests/merchant.json \
    >"$out/batch_submit.txt"
cat "$out/batch_submit.txt"
grep -q '^2 accepted, 5 refused, 0 not submitted$' "$out/batch_submit.txt" || fail "batch_submit summary"
grep -q '^line 1: 201 .*"id":"txn_' "$out/batch_submit.txt" || fail "batch_submit line 1"
grep -q '^line 3: 422 .*invalid Amount' "$out/batch_submit.txt" || fail "batch_submit line 3"
grep -q '^line 7: 400 .*invalid_json' "$out/batch_submit.txt" || fail "batch_submit line 7"

step "pkg-config: scripts/install-libach into a prefix, the example built with \$(pkg-config --cflags --libs ach)"
install_pkg pkg-config pkgconf || fail "pkg-config (Debian package pkgconf) is not available and could not be installed"
prefix="$out/prefix"
rm -rf "$prefix"
scripts/install-libach --debug "$prefix"
pc_flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs ach)
echo "pkg-config --cflags --libs ach: $pc_flags"
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Wextra -Werror -pedantic -o "$out/batch_submit_pc" examples/c/batch_submit.c $pc_flags
LD_LIBRARY_PATH="$prefix/lib" "$out/batch_submit_pc" examples/c/transactions.jsonl >"$out/batch_submit_pc.txt" ||
    fail "batch_submit built with pkg-config"
ids() { sed -E 's/(txn|cus|mer|par)_[0-9A-Za-z]{22}/\1_ID/g' "$1"; }
diff <(ids "$out/batch_submit.txt") <(ids "$out/batch_submit_pc.txt") ||
    fail "batch_submit built with pkg-config answers otherwise"
echo "batch_submit built with pkg-config: the same answers"

step "example: examples/cobol/achdemo.cob (GnuCOBOL)"
cobc -x -fstatic-call -o "$out/achdemo" examples/cobol/achdemo.cob -L"$lib" -lach
LD_LIBRARY_PATH="$lib" "$out/achdemo" examples/requests >"$out/achdemo.txt" || {
    cat "$out/achdemo.txt"
    fail "achdemo"
}
cat "$out/achdemo.txt"
grep -q '^LIBACH VERSION: [0-9]' "$out/achdemo.txt" || fail "achdemo: version"
grep -q '^VALIDATE SAMPLE: {"valid":true,"message":null,"errors":\[\]}$' "$out/achdemo.txt" ||
    fail "achdemo: the sample transaction should validate"
grep -q '^VALIDATE BAD AMOUNT: {"valid":false,.*"field":"amount","code":"invalid_amount"' "$out/achdemo.txt" ||
    fail "achdemo: the bad amount should be refused"
grep -q '^MERCHANT: mer_' "$out/achdemo.txt" || fail "achdemo: merchant"
grep -q '^SUBMIT TRANSACTION: .*"status":201}$' "$out/achdemo.txt" || fail "achdemo: submission"
grep -q '^TRANSACTION: txn_' "$out/achdemo.txt" || fail "achdemo: transaction id"

step "all C tests passed"
