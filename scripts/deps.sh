#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install what building and testing gpuvirt needs on a Debian 12 host, idempotently.
#
# The two supported kernel lines are resolved by name at install time, so the
# script keeps following Debian's security updates instead of pinning an ABI:
#   6.1  - bookworm's default line, via the linux-{image,headers}-amd64 metapackages
#   6.12 - bookworm's 6.12 line from bookworm-security, newest linux-headers-6.12.*+deb12-amd64
#          together with the matching -unsigned image (the only image at the newest version)
#
# Usage: scripts/deps.sh [--check]
#   --check  only report what is missing; exit 1 if anything is
set -euo pipefail

check_only=0
[ "${1:-}" = "--check" ] && check_only=1

# debhelper, dh-dkms (bookworm ships dh_dkms apart from dkms) and lintian
# build and check the Debian packages (debian/, scripts/check-package.sh).
# bc, flex, bison, libelf-dev and libssl-dev build the debug kernel
# (scripts/debug-kernel.sh); clang builds the libFuzzer harnesses (fuzz/),
# with libFuzzer and the sanitizers from libclang-rt-dev.
# linux-source-6.1 and -6.12: the kernel's mdev samples for each kernel
# (scripts/mdev-samples.sh, the VM test of the other vGPU stacks).
# pciutils reads the simulated GPUs' config space (lspci); libvirt's daemon,
# QEMU driver and clients, mdevctl and udev are the node-device consumer of
# selftests/vm/libvirt_nodedev.sh; iproute2's ip brings up the loopback
# of the network namespace that selftests/vm/nova.sh runs Nova in (a
# fresh machine may not have it). debootstrap and debian-archive-keyring
# (bookworm's has trixie's keys, which gpg reads) make the Debian 13 root of
# the trixie lanes (scripts/trixie-root.sh).
tools_pkgs=(build-essential pkg-config libmnl-dev libyaml-dev sparse cppcheck dkms kmod
	    qemu-system-x86 busybox-static cpio xz-utils python3 python3-yaml
	    python3-jsonschema linux-source-6.12 linux-source-6.1 debhelper dh-dkms lintian
	    bc flex bison libelf-dev libssl-dev clang libclang-rt-dev pciutils libvirt-daemon
	    libvirt-daemon-driver-qemu libvirt-daemon-system libvirt-clients mdevctl
	    udev iproute2 debootstrap debian-archive-keyring gpg python3-nova python3-libvirt)

newest_612() {
	apt-cache pkgnames linux-headers-6.12. 2>/dev/null |
		grep -E '^linux-headers-6\.12\.[0-9]+\+deb12-amd64$' |
		sort -V | tail -n1 | sed 's/^linux-headers-//'
}

missing=()
pkg_installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

for p in "${tools_pkgs[@]}" linux-image-amd64 linux-headers-amd64; do
	pkg_installed "$p" || missing+=("$p")
done

# The 6.12 line: any installed 6.12 image with headers counts, so an offline
# host that already has one is not forced to upgrade.
have_612=""
for d in /lib/modules/6.12.*+deb12-amd64; do
	[ -e "$d/build/Makefile" ] && [ -e "/boot/vmlinuz-${d##*/}" ] && have_612=${d##*/}
done
if [ -z "$have_612" ]; then
	if [ $check_only -eq 0 ] && [ "$(id -u)" -eq 0 ]; then
		apt-get update -qq
	fi
	v612=$(newest_612)
	if [ -z "$v612" ]; then
		echo "deps: no linux-headers-6.12.*+deb12-amd64 in apt's lists;" \
		     "enable bookworm-security and run apt-get update" >&2
		exit 1
	fi
	missing+=("linux-image-${v612}-unsigned" "linux-headers-${v612}")
fi

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ $check_only -eq 1 ] || [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: install them as root with:" >&2
	echo "    apt-get install --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
# The images are only booted by QEMU, never by this host, so skip building an
# initramfs and touching the bootloader for them.
export DEBIAN_FRONTEND=noninteractive INITRD=No
apt-get update -qq || true
apt-get install -y -qq --no-install-recommends "${missing[@]}"
