#!/bin/bash
# usage: check-config.sh DOTCONFIG FRAGMENT...
#
# Fail if a symbol a fragment asks for did not end up in the merged .config
# (Kconfig drops requests whose dependencies are missing, with only a
# warning that scrolls by).  Later fragments override earlier ones.
set -euo pipefail
config=${1:?usage: check-config.sh DOTCONFIG FRAGMENT...}
shift
declare -A want from
for frag in "$@"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) sym=${line%%=*}; want[$sym]=$line; from[$sym]=$frag ;;
		"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want[$sym]=$line; from[$sym]=$frag ;;
		esac
	done <"$frag"
done
bad=0
for sym in "${!want[@]}"; do
	grep -qxF -- "${want[$sym]}" "$config" && continue
	# "is not set" also holds for a symbol this architecture lacks.
	case "${want[$sym]}" in
	"# "*) grep -Eq "^$sym=" "$config" || continue ;;
	esac
	have=$(grep -E "^($sym=|# $sym is not set)" "$config" || echo "$sym absent")
	echo "check-config: ${from[$sym]##*/} asks for '${want[$sym]}', .config has '$have'" >&2
	bad=1
done
exit $bad
