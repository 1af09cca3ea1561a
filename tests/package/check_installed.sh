#!/usr/bin/env bash
# Installs the Debian package ./run package built, checks it as a user would find it, and purges
# it: every path docs/install.md's table names is there, /usr/bin/idemctl answers --version as
# the build does, the system user exists, and the installed units pass systemd-analyze (verify
# with their man pages; security offline). Run as root: ./run package --install-test.
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=$1
fail() { echo "check_installed: $*" >&2; exit 1; }
purge() { dpkg --purge idem >/dev/null 2>&1 || true; }

dpkg-query -W -f='${Status}' idem 2>/dev/null | grep -q "install ok installed" &&
  fail "idem is installed already; remove it first (this check purges what it installs)"
trap purge EXIT
dpkg -i "$deb" >/dev/null || fail "dpkg -i $deb failed"

# The doc's table: one row per path, the path in backticks in the first column.
paths=$(grep -oE '^\| `/[^`]+`' docs/install.md | tr -d '|` ')
[ -n "$paths" ] || fail "no paths found in docs/install.md"
for p in $paths; do
  [ -e "$p" ] || fail "docs/install.md names $p, which the package did not install"
done
echo "check_installed: the $(wc -w <<<"$paths") paths docs/install.md names are installed"

version=$(/usr/bin/idemctl --version)
[[ "$version" =~ ^idemctl\ [0-9]+\.[0-9]+\.[0-9]+\ \(schema\ [0-9]+\)$ ]] || fail "idemctl --version: $version"
[ "$(dpkg-query -W -f='${Version}' idem)" = "$(sed -E 's/^idemctl ([^ ]+).*/\1/' <<<"$version")" ] ||
  fail "the package's version is not idemctl's ($version)"
console=$(env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM /usr/bin/idem-console --version)
[ "${console#idem-console }" = "${version#idemctl }" ] || fail "idem-console --version: $console"
echo "check_installed: $version; $console"

getent passwd idem >/dev/null || fail "no system user idem"
[ "$(stat -c '%U:%G %a' /etc/idem)" = "root:idem 750" ] || fail "/etc/idem is $(stat -c '%U:%G %a' /etc/idem)"

units=(/usr/lib/systemd/system/idem-proxy@.service /usr/lib/systemd/system/idem-sweep.service)
# An instance of the template, as systemctl would load it; warnings are findings too.
findings=$(cd /usr/lib/systemd/system && systemd-analyze verify idem-proxy@main.service idem-sweep.service \
  idem-sweep.timer 2>&1) || fail "systemd-analyze verify: $findings"
[ -z "$findings" ] || fail "systemd-analyze verify: $findings"
for u in "${units[@]}"; do
  systemd-analyze security --offline=true --threshold=20 --no-pager "$u" >/dev/null ||
    fail "systemd-analyze security: $u is exposed above 2.0 (threshold 20 on its 0-100 scale)"
done
echo "check_installed: the units pass systemd-analyze verify and security (exposure at most 2.0)"

dpkg --purge idem >/dev/null || fail "dpkg --purge failed"
[ ! -e /usr/bin/idemctl ] && [ ! -e /etc/idem ] || fail "purge left /usr/bin/idemctl or /etc/idem"
echo "check_installed: purged; nothing left in /usr/bin or /etc/idem"
