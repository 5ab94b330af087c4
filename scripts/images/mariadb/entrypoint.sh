#!/bin/sh
# Makes the data directory on first start from DB_USER, DB_PASSWORD and DB_NAME, then runs MariaDB in the foreground
# as user mysql. It is made beside its final place and renamed into it last, so a start interrupted half-way is made
# again rather than taken for a whole one.
set -eu

DATA=${SLIPWAY_DATA:-/var/lib/slipway-data}
DATADIR=$DATA/mysql
: "${DB_USER:?set DB_USER}" "${DB_PASSWORD:?set DB_PASSWORD}" "${DB_NAME:?set DB_NAME}"
# All three are written into SQL below: identifiers of letters, digits and underscore, and a password of URL-safe
# characters, as Slipway makes them, so none can end the quotes around it.
for v in "$DB_USER" "$DB_NAME"; do
  case $v in *[!A-Za-z0-9_]* | [0-9]*) echo "slipway-entrypoint: '$v' is not a plain identifier" >&2; exit 64 ;; esac
done
case $DB_PASSWORD in *[!A-Za-z0-9._~-]*)
  echo "slipway-entrypoint: the password may hold only letters, digits and . _ ~ -" >&2; exit 64 ;;
esac

# The server's own options, whatever Debian's configuration files say (errors go to stderr there): data and socket
# where we want them, every interface, and no reverse lookups of clients (a bridge network has no reverse DNS to wait for).
server_options() {
  echo --user=mysql --datadir="$1" --socket=/run/mysqld/mysqld.sock --pid-file=/run/mysqld/mysqld.pid \
    --skip-name-resolve
}

install -d -o mysql -g mysql -m 0755 /run/mysqld
if [ ! -d "$DATADIR/mysql" ]; then
  NEW=$DATA/mysql.init
  rm -rf "$NEW"
  install -d -o mysql -g mysql -m 0750 "$NEW"
  # root logs in only from inside the container as the OS user root (unix_socket); the app's user with its password.
  mariadb-install-db --user=mysql --datadir="$NEW" --skip-test-db --auth-root-authentication-method=socket \
    >/dev/null
  # shellcheck disable=SC2046 # the options are plain words
  mariadbd $(server_options "$NEW") --skip-networking &
  pid=$!
  i=0
  until mariadb-admin --socket=/run/mysqld/mysqld.sock ping >/dev/null 2>&1; do
    i=$((i + 1))
    if [ "$i" -gt 120 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "slipway-entrypoint: the server did not start to be set up" >&2; exit 1
    fi
    sleep 0.5
  done
  mariadb --socket=/run/mysqld/mysqld.sock <<SQL
CREATE DATABASE \`$DB_NAME\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;
CREATE USER '$DB_USER'@'%' IDENTIFIED BY '$DB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$DB_NAME\`.* TO '$DB_USER'@'%';
SQL
  mariadb-admin --socket=/run/mysqld/mysqld.sock shutdown
  wait "$pid" || true
  mv "$NEW" "$DATADIR"
  echo "slipway-entrypoint: made database $DB_NAME for user $DB_USER"
fi
[ "$(stat -c %U "$DATADIR")" = mysql ] || chown -R mysql:mysql "$DATADIR"
# shellcheck disable=SC2046 # the options are plain words
exec mariadbd $(server_options "$DATADIR") --bind-address=* --port=3306
