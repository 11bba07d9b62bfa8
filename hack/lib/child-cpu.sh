# Sourced by the build scripts. child_cpu <scratch dir>: sets CHILD_CPU to the CPU seconds
# (user + sys) used so far by finished children, go and its compilers included - unlike wall time
# this hardly depends on what else the machine is doing. `times` must run in the calling shell,
# not in a $(...) subshell, so it goes through a file.
child_cpu() {
  times > "$1/.times.$$"
  CHILD_CPU="$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$1/.times.$$")"
  rm -f "$1/.times.$$"
}
