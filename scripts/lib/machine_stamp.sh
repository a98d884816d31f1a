# Sourced by the figure scripts: `machine_stamp` prints the line each raw output starts with,
# "# scripts/NAME.sh, CPU model (widest vector ISA), N cores, YYYY-MM-DD" (figures compare only
# within one CPU; the VM kind has come as an AMD EPYC with AVX512-BF16 and as one with AVX2 only,
# whose model names are the same); `cpu_model` the CPU model alone.
cpu_model() { grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'; }
cpu_isa() {
  local flags
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2- || true) "
  for isa in avx512_bf16 avx512f avx2; do
    case "$flags" in *" $isa "*) echo "$isa"; return;; esac
  done
  echo "no avx2"
}
machine_stamp() {
  echo "# scripts/$(basename "$0"), $(cpu_model) ($(cpu_isa)), $(nproc) cores, $(date -u +%F)"
}
