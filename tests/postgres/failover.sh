#!/usr/bin/env bash
# The PostgreSQL pair that `scripts/postgres-up` starts keeps every
# acknowledged commit when its primary is lost: commits wait for the
# synchronous standby; after SIGKILL of the primary and promotion of the
# standby, the multi-host connection string the script printed reaches the new
# primary, every committed row is there, and writes go on.
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/../.."

dir=$(mktemp -d /tmp/ach-pg-XXXXXX)
chmod 755 "$dir"
trap 'scripts/postgres-down "$dir" || true; rm -rf "$dir"' EXIT

url=$(scripts/postgres-up "$dir" | tail -n 1)
read -r _ standby_port <"$dir/ports"
sql() { psql "$url" -v ON_ERROR_STOP=1 -Atqc "$1"; }
fail() { echo "failover.sh: $*" >&2; exit 1; }

[[ $(sql "show synchronous_commit") == on ]] || fail "synchronous_commit is not on"
[[ $(sql "show synchronous_standby_names") == standby1 ]] || fail "no synchronous standby named"
[[ $(sql "select sync_state from pg_stat_replication") == sync ]] || fail "the standby is not synchronous"

# 200 commits, each acknowledged only once the standby has it.
sql "create table acked (n int primary key)"
for n in $(seq 1 200); do sql "insert into acked values ($n)"; done

# Lose the primary: SIGKILL its postmaster; fail over to the standby.
kill -9 "$(head -n 1 "$dir/primary/postmaster.pid")"
scripts/postgres-promote "$dir" >/dev/null

# The same connection string now reaches the promoted standby.
[[ $(sql "select inet_server_port()") == "$standby_port" ]] || fail "the connection string did not reach the new primary"
[[ $(sql "select pg_is_in_recovery()") == f ]] || fail "the new primary is still a standby"
[[ $(sql "select count(*) from acked") == 200 ]] || fail "acknowledged rows were lost"
sql "insert into acked values (201)"
[[ $(sql "select count(*) from acked") == 201 ]] || fail "the new primary refused a write"
echo "failover: 200 acknowledged commits, all on the promoted standby; writes go on"
