#!/usr/bin/env bash
# usage: portable_isa.sh BINARY
# Proof that a SPECD_NATIVE=OFF build runs on any x86-64: BINARY's own machine code (specd and the
# static libraries linked into it; libtorch and OpenBLAS are shared libraries that pick their
# kernels at run time) holds no instruction past baseline x86-64 (SSE2): no AVX/AVX2/AVX-512
# (VEX/EVEX: v-prefixed mnemonics, ymm/zmm/mask registers), no SSSE3/SSE4 and no BMI/POPCNT/LZCNT.
# The kernels pick their vector paths at compile time (util/simd.h: -march=native), so a portable
# build must fall back to the scalar loops everywhere; this catches one that does not. (BMI1's andn
# is matched with its trailing blank: SSE2's andnps/andnpd are baseline.)
# (Running the binary on an emulated older CPU with qemu-user is no option for the sanitizer
# build: qemu-user cannot map AddressSanitizer's shadow memory and is killed.)
set -euo pipefail
binary=${1:?usage: portable_isa.sh BINARY}
# UBSan's -fsanitize=function puts 8 bytes of data at the start of each function (a 2-byte jmp
# over a signature and a type pointer): whatever those bytes decode to is not code, so a
# function's first 8 bytes are dropped when it opens with that jmp (eb 06).
code=$(objdump -d "$binary" | awk '
  function hex(s,   i, v) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
  /^[0-9a-f]+ <.*>:$/ { start = 1; next }
  /^ *[0-9a-f]+:\t/ {
    addr = hex(substr($1, 1, length($1) - 1))
    if (start && $2 == "eb" && $3 == "06") skip = addr + 8
    start = 0
    if (addr < skip) next
    sub(/^ *[0-9a-f]+:\t([0-9a-f][0-9a-f] )+ *\t?/, "")
    printf "%x:\t%s\n", addr, $0
  }')
found=$(printf '%s\n' "$code" | grep -E \
  '%[yz]mm|%k[0-7]\b|^[0-9a-f]+:\s+(v[a-z]|pshufb|palignr|ptest|pblendw|pblendvb|blendv|round[ps][sd]|pmulld|pmin[su][bdw]|pmax[su][bdw]|pextr[bdq]|pinsr[bdq]|pcmp[ei]str|pmovzx|pmovsx|popcnt|lzcnt|tzcnt|crc32|andn\s|bextr|shlx|shrx|sarx|rorx|mulx|pdep|pext\b|movbe)' \
  | head -n 5 || true)
if [ -n "$found" ]; then
  echo "portable_isa: $binary holds instructions past baseline x86-64, e.g.:" >&2
  echo "$found" >&2
  exit 1
fi
echo "portable_isa: $binary is baseline x86-64 (no AVX, SSSE3/SSE4 or BMI instructions)" >&2
