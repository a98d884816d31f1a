# Sourced by the figure scripts: `machine_stamp` prints the line each raw output starts with,
# "# scripts/NAME.sh, CPU model, N cores, YYYY-MM-DD" (figures compare only within one CPU).
machine_stamp() {
  echo "# scripts/$(basename "$0"), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, $(date -u +%F)"
}
