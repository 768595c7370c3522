#!/usr/bin/env bash
# The engine suites (ach-tests: every World and Router engine) and the HTTPS
# suites (every achd the harness starts: `--store`) on PostgreSQL: a primary
# and its synchronous standby from `scripts/postgres-up`, each engine and
# each server in a schema of its own. What redb's suites check of files
# (modes, bytes at rest) they check of the key files and the stored rows.
# Then nothing is answered while the standby is paused
# (server/tests/postgres_standby_wait.rs), and two achd under load lose the
# primary and carry on on the promoted standby
# (server/tests/postgres_failover.rs).
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/../.."

dir=$(mktemp -d /tmp/ach-pg-suites-XXXXXX)
chmod 755 "$dir"
trap 'scripts/postgres-down "$dir" || true; rm -rf "$dir"' EXIT

url=$(scripts/postgres-up "$dir" | tail -n 1)
export ACH_TEST_POSTGRES=$url
cargo test -p ach-tests --features postgres
# The window log's pruning and every row's partner (unit tests of the
# engine's, on PostgreSQL only).
cargo test -p ach-core --features postgres --lib window_log_tests
cargo test -p ach-core --features postgres --lib partner_rows_tests
cargo test -p achd --test https --test hostile_https --test postgres_engine
# Nothing answered before the standby has it (pauses the standby).
ACH_TEST_PG_DIR=$dir cargo test -p achd --test postgres_standby_wait
# Last: it loses the primary (SIGKILL) and promotes the standby under load.
ACH_TEST_PG_DIR=$dir cargo test -p achd --test postgres_failover
