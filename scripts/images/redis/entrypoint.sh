#!/bin/sh
# Writes Redis's configuration from DB_PASSWORD on every start (the password of the default user) and runs Redis in
# the foreground as user redis, with its snapshots in the volume.
set -eu

DATA=${SLIPWAY_DATA:-/var/lib/slipway-data}
DIR=$DATA/redis
: "${DB_PASSWORD:?set DB_PASSWORD}"
# The password is written into the configuration file: URL-safe characters only, as Slipway makes them, so it needs
# no quoting there.
case $DB_PASSWORD in *[!A-Za-z0-9._~-]*)
  echo "slipway-entrypoint: the password may hold only letters, digits and . _ ~ -" >&2; exit 64 ;;
esac

install -d -o redis -g redis -m 0750 "$DIR"
[ "$(stat -c %U "$DIR")" = redis ] || chown -R redis:redis "$DIR"
# RDB snapshots only (no AOF): a backup and a restore are then one file, dump.rdb. Redis's own save points bound
# what a crash loses (a minute under heavy writes, an hour when idle); a stop (SIGTERM) saves everything first.
# The file is the server's alone: it holds the password.
CONF=/run/slipway-redis.conf
install -m 0600 -o redis -g redis /dev/null "$CONF"
cat >"$CONF" <<CONF
bind * -::*
port 6379
protected-mode no
daemonize no
logfile ""
dir $DIR
dbfilename dump.rdb
appendonly no
save 3600 1 300 100 60 10000
requirepass $DB_PASSWORD
CONF
exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$CONF"
