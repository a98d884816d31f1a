# Sourced by the figure scripts: `machine_stamp` prints the line each raw output starts with,
# "# scripts/NAME.sh, CPU model, N cores, YYYY-MM-DD" (figures compare only within one CPU);
# `cpu_model` the CPU model alone.
cpu_model() { grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
machine_stamp() {
  echo "# scripts/$(basename "$0"), $(cpu_model), $(nproc) cores, $(date -u +%F)"
}
