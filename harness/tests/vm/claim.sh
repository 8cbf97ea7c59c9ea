#!/bin/sh
# usage: claim.sh KEY   (in the guest)
#
# Exit 0 if this guest is to run the test (or test case) named KEY.
# Guests that run at once share one host directory, $VM_SHARE (see
# check.sh): the first to create a directory named after KEY there takes
# it.  mkdir is atomic on the host and 9p passes it through, so every KEY
# runs exactly once.  A guest of its own (no $VM_SHARE) runs every KEY.
[ -n "${VM_SHARE:-}" ] || exit 0
key=$(printf '%s' "${1:?usage: claim.sh KEY}" | tr -c 'A-Za-z0-9._-' _ | cut -c1-120)
mkdir "$VM_SHARE/$key-$(printf '%s' "$1" | cksum | cut -d' ' -f1)" 2>/dev/null
