#!/usr/bin/env bash
# Proves that the README's two commands,
#   utils/setup.sh build && utils/run-tests.sh build
# work on a bare Debian 12 (bookworm), not only on a machine that already has
# the right packages installed.
#
# Usage: utils/check-fresh.sh [WORKDIR]     (as root; WORKDIR: /var/tmp/gc-fresh)
#
# It debootstraps a minbase bookworm root from the mirror this machine's own
# apt configuration uses (cached as WORKDIR/bookworm-minbase.tar; delete it to
# debootstrap again), unpacks a pristine copy to WORKDIR/root, clones the
# checkout's committed HEAD (what CI sees; uncommitted changes are not
# checked) into /src/gc from outside, so the root gets no extra tools, mounts
# /proc, /sys, /dev, /dev/pts and /dev/shm, and runs the two commands in the
# chroot as root with a clean environment. Nothing of the host's checkout, its
# build or ../shared goes in. It prints the test run's last line, each
# command's time and the Debian version, logs everything to
# WORKDIR/check-fresh.log (each command's output also to WORKDIR/setup.out and
# WORKDIR/run-tests.out) and exits with the test run's status (the setup's if
# that failed, 2 if the check itself could not be set up). Ctrl-C kills what
# runs in the root and unmounts; the root stays for a look until the next run.
set -euo pipefail

suite=bookworm
die() { echo "check-fresh: $*" >&2; exit 2; }

[ $# -le 1 ] || die "usage: utils/check-fresh.sh [WORKDIR]"
[ "$(id -u)" -eq 0 ] || die "must run as root: debootstrap, mount and chroot need it"
src=$(cd "$(dirname "$0")/.." && pwd)
workdir=$(realpath -m "${1:-/var/tmp/gc-fresh}")
# findmnt escapes blanks in its output, and the mount checks below compare
# paths as strings, so keep WORKDIR simple rather than half-handle it.
[[ $workdir =~ ^/[A-Za-z0-9._/-]+$ ]] || die "WORKDIR must be an absolute path of [A-Za-z0-9._/-]: $workdir"
case $workdir in /|/bin|/boot|/dev|/etc|/home|/lib*|/proc|/root|/run|/sbin|/sys|/tmp|/usr|/var|/var/tmp)
  die "refusing WORKDIR $workdir: it is deleted from on re-runs, give a folder of its own" ;;
esac
root=$workdir/root
tarball=$workdir/$suite-minbase.tar
log=$workdir/check-fresh.log
mkdir -p "$workdir"
: >"$log"
exec > >(tee -a "$log") 2>&1

# --- mounts: everything under $root is ours to unmount; never delete a root
# that still has a mount in it (a bind of the host's /dev or /sys would go too).
mounts_under() { # deepest first, so children go before their parents
  findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}
release_root() {
  local dir=$1 p m
  [ -d "$dir" ] || return 0
  # Processes left in the chroot (after Ctrl-C or a failure) would keep its
  # mounts busy; they are the ones this script started there.
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$dir" ] && { kill -KILL "${p#/proc/}" 2>/dev/null || true; }
  done
  for m in $(mounts_under "$dir"); do
    umount "$m" 2>/dev/null || umount -l "$m" || true
  done
  [ -z "$(mounts_under "$dir")" ] || { echo "check-fresh: still mounted under $dir:" >&2; mounts_under "$dir" >&2; return 1; }
}
remove_root() { # removes $1 only once nothing is mounted under it
  local dir=$1
  [ -e "$dir" ] || return 0
  release_root "$dir" || die "not removing $dir: something is still mounted under it"
  rm -rf --one-file-system "$dir"
}
# shellcheck disable=SC2317  # called by the EXIT trap
on_exit() {
  local rc=$?
  release_root "$root" || echo "check-fresh: unmount these by hand before deleting $root" >&2
  exit "$rc"
}
trap on_exit EXIT
# set -e would otherwise stop the script without a word.
trap 'echo "check-fresh: line $LINENO failed: $BASH_COMMAND" >&2' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# --- the mirror: the URI of this machine's apt source for $suite, so the root
# comes from where this machine's packages come from (no host name in here).
host_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" 'BEGIN { RS = ""; FS = "\n" }
      {
        uris = ""; has_suite = 0; is_deb = 0; enabled = 1
        for (i = 1; i <= NF; i++) {
          line = $i
          if (line ~ /^#/) continue
          key = tolower(line); sub(/:.*/, "", key)
          val = line; sub(/^[^:]*:[ \t]*/, "", val)
          n = split(val, w, /[ \t]+/)
          if (key == "uris") uris = w[1]
          else if (key == "suites") { for (j = 1; j <= n; j++) if (w[j] == suite) has_suite = 1 }
          else if (key == "types") { for (j = 1; j <= n; j++) if (w[j] == "deb") is_deb = 1 }
          else if (key == "enabled" && tolower(w[1]) == "no") enabled = 0
        }
        if (uris != "" && has_suite && is_deb && enabled) print uris
      }' "$f"
  done
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    sed -n -E "s/^[[:space:]]*deb[[:space:]]+(\[[^]]*\][[:space:]]+)?([^[:space:]]+)[[:space:]]+${suite}[[:space:]].*/\2/p"
}
mirror=$(host_mirror | sed -n 1p)
[ -n "$mirror" ] || die "no apt source for $suite in /etc/apt/sources.list{,.d/*.sources,.d/*.list}"
case $mirror in http://*|https://*) ;; *) die "mirror $mirror is not http(s); debootstrap cannot use it here" ;; esac

# --- the pristine root, cached as a tarball of a fresh debootstrap.
if [ ! -f "$tarball" ] || [ "$(cat "$tarball.mirror" 2>/dev/null)" != "$mirror" ]; then
  if ! command -v debootstrap >/dev/null; then
    echo "check-fresh: installing debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
  fi
  include=()
  # A bare Debian 12 that reaches its mirror over https has ca-certificates
  # (the installer adds it); minbase does not. It is apt's transport, not a
  # dependency of gc, so it is the one addition allowed, and only then.
  if grep -rqs 'https://' /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; then
    include=(--include=ca-certificates)
  fi
  fresh=$workdir/debootstrap.tmp
  remove_root "$fresh"
  echo "check-fresh: debootstrap --variant=minbase $suite from $mirror"
  debootstrap --variant=minbase "${include[@]}" "$suite" "$fresh" "$mirror" >"$workdir/debootstrap.log" 2>&1 ||
    { tail -20 "$workdir/debootstrap.log"; remove_root "$fresh"; die "debootstrap failed, see $workdir/debootstrap.log"; }
  release_root "$fresh" || die "debootstrap left mounts under $fresh"
  tar -C "$fresh" --numeric-owner -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  echo "$mirror" >"$tarball.mirror"
  remove_root "$fresh"
fi

[ ! -e "$root" ] || echo "check-fresh: removing the previous run's root"
remove_root "$root"
mkdir -p "$root"
tar -C "$root" --numeric-owner -xpf "$tarball"

# --- this machine's apt sources (bookworm-updates and security too) and the
# keyrings they name, and its resolver. Only apt's sources: not its other
# settings, not its packages.
rm -f "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
  [ -f "$f" ] || continue
  cp "$f" "$root$f"
  for key in $(sed -n -E -e 's/^Signed-By:[[:space:]]*(\/[^[:space:]]+).*/\1/Ip' \
                         -e 's/.*\[[^]]*signed-by=(\/[^] ]+).*/\1/p' "$f"); do
    [ -f "$key" ] || die "$f names keyring $key, which is not here"
    mkdir -p "$root$(dirname "$key")"
    cp "$key" "$root$key"
  done
done
rm -f "$root/etc/resolv.conf"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
# The host's own certificate authorities (a proxy between this network and
# PyPI signs with one) and its pip configuration (which points pip at the
# system's bundle), so that pip in the root reaches PyPI as the host does;
# the ca-certificates package setup.sh installs adds them to that bundle. A
# bare Debian on an open network has neither and needs neither.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
[ ! -f /etc/pip.conf ] || cp /etc/pip.conf "$root/etc/pip.conf"

# --- the source: the committed HEAD, cloned from outside the root.
rev=$(git -C "$src" rev-parse HEAD)
[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] ||
  echo "check-fresh: note: $src has uncommitted changes; only the committed HEAD is checked"
mkdir -p "$root/src"
git clone --quiet --no-hardlinks "$src" "$root/src/gc"
git -C "$root/src/gc" -c advice.detachedHead=false checkout --quiet --detach "$rev"

# --- the kernel file systems a booted Debian has. /dev is a tmpfs of its own
# with the usual nodes, not a bind of the host's, so nothing in the root
# points into the host's /dev.
mount -t proc proc "$root/proc"
mount -t sysfs -o ro sysfs "$root/sys"
mount -t tmpfs -o mode=755,nosuid,size=16m gc-fresh-dev "$root/dev"
for node in "null c 1 3" "zero c 1 5" "full c 1 7" "random c 1 8" "urandom c 1 9" "tty c 5 0"; do
  read -r name type major minor <<<"$node"
  mknod -m 666 "$root/dev/$name" "$type" "$major" "$minor" || die "cannot mknod /dev/$name in the root"
done
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
# Python's multiprocessing (lit) needs POSIX semaphores, which live in /dev/shm.
mount -t tmpfs -o mode=1777,nosuid,nodev gc-fresh-shm "$root/dev/shm"
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"
# /tmp stays the root's own directory, as on a default Debian 12 install.

debian="Debian $(cat "$root/etc/debian_version") ($suite)"
echo "check-fresh: $debian minbase in $root, source $(git -C "$src" log -1 --format='%h %s' "$rev")"

# in_root CMD OUT: runs one shell command in the root, as root, with a clean
# environment, its output to OUT and on screen. It runs in the background
# because bash defers a trap until a foreground command ends, and apt/dpkg
# ignore Ctrl-C: wait returns at once, and on_exit kills what is in the root.
in_root() {
  local pid rc=0
  : >"$2"
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    /bin/bash -c "$1" >"$2" 2>&1 &
  pid=$!
  tail -n +1 -f --pid="$pid" "$2" &  # ends once it has printed the last of OUT
  wait "$pid" || rc=$?
  wait $!
  return "$rc"
}
fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

echo "check-fresh: == utils/setup.sh build"
t0=$SECONDS
setup_rc=0
in_root 'cd /src/gc && utils/setup.sh build' "$workdir/setup.out" || setup_rc=$?
setup_s=$((SECONDS - t0))
if [ "$setup_rc" -ne 0 ]; then
  echo "check-fresh: $debian"
  echo "check-fresh: utils/setup.sh build FAILED (exit $setup_rc) after $(fmt $setup_s); log: $log"
  exit "$setup_rc"
fi

echo "check-fresh: == utils/run-tests.sh build"
t0=$SECONDS
tests_rc=0
in_root 'cd /src/gc && utils/run-tests.sh build' "$workdir/run-tests.out" || tests_rc=$?
tests_s=$((SECONDS - t0))
result=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$workdir/run-tests.out" | tail -1 || true)

echo "check-fresh: $debian, source $(git -C "$src" log -1 --format=%h "$rev")"
echo "check-fresh: utils/setup.sh build      $(fmt $setup_s)"
echo "check-fresh: utils/run-tests.sh build  $(fmt $tests_s) (exit $tests_rc)"
echo "check-fresh: ${result:-no result line: the test run ended early}"
echo "check-fresh: log: $log"
exit "$tests_rc"
