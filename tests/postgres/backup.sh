#!/usr/bin/env bash
# PostgreSQL's own backup of the service's database: a base backup
# (pg_basebackup, without WAL) plus the primary's WAL archive. `achd serve
# --store` on the pair `scripts/postgres-up` starts answers 20 transactions
# before the base backup and 20 after it; the base backup is restored on a
# third server that replays the archive to its end and promotes itself; the
# pair is stopped, and achd on the restored server, with the same data
# directory (its sealing key ach.key), answers all 40 and takes new ones.
set -euo pipefail
shopt -s inherit_errexit 2>/dev/null || true
cd "$(dirname "$0")/../.."
started=$SECONDS

dir=$(mktemp -d /tmp/ach-pg-backup-XXXXXX)
chmod 755 "$dir"
data=$dir/achd-data
state=$dir/transactions.json
archive=$dir/wal-archive
bin=""
achd_pid=""

# The server refuses to run as root: as root, it runs as `postgres`.
as_server=()
owner=$(id -un)
if [[ $(id -u) -eq 0 ]]; then
    as_server=(runuser -u postgres --)
    owner=postgres
fi
pg() { "${as_server[@]}" "$bin/$1" "${@:2}"; }

cleanup() {
    if [[ -n $achd_pid ]]; then
        kill "$achd_pid" 2>/dev/null || true
        wait "$achd_pid" 2>/dev/null || true
    fi
    if [[ -n $bin && -f $dir/restored/postmaster.pid ]]; then
        pg pg_ctl -D "$dir/restored" -m fast -w -t 20 stop >/dev/null 2>&1 || true
    fi
    scripts/postgres-down "$dir" || true
    rm -rf "$dir"
}
trap cleanup EXIT

fail() {
    echo "backup.sh: $*" >&2
    for log in "$dir"/achd-*.log "$dir"/restored.log; do
        [[ -s $log ]] || continue
        echo "--- the end of $log:" >&2
        tail -n 20 "$log" >&2
    done
    exit 1
}

# 1. The pair, then WAL archiving on the primary (a restart), then the
# standby synchronous again.
url=$(scripts/postgres-up "$dir" | tail -n 1)
read -r primary_port _ <"$dir/ports"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
primary_url="postgres://postgres@127.0.0.1:$primary_port/postgres"
sql() { "$bin/psql" "$1" -v ON_ERROR_STOP=1 -Atqc "$2"; }

mkdir -m 700 "$archive"
chown "$owner" "$archive"
cat >>"$dir/primary/postgresql.conf" <<CONF
# tests/postgres/backup.sh: every finished WAL segment copied to the archive.
archive_mode = on
archive_command = 'test ! -f $archive/%f && cp %p $archive/%f'
CONF
pg pg_ctl -D "$dir/primary" -l "$dir/primary.log" -m fast -w -t 60 restart >/dev/null ||
    fail "the primary did not restart with archive_mode = on (see $dir/primary.log)"
scripts/postgres-up "$dir" >/dev/null
[[ $(sql "$primary_url" "show archive_mode") == on ]] || fail "archive_mode is not on"
[[ $(sql "$primary_url" "select sync_state from pg_stat_replication") == sync ]] ||
    fail "the standby is not synchronous after the primary's restart"

# 2. achd on the pair.
cargo build -q -p achd --features postgres
achd=${CARGO_TARGET_DIR:-target}/debug/achd
public=""
operator=""
start_achd() { # start_achd STORE N: achd in the background; $public, $operator
    local out=$dir/achd-$2.out
    "$achd" serve --store "$1" --data "$data" --sandbox --sandbox-start 2026-11-23T10:00:00-05:00 \
        --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 >"$out" 2>"$dir/achd-$2.log" &
    achd_pid=$!
    public=""
    operator=""
    for _ in $(seq 1 600); do
        public=$(sed -n 's/^listening on \(https:[^ ]*\).*/\1/p' "$out" | head -n 1)
        operator=$(sed -n 's/^operator plane on \(https:[^ ]*\).*/\1/p' "$out" | head -n 1)
        [[ -n $public && -n $operator ]] && return 0
        kill -0 "$achd_pid" 2>/dev/null || break
        sleep 0.1
    done
    fail "achd serve --store $1 did not print its addresses within 60 s"
}
stop_achd() { # SIGTERM: a clean stop, exit 0
    local rc=0
    kill -TERM "$achd_pid"
    wait "$achd_pid" || rc=$?
    achd_pid=""
    [[ $rc -eq 0 ]] || fail "achd exited $rc after SIGTERM"
}
load() { python3 tests/postgres/backup_load.py "$1" "$state" "$public" "$operator" "$data" "${@:2}"; }

start_achd "$url" 1
[[ -s $data/ach.key ]] || fail "achd made no sealing key $data/ach.key"

# 3. A partner, its approved merchant, and 20 transactions before the backup.
load setup || fail "the partner and merchant were not made"
load create before 20 || fail "the transactions before the backup were not made"

# 4. The base backup, without WAL (-X none): the restore needs the archive.
pg pg_basebackup -D "$dir/base" -h 127.0.0.1 -p "$primary_port" -U postgres -X none -c fast \
    2>"$dir/basebackup.log" || fail "pg_basebackup failed: $(cat "$dir/basebackup.log")"
[[ -f $dir/base/backup_label ]] || fail "the base backup has no backup_label"
load create after 20 || fail "the transactions after the backup were not made"
segment=$(sql "$primary_url" "select pg_walfile_name(pg_switch_wal())")
archived=""
for _ in $(seq 1 600); do
    archived=$(sql "$primary_url" \
        "select coalesce(last_archived_wal, '') collate \"C\" >= '$segment' from pg_stat_archiver")
    [[ $archived == t ]] && break
    sleep 0.1
done
[[ $archived == t ]] || fail "the segment $segment was not archived within 60 s"
[[ -f $archive/$segment ]] || fail "the archive holds no $segment"

# 5. achd stops; the base backup is restored on a third server, which
# replays the archive to its end and promotes itself.
stop_achd
cp -a "$dir/base" "$dir/restored"
chown -R "$owner" "$dir/restored"
chmod 700 "$dir/restored"
cat >>"$dir/restored/postgresql.conf" <<CONF
# tests/postgres/backup.sh: the base backup restored from the WAL archive, alone.
restore_command = 'cp $archive/%f %p'
archive_mode = off
synchronous_standby_names = ''
CONF
"${as_server[@]}" touch "$dir/restored/recovery.signal"
restored_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg pg_ctl -D "$dir/restored" -l "$dir/restored.log" -w -t 120 \
    -o "-p $restored_port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null ||
    fail "the restored server did not start"
restored_url="postgres://postgres@127.0.0.1:$restored_port/postgres"
recovering=""
for _ in $(seq 1 600); do
    recovering=$(sql "$restored_url" "select pg_is_in_recovery()" 2>/dev/null || true)
    [[ $recovering == f ]] && break
    sleep 0.1
done
[[ $recovering == f ]] || fail "the restored server did not finish recovery within 60 s"
[[ ! -f $dir/restored/recovery.signal ]] || fail "recovery.signal is still there after promotion"
grep -q "restored log file \"$segment\" from archive" "$dir/restored.log" ||
    fail "the restored server did not replay $segment from the archive"
# The pair stops: only the restored server holds the data now.
scripts/postgres-down "$dir"

# 6. achd on the restored server, the same data directory and sealing key.
start_achd "$restored_url" 2
summary=$(load check) || fail "achd on the restored server did not serve every transaction"
[[ $summary == "after=20 before=20" ]] || fail "the transactions checked: $summary"
stop_achd
pg pg_ctl -D "$dir/restored" -m fast -w -t 20 stop >/dev/null || fail "the restored server did not stop"

# 7.
echo "backup: 20 transactions before a base backup (pg_basebackup -X none) and 20 after it," \
    "restored from the WAL archive and served by achd with its sealing key; writes go on" \
    "($((SECONDS - started)) s)"
