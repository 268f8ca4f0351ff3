#!/usr/bin/env bash
# Installs what headroom's acceptance suite needs beyond Go, and only what is missing:
#   - nginx and haproxy, Debian's packages. The suite runs instances of its own, so the
#     system services the packages bring are kept from starting while they install, and
#     are stopped and disabled whenever this script finds them running or enabled.
#   - node and npm, Debian's nodejs and npm, when there is no node.
#   - acceptance/express/node_modules: npm ci, from the committed package-lock.json.
# It prints one line for each thing, found or installed, and exits non-zero saying what
# could not be installed. Run it as root, or as a user with password-less sudo. Running
# it again changes nothing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
log=$(mktemp)
made_policy=""
cleanup() {
	rm -f "$log"
	if [ -n "$made_policy" ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
}
trap cleanup EXIT

fail() {
	echo "install.sh: $*" >&2
	exit 1
}

# as_root runs a command as root: directly when this is root, else with sudo.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo -n "$@"
	else
		fail "'$*' needs root, and there is no sudo: run acceptance/install.sh as root"
	fi
}

# find_program prints the path of program $1 from PATH or the sbin directories
# (Debian puts nginx and haproxy in /usr/sbin, which a user's PATH may lack).
find_program() {
	local dir
	if command -v "$1" 2>/dev/null; then return 0; fi
	for dir in /usr/sbin /usr/local/sbin; do
		if [ -x "$dir/$1" ]; then
			echo "$dir/$1"
			return 0
		fi
	done
	return 1
}

# at_least says whether version $1 is $2 or later.
at_least() {
	[ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n 1)" = "$2" ]
}

# apt_install installs Debian packages, refreshing the package lists only when the
# first try fails (they may be missing or stale on a fresh machine).
apt_install() {
	# invoke-rc.d asks policy-rc.d whether a package may start its service: 101 says
	# no. An existing policy is left as it is.
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		printf '#!/bin/sh\n# Made by acceptance/install.sh while it installs; it removes it.\nexit 101\n' |
			as_root tee /usr/sbin/policy-rc.d >/dev/null
		as_root chmod 755 /usr/sbin/policy-rc.d
		made_policy=yes
	fi
	export DEBIAN_FRONTEND=noninteractive
	if ! as_root apt-get install -y -q --no-install-recommends "$@" >"$log" 2>&1; then
		as_root apt-get update -q >>"$log" 2>&1 ||
			fail "apt-get update failed, so $* could not be installed:"$'\n'"$(tail -n 20 "$log")"
		as_root apt-get install -y -q --no-install-recommends "$@" >>"$log" 2>&1 ||
			fail "apt-get install -y $* failed:"$'\n'"$(tail -n 20 "$log")"
	fi
}

# quiet_service stops system service $1 when it runs and disables it when it is
# enabled, so it holds no port and no CPU; it prints what it found and did.
quiet_service() {
	local name=$1 done=()
	if command -v service >/dev/null 2>&1 && service "$name" status >/dev/null 2>&1; then
		as_root service "$name" stop >"$log" 2>&1 ||
			fail "could not stop the system $name service:"$'\n'"$(tail -n 5 "$log")"
		done+=("stopped")
	fi
	if [ -d /run/systemd/system ]; then
		if systemctl is-enabled --quiet "$name" 2>/dev/null; then
			as_root systemctl disable --quiet "$name" >"$log" 2>&1 ||
				fail "could not disable the system $name service:"$'\n'"$(tail -n 5 "$log")"
			done+=("disabled")
		fi
	elif compgen -G "/etc/rc[2-5].d/S*$name" >/dev/null && command -v update-rc.d >/dev/null 2>&1; then
		as_root update-rc.d "$name" disable >"$log" 2>&1 ||
			fail "could not disable the system $name service:"$'\n'"$(tail -n 5 "$log")"
		done+=("disabled")
	fi
	if [ ${#done[@]} -eq 0 ]; then
		echo "its system service is not running nor enabled"
	else
		echo "its system service was ${done[*]}"
	fi
}

# server installs Debian package $1 for program $2 unless it is there, checks it is
# version $3 or later (what the suite's configuration uses), and quiets its service.
server() {
	local package=$1 program=$2 least=$3 path version service_state how="found"
	if ! path=$(find_program "$program"); then
		apt_install "$package"
		path=$(find_program "$program") || fail "apt-get installed $package but there is no $program"
		how="installed"
	fi
	case $program in
	nginx) version=$("$path" -v 2>&1 | sed -n 's|^nginx version: nginx/\([0-9.]*\).*|\1|p') ;;
	haproxy) version=$("$path" -v 2>&1 | sed -n 's|^HAProxy version \([0-9.]*\).*|\1|p') ;;
	esac
	[ -n "$version" ] || fail "cannot tell $path's version"
	at_least "$version" "$least" ||
		fail "$path is $program $version; the suite needs $least or later (Debian 12's $package is)"
	service_state=$(quiet_service "$program")
	echo "$program: $how $path, version $version; $service_state"
}

server nginx nginx 1.15.7   # limit_req's delay=
server haproxy haproxy 2.2  # http-request return

how="found"
if ! node=$(find_program node); then
	apt_install nodejs npm
	node=$(find_program node) || fail "apt-get installed nodejs but there is no node"
	how="installed"
fi
node_version=$("$node" --version)
at_least "${node_version#v}" 18 || fail "$node is Node.js $node_version; Express 5 needs 18 or later"
npm=$(find_program npm) || fail "$node is there but npm is not: install the npm that goes with Node.js $node_version"
echo "node: $how $node $node_version, npm $("$npm" --version)"

cd "$here/express"
versions() {
	"$node" -p 'const v = (p) => require(`./node_modules/${p}/package.json`).version; `express-rate-limit ${v("express-rate-limit")}, express ${v("express")}`'
}
# npm writes node_modules/.package-lock.json last: newer than the lock and a clean
# npm ls mean the tree is the one the lock describes.
if [ -f node_modules/.package-lock.json ] && [ node_modules/.package-lock.json -nt package-lock.json ] &&
	"$npm" ls --all >/dev/null 2>&1; then
	echo "acceptance/express/node_modules: found, as package-lock.json has it ($(versions))"
else
	"$npm" ci --no-audit --no-fund --ignore-scripts >"$log" 2>&1 ||
		fail "npm ci in acceptance/express failed:"$'\n'"$(tail -n 20 "$log")"
	echo "acceptance/express/node_modules: installed by npm ci ($(versions))"
fi
