#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build, or reuse, the Debian 13 (trixie) root of the Debian 13 lanes: a
# debootstrap of trixie holding its QEMU, libvirt, mdevctl and udev, the
# build and packaging tools (gcc-14, sparse, dkms, debhelper, lintian), Nova and
# two kernels with their headers and sources: trixie's newest 6.12 and the
# newest 7.x of trixie-backports. Both are found by name at build time.
# The VM boots those kernels with this root as the guest's root file system
# (GPUVIRT_VM_ROOT of selftests/vm-run.sh; scripts/kver.sh 13-6.12 and 7
# name the releases), and builds for them run in it (--run).
#
# Usage: scripts/trixie-root.sh [--print | --status | --run [CMD...]]
#   (none)    build it unless the cache has it, then print the root's path
#   --print   print the root's path for the current recipe, build nothing
#   --status  print "cached ROOT" or "missing ROOT"; exit 1 when missing
#   --run     build it if needed, then run CMD (default: bash) inside it, as
#             root, with the repo bind-mounted at its own path as the working
#             directory and /proc, /sys and /dev mounted. The root is seen
#             through an overlay on a tmpfs, so whatever CMD writes outside
#             the repo (dpkg -i, files in /etc) is gone when it exits and
#             the cache never changes
#
# The packages come from the Debian archive that the host's apt sources name
# (/etc/apt/sources.list and sources.list.d/*.list, *.sources), and the root's
# own sources list trixie, trixie-updates, trixie-backports and, when the
# host names a security archive, trixie-security. GPUVIRT_TRIXIE_MIRROR and
# GPUVIRT_TRIXIE_SECURITY_MIRROR override what the host's sources say.
#
# The cache lives outside the clone, in
#   ${GPUVIRT_TRIXIE_ROOT_CACHE:-/var/cache/gpuvirt/trixie-root}/<hash>/
# where <hash> covers the package list and this script's recipe, so an
# edited list builds a new root and anything else reuses the old one. The
# kernels are those that were newest when it was built: remove the directory
# to take newer ones. A directory holds:
#   root/            the trixie root (what --print names); no apt caches
#   kernels          "13-6.12 RELEASE" and "7 RELEASE", the kernels in root/
#   sparse           "RELEASE CHECK": the sparse each kernel's builds use
#   packages         dpkg-query's list of the root's packages and versions
#   sources          the root's apt sources
#   build.log        the build's output; build-seconds how long it took
#   done             written last: the directory is complete
#
# The heavy steps run under nice -n 19: about ten minutes and 2 GB.
# Concurrent callers wait on a lock per key. Old keys are left alone;
# remove them by hand.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
CACHE=${GPUVIRT_TRIXIE_ROOT_CACHE:-/var/cache/gpuvirt/trixie-root}
SUITE=trixie
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# Bump when the recipe below changes in a way that changes the result.
RECIPE=2

# What the root holds besides debootstrap's minbase and the kernels:
# - the guest's user land for the VM tests: QEMU, libvirt's daemon, QEMU
#   driver and clients (the libvirt-qemu user comes with -system), mdevctl,
#   udev, kmod, pciutils (lspci, setpci), procps, python3 with yaml and
#   jsonschema (the YNL CLI);
# - the build: gcc-14 (trixie's default compiler, that its kernels were
#   built with), make, sparse, libelf-dev, bc, flex and bison for kernel
#   builds, pkg-config, libmnl-dev and libyaml-dev for gpuvirtctl, cppcheck;
# - the Debian packages: dkms, dh-dkms, debhelper, lintian;
# - xz-utils, zstd and cpio, which kernel modules and packages are packed with;
# - OpenStack Nova's compute code and libvirt's Python binding, for
#   selftests/vm/nova.sh on Debian 13's Nova.
PACKAGES=(qemu-system-x86 libvirt-daemon libvirt-daemon-driver-qemu libvirt-daemon-system
	  libvirt-clients mdevctl udev kmod pciutils procps python3 python3-yaml
	  python3-jsonschema
	  build-essential gcc-14 make sparse libelf-dev libssl-dev bc flex bison
	  pkg-config libmnl-dev libyaml-dev cppcheck
	  dkms dh-dkms debhelper lintian
	  xz-utils zstd cpio
	  python3-nova python3-libvirt)

CACHE_WHO=trixie-root
# shellcheck source=scripts/lib/cache.sh
. "$SRC/scripts/lib/cache.sh"
cache_mode --with-run "${1:-}"
[ $mode = run ] && shift
[ $mode = run ] || [ $# -le 1 ] || die "unexpected argument '$2' (see --help)"

hash=$({
	echo "recipe $RECIPE suite $SUITE"
	printf '%s\n' "${PACKAGES[@]}"
} | sha256sum | cut -c1-12)
dir=$CACHE/$hash
root=$dir/root

cache_answer "$dir" "$root"

# Run CMD in ROOT (--run): a throwaway overlay on the cached root, the repo
# at its own path, as the guest of selftests/vm-run.sh sees them.
run_in_root() {
	[ "$(id -u)" -eq 0 ] || die "--run needs root (chroot, mounts)"
	case $SRC in
	/|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*) die "cannot show the repo $SRC in the root" ;;
	esac
	[ $# -gt 0 ] || set -- bash
	# shellcheck disable=SC2016 # expanded by the namespace's sh
	exec unshare -m -- /bin/sh -c '
		set -e
		root=$1 repo=$2; shift 2
		t=$(mktemp -d /tmp/trixie-root.XXXXXX)
		mount -t tmpfs -o mode=700 tmpfs "$t"
		mkdir "$t/upper" "$t/work" "$t/m"
		mount -t overlay overlay \
			-o "lowerdir=$root,upperdir=$t/upper,workdir=$t/work" "$t/m"
		mount -t proc proc "$t/m/proc"
		mount -t sysfs sysfs "$t/m/sys"
		mount --rbind /dev "$t/m/dev"
		for d in tmp var/tmp run; do
			mount -t tmpfs -o mode=1777 tmpfs "$t/m/$d"
		done
		mkdir -p "$t/m$repo"
		mount --bind "$repo" "$t/m$repo"
		exec chroot "$t/m" /usr/bin/env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 TMPDIR=/tmp \
			/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$repo" "$@"
	' trixie-root "$root" "$SRC" "$@"
}

if [ -e "$dir/done" ]; then
	[ $mode = run ] && run_in_root "$@"
	echo "$root"
	exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the root needs root (debootstrap, chroot)"
command -v debootstrap >/dev/null ||
	die "debootstrap not found; install it (scripts/deps.sh)"
[ -r "$KEYRING" ] || die "no $KEYRING; install debian-archive-keyring"
command -v gpg >/dev/null ||
	die "gpg not found (it reads $KEYRING); install gpg (scripts/deps.sh)"
# bookworm's keyring holds trixie's keys; an older one does not.
gpg --no-default-keyring --keyring "$KEYRING" --list-keys 2>/dev/null |
	grep -q "Debian Archive Automatic Signing Key (13/trixie)" ||
	die "$KEYRING has no key of Debian 13; upgrade debian-archive-keyring"

# "URI SUITE" for each deb line of the host's apt sources, in both formats.
host_sources() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		# deb [ options ] URI SUITE COMPONENT...
		sed 's/#.*//' "$f" | awk '$1 == "deb" {
			i = 2
			if ($i ~ /^\[/) {
				while (i <= NF && $i !~ /\]$/)
					i++
				i++
			}
			if (i + 1 <= NF)
				print $i, $(i + 1)
		}'
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		# deb822 stanzas: Types, URIs, Suites and Enabled fields.
		awk '
		function flush(   n, m, i, j, u, s) {
			if (types ~ /(^|[ \t])deb([ \t]|$)/ && tolower(enabled) != "no") {
				n = split(uris, u, /[ \t]+/)
				m = split(suites, s, /[ \t]+/)
				for (i = 1; i <= n; i++)
					for (j = 1; j <= m; j++)
						if (u[i] != "" && s[j] != "")
							print u[i], s[j]
			}
			types = uris = suites = enabled = key = ""
		}
		/^#/ { next }
		/^[ \t]*$/ { flush(); next }
		/^[ \t]/ {
			v = $0
			sub(/^[ \t]+/, "", v)
			if (key == "uris")
				uris = uris " " v
			else if (key == "suites")
				suites = suites " " v
			next
		}
		{
			key = tolower($0)
			sub(/:.*/, "", key)
			v = $0
			sub(/^[^:]*:[ \t]*/, "", v)
			sub(/[ \t]+$/, "", v)
			if (key == "types") types = v
			else if (key == "uris") uris = v
			else if (key == "suites") suites = v
			else if (key == "enabled") enabled = v
		}
		END { flush() }' "$f"
	done
}

# The archive is the URI of a Debian suite that is not a security suite;
# the security archive, that of a -security (or old /updates) suite.
codenames='(buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable)'
sources=$(host_sources)
mirror=${GPUVIRT_TRIXIE_MIRROR:-$(echo "$sources" |
	awk -v re="^$codenames(-updates|-backports|-proposed-updates)?\$" \
		'$2 ~ re && $1 !~ /-security\/?$/ { print $1; exit }')}
security=${GPUVIRT_TRIXIE_SECURITY_MIRROR:-$(echo "$sources" |
	awk -v re="^$codenames(-security|\\/updates)\$" '$2 ~ re { print $1; exit }')}
[ -n "$mirror" ] ||
	die "no Debian archive in the host's apt sources; set GPUVIRT_TRIXIE_MIRROR=URI"
mirror=${mirror%/}
security=${security%/}

cache_lock "$dir"
if [ -e "$dir/done" ]; then
	[ $mode = run ] && run_in_root "$@"
	echo "$root"
	exit 0
fi

t0=$(date +%s)
# A failed build may have left its chroot mounts behind only in its own
# mount namespace (see inroot), so the directory can go as it is.
rm -rf "$dir"
mkdir -p "$dir"
log=$dir/build.log
echo "trixie-root: building the $SUITE root in $dir (nice, about ten minutes; log: $log)" >&2

# Run a build step with its output in the log; on failure show its tail.
run() {
	echo "+ $*" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 30 "$log" | sed 's/^/trixie-root: | /' >&2
		die "failed: $* (log: $log)"
	fi
}

# Run CMD chrooted in the root being built, with /proc, /sys and /dev, in a
# mount namespace of its own: its mounts go away with it, even on failure.
inroot() {
	# shellcheck disable=SC2016 # expanded by the namespace's sh
	run nice -n 19 unshare -m -- /bin/sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" &&
		mount -t sysfs sysfs "$r/sys" &&
		mount --rbind /dev "$r/dev" &&
		exec chroot "$r" "$@"' inroot "$root" /usr/bin/env -i \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive INITRD=No "$@"
}

# Like inroot, for a query: its output on stdout.
query() {
	# shellcheck disable=SC2016 # expanded by the namespace's sh
	unshare -m -- /bin/sh -c 'r=$1; shift; mount -t proc proc "$r/proc" &&
		exec chroot "$r" "$@"' query "$root" /usr/bin/env -i \
		PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@" 2>>"$log"
}

run nice -n 19 debootstrap --variant=minbase --components=main \
	--keyring="$KEYRING" "$SUITE" "$root" "$mirror"

# The root's apt: its sources, no recommends, no translations, and no
# services started while packages install.
rm -f "$root/etc/apt/sources.list"
{
	echo "Types: deb"
	echo "URIs: $mirror"
	echo "Suites: $SUITE $SUITE-updates $SUITE-backports"
	echo "Components: main"
	echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
	if [ -n "$security" ]; then
		echo
		echo "Types: deb"
		echo "URIs: $security"
		echo "Suites: $SUITE-security"
		echo "Components: main"
		echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
	fi
} >"$root/etc/apt/sources.list.d/debian.sources"
cp "$root/etc/apt/sources.list.d/debian.sources" "$dir/sources"
cat >"$root/etc/apt/apt.conf.d/90gpuvirt" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
EOF
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
inroot apt-get update
# debootstrap takes trixie alone; the updates and security fixes come now.
inroot apt-get full-upgrade -y -q

# The newest release of a kernel line whose headers match PATTERN (an ERE
# over the release), and the image package to go with them: the -unsigned
# one where it exists, as at the newest version only it may (VM-FACTS.md).
newest_kernel() {
	query apt-cache pkgnames linux-headers- |
		sed -n 's/^linux-headers-//p' | grep -E "^$1\$" | sort -V | tail -n1
}
image_of() {
	if query apt-cache pkgnames "linux-image-$1" | grep -xF "linux-image-$1-unsigned" >/dev/null; then
		echo "linux-image-$1-unsigned"
	else
		echo "linux-image-$1"
	fi
}
k612=$(newest_kernel '6\.12\.[0-9]+\+deb13-amd64')
[ -n "$k612" ] || die "no linux-headers-6.12.*+deb13-amd64 in $SUITE (log: $log)"
k7=$(newest_kernel '7\.[0-9]+\.[0-9]+\+[a-z0-9]+-amd64')
[ -n "$k7" ] || die "no linux-headers-7.*-amd64 in $SUITE-backports (log: $log)"
s7=$(echo "$k7" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
echo "trixie-root: kernels $k612 and $k7" >&2

# INITRD=No: the kernels are booted by selftests/vm-run.sh with its own
# initramfs, so none is made for them.
inroot apt-get install -y -q "${PACKAGES[@]}" \
	"$(image_of "$k612")" "linux-headers-$k612" linux-source-6.12
# The 7.x kernel and its source come from trixie-backports, and of what they
# need only what trixie cannot give (linux-base): with -t, apt would also
# take the backport of linux-libc-dev, which user space builds with.
inroot apt-get install -y -q "$(image_of "$k7")/$SUITE-backports" \
	"linux-headers-$k7/$SUITE-backports" "linux-source-$s7/$SUITE-backports"

# Both kernels are complete: image, modules and headers (build/ is an
# absolute link inside the root).
for k in "$k612" "$k7"; do
	[ -e "$root/boot/vmlinuz-$k" ] || die "no /boot/vmlinuz-$k in the root"
	[ -r "$root/lib/modules/$k/modules.dep" ] || die "no modules.dep of $k in the root"
	b=$(readlink "$root/lib/modules/$k/build")
	case $b in /*) ;; *) b=/lib/modules/$k/$b ;; esac
	[ -e "$root$b/Makefile" ] || die "no headers of $k in the root ($b)"
done
printf '13-6.12 %s\n7 %s\n' "$k612" "$k7" >"$dir/kernels"

# The sparse each kernel's builds check with, as the kernel's own probe
# judges it. Kernels whose headers need a sparse newer than 0.6.4 carry that
# probe, scripts/checker-valid.sh, in their source, but Debian's headers
# packages leave it out, and without it kbuild turns C=2 off: it is taken
# from the same release's source package. Where trixie's sparse fails the
# probe, sid's is unpacked under /opt/sparse-sid (its binary needs only
# libc; sid's archive is only read for it, then dropped from the sources).
# "sparse" lists RELEASE and the CHECK program for each kernel.
probe_sparse() {
	# shellcheck disable=SC2016 # expanded by the root's sh
	query sh -c 'cd /tmp && "$0"/scripts/checker-valid.sh "$1"' "$1" "$2"
}
: >"$dir/sparse"
for k in "$k612" "$k7"; do
	common=$(sed -n 's/^include \(.*\)\/Makefile$/\1/p' "$root/usr/src/linux-headers-$k/Makefile")
	[ -n "$common" ] || common=/usr/src/linux-headers-$k
	check=sparse
	if grep -q 'scripts/checker-valid\.sh' "$root$common/Makefile"; then
		if [ ! -e "$root$common/scripts/checker-valid.sh" ]; then
			s=$(echo "$k" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
			run tar -xJf "$root/usr/src/linux-source-$s.tar.xz" -C "$root$common/scripts" \
				--strip-components=2 "linux-source-$s/scripts/checker-valid.sh"
		fi
		if [ "$(probe_sparse "$common" sparse)" != 1 ]; then
			check=/opt/sparse-sid/usr/bin/sparse
			if [ ! -x "$root$check" ]; then
				echo "deb [signed-by=$KEYRING] $mirror sid main" \
					>"$root/etc/apt/sources.list.d/sid-sparse.list"
				inroot apt-get -o Acquire::Check-Valid-Until=false update
				inroot sh -c 'cd /tmp && apt-get download sparse/sid &&
					dpkg-deb -x sparse_*.deb /opt/sparse-sid && rm sparse_*.deb'
				rm "$root/etc/apt/sources.list.d/sid-sparse.list"
				inroot apt-get update
			fi
			[ "$(probe_sparse "$common" "$check")" = 1 ] ||
				die "neither trixie's nor sid's sparse passes $k's scripts/checker-valid.sh"
		fi
	fi
	echo "$k $check" >>"$dir/sparse"
done

rm -f "$root/usr/sbin/policy-rc.d"
inroot apt-get clean
rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/"*.bin "$root/var/log/apt/"*
# shellcheck disable=SC2016 # a dpkg-query format
query dpkg-query -W -f='${Package} ${Version}\n' >"$dir/packages"
echo $(($(date +%s) - t0)) >"$dir/build-seconds"
: >"$dir/done"
echo "trixie-root: built in $(cat "$dir/build-seconds") s: $k612, $k7," \
	"$(du -sh "$root" | cut -f1)" >&2
[ $mode = run ] && run_in_root "$@"
echo "$root"
