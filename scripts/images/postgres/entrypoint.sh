#!/bin/sh
# Makes the cluster on first start from DB_USER, DB_PASSWORD and DB_NAME, then runs PostgreSQL in the foreground
# as user postgres. The cluster is made beside its final place and renamed into it last, so a start interrupted
# half-way is made again rather than taken for a whole one.
set -eu

DATA=${SLIPWAY_DATA:-/var/lib/slipway-data}
PGDATA=$DATA/pgdata
: "${DB_USER:?set DB_USER}" "${DB_PASSWORD:?set DB_PASSWORD}" "${DB_NAME:?set DB_NAME}"
# Names are written into SQL as identifiers below: letters, digits and underscore only, as Slipway makes them.
for v in "$DB_USER" "$DB_NAME"; do
  case $v in *[!A-Za-z0-9_]* | [0-9]*) echo "slipway-entrypoint: '$v' is not a plain identifier" >&2; exit 64 ;; esac
done

as_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

install -d -o postgres -g postgres -m 0755 /run/postgresql
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  NEW=$DATA/pgdata.init
  rm -rf "$NEW"
  install -d -o postgres -g postgres -m 0700 "$NEW"
  # The superuser postgres logs in only from inside the container as that OS user (peer); every other role with a
  # scram-sha-256 password, from anywhere.
  as_postgres initdb -D "$NEW" -U postgres --encoding=UTF8 --locale=C.UTF-8 --auth-local=peer \
    --auth-host=scram-sha-256 >/dev/null
  cat >"$NEW/pg_hba.conf" <<HBA
local all postgres              peer
local all all                   scram-sha-256
host  all all 0.0.0.0/0         scram-sha-256
host  all all ::/0              scram-sha-256
HBA
  as_postgres pg_ctl -D "$NEW" -o "-c listen_addresses=''" -w start >/dev/null
  # psql quotes :'pw' and :"user" itself: the password never becomes part of the command's text.
  as_postgres psql -X -q -v ON_ERROR_STOP=1 -v user="$DB_USER" -v pw="$DB_PASSWORD" -v db="$DB_NAME" postgres <<'SQL'
CREATE ROLE :"user" LOGIN PASSWORD :'pw';
CREATE DATABASE :"db" OWNER :"user";
SQL
  as_postgres pg_ctl -D "$NEW" -m fast -w stop >/dev/null
  mv "$NEW" "$PGDATA"
  echo "slipway-entrypoint: made the cluster with database $DB_NAME owned by $DB_USER"
fi
# A volume made on another host may carry other numeric owners: the data is postgres's here.
[ "$(stat -c %U "$PGDATA")" = postgres ] || chown -R postgres:postgres "$PGDATA"
chmod 0700 "$PGDATA"
exec setpriv --reuid=postgres --regid=postgres --init-groups postgres -D "$PGDATA" -c listen_addresses='*' \
  -c unix_socket_directories=/run/postgresql -c jit=off
