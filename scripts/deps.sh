#!/usr/bin/env bash
# What the tests need from Debian's packages, by the kind SKIP names
# (internal/testenv): `make deps` installs the missing ones (as root);
# `scripts/deps.sh --missing` prints one "kind package" line for each one
# missing and installs nothing.
set -euo pipefail

missing() {
	command -v redis-server >/dev/null 2>&1 || echo "redis redis-server"
	command -v redis-cli >/dev/null 2>&1 || echo "redis redis-tools"
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || echo "postgres postgresql"
	command -v node >/dev/null 2>&1 || echo "node nodejs"
	command -v npm >/dev/null 2>&1 || echo "node npm"
	if [ -n "${BENCHRIG_CHROMIUM:-}" ]; then # the browser tests' own choice
		command -v "$BENCHRIG_CHROMIUM" >/dev/null 2>&1 || echo "browser chromium"
	else
		command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || echo "browser chromium"
	fi
	# nginx-light has the http2 module: the https and HTTP/2 driver tests
	# start their own with a config in a temp dir.
	[ -x /usr/sbin/nginx ] || command -v nginx >/dev/null 2>&1 || echo "nginx nginx-light"
	command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || echo "netns iproute2"
	command -v setsid >/dev/null 2>&1 || echo "tools util-linux"
}

if [ "${1:-}" = "--missing" ]; then
	missing
	exit 0
fi

pkgs=$(missing | awk '{print $2}' | sort -u | tr '\n' ' ')
if [ -z "${pkgs// /}" ]; then
	echo "deps: every Debian package the tests need is installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing $pkgs— as root: make deps (apt-get install -y $pkgs)" >&2
	exit 1
fi
echo "deps: installing $pkgs"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs >/dev/null
# Debian's postinst may start a system redis-server or nginx; the tests
# start their own on free ports, so a running one does no harm.
