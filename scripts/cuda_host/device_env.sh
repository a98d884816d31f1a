#!/usr/bin/env bash
# Builds specd on a GPU machine without Debian 12 (e.g. an Ubuntu 24.04 image with PyTorch) against
# Debian 12 packages carried in .gpu/debs (scripts/cuda_host/fetch_debs.sh downloads them).
# Usage, from the repo root:  [STEPS=...] bash scripts/cuda_host/device_env.sh COMMAND [ARGS...]
#   e.g. STEPS="1 3" bash scripts/cuda_host/device_env.sh scripts/cuda_check.sh $OUT/cuda
# Order: 1. decide which fallbacks the device lacks (nlohmann_json, Eigen, OpenSSL, zlib, HDF5,
# pkg-config); 2. unpack with dpkg-deb -x into a private prefix (GPU_DEB_PREFIX, default
# /tmp/specd-deb; never /): always Boost 1.74, Catch2 2, cpp-httplib, utf8proc, PCRE2, brotli,
# SQLite, plus the fallbacks; 3. point the .pc files at the prefix, relink dangling .so links to the
# device's libraries, gather the runtime libs whose soname the device lacks into PREFIX/rt;
# 4. check every required piece (one-line failure); 5. export PKG_CONFIG_PATH, CMAKE_PREFIX_PATH
# (environment: cuda_check.sh's -DCMAKE_PREFIX_PATH for torch does not override it),
# LD_LIBRARY_PATH=PREFIX/rt, CPATH and LIBRARY_PATH only with GPU_CPATH=1 (see below), CMAKE_ARGS
# (appended to any given: Boost_DIR, boost_*_DIR, Catch2_DIR, SQLite3_INCLUDE_DIR/LIBRARY);
# 6. print a summary and exec COMMAND.
# Knobs: GPU_FORCE_FALLBACKS=1 unpacks every fallback as if the device lacked it (testing);
# GPU_CPATH=1 also exports CPATH/LIBRARY_PATH for the prefix.
set -euo pipefail
die() { echo "device.sh: $*" >&2; exit 1; }
[ $# -gt 0 ] || die "usage: bash scripts/cuda_host/device_env.sh COMMAND [ARGS...]"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.gpu
debs=$here/debs
P=${GPU_DEB_PREFIX:-/tmp/specd-deb}
arch=x86_64-linux-gnu
force=${GPU_FORCE_FALLBACKS:-0}
[ -d "$debs" ] || die "no $debs: carry .gpu with the run"
case "$P" in /*) ;; *) die "GPU_DEB_PREFIX must be absolute: $P" ;; esac
case "${P%/}" in "" | /usr | /usr/* | /opt | /etc | /lib* | /bin | /sbin | /var) die "refusing prefix $P" ;; esac
L=$P/usr/lib/$arch

# A library (soname) on the device itself, never in the private prefix.
sys_lib() {
  local d
  for d in /usr/lib/$arch /lib/$arch /usr/lib /lib /usr/local/lib /usr/lib64; do
    [ -e "$d/$1" ] && { echo "$d/$1"; return 0; }
  done
  ldconfig -p 2>/dev/null | awk -v n="$1" '$1 == n { print $NF; found = 1; exit } END { exit !found }'
}
# A CMake package config on the device (standard places only).
sys_cmake_config() {
  local f
  for f in /usr/lib/$arch/cmake /usr/lib/cmake /usr/share/cmake /usr/local/lib/cmake /usr/local/share/cmake; do
    find "$f" -maxdepth 2 -name "$1" 2>/dev/null | head -n 1 | grep . && return 0
  done
  return 1
}
lacks() { [ "$force" = 1 ] || ! eval "$1" >/dev/null 2>&1; }

# 1. What must be unpacked.
pkgs=(libboost1.74-dev libboost-program-options1.74-dev libboost-program-options1.74.0 catch2
  libcpp-httplib-dev libcpp-httplib0.11 libutf8proc-dev libutf8proc2 libpcre2-dev libpcre2-8-0
  libbrotli-dev libbrotli1 libsqlite3-dev libsqlite3-0)
fallbacks=()
have_pc() { command -v pkg-config >/dev/null && pkg-config --exists "$@"; }
if lacks "command -v pkg-config"; then pkgs+=(pkgconf pkgconf-bin libpkgconf3); fallbacks+=(pkg-config); fi
if lacks "test -f /usr/include/nlohmann/json.hpp && sys_cmake_config nlohmann_jsonConfig.cmake"; then
  pkgs+=(nlohmann-json3-dev); fallbacks+=(nlohmann_json); fi
if lacks "test -d /usr/include/eigen3"; then pkgs+=(libeigen3-dev); fallbacks+=(eigen3); fi
if lacks "test -f /usr/include/openssl/evp.h && have_pc openssl"; then
  pkgs+=(libssl-dev); fallbacks+=(openssl-dev); fi
if lacks "test -f /usr/include/zlib.h && have_pc zlib"; then pkgs+=(zlib1g-dev); fallbacks+=(zlib-dev); fi
if lacks "have_pc 'hdf5 >= 1.10'"; then
  pkgs+=(libhdf5-dev libhdf5-103-1 libsz2 libaec0); fallbacks+=(hdf5)
  # Debian's libhdf5_serial.so.103 needs these from the device (not carried).
  for so in libcurl.so.4 libcrypto.so.3 libz.so.1; do
    sys_lib $so >/dev/null || die "the HDF5 fallback needs $so, which the device lacks"
  done
fi

# 2. Unpack (skipped when the prefix already holds exactly this set).
files=()
for p in "${pkgs[@]}"; do
  f=$(ls "$debs/${p}"_*.deb 2>/dev/null | head -n 1) || true
  [ -n "$f" ] || die "missing $p in $debs"
  files+=("$f")
done
stamp=$(for f in "${files[@]}"; do echo "$(basename "$f") $(stat -c %s "$f")"; done)
if [ "$(cat "$P/.specd-stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$P"; mkdir -p "$P"
  for f in "${files[@]}"; do
    if command -v dpkg-deb >/dev/null; then
      dpkg-deb -x "$f" "$P" || die "dpkg-deb -x failed on $(basename "$f")"
    else
      t=$(mktemp -d); (cd "$t" && ar x "$f" && tar -xf data.tar.* -C "$P") || die "ar/tar failed on $(basename "$f")"; rm -rf "$t"
    fi
  done
  # 3. .pc files: /usr -> the prefix (idempotent: an already-prefixed path no longer matches).
  for f in "$L"/pkgconfig/*.pc "$P"/usr/share/pkgconfig/*.pc; do
    if [ -f "$f" ]; then sed -i -E "s#(^[A-Za-z_]+=|-I|-L|[[:space:]])/usr(/|\$|[[:space:]])#\1$P/usr\2#g" "$f"; fi
  done
  # Debian's hdf5.pc is an update-alternatives link, which dpkg-deb -x does not make.
  if [ -f "$L/pkgconfig/hdf5-serial.pc" ] && [ ! -e "$L/pkgconfig/hdf5.pc" ]; then ln -s hdf5-serial.pc "$L/pkgconfig/hdf5.pc"; fi
  # Dev links whose runtime was not carried (OpenSSL, zlib, PCRE2-16/32/posix): the device's, else none.
  while IFS= read -r l; do
    t=$(basename "$(readlink "$l")")
    case "$t" in *.so.*) ;; *) rm -f "$l"; continue ;; esac
    rest=${t#*.so.}; soname="${t%%.so.*}.so.${rest%%.*}"
    if s=$(sys_lib "$soname"); then ln -sfn "$s" "$l"; else rm -f "$l"; fi
  done < <(find "$L" -xtype l 2>/dev/null)
  # Runtime libraries whose soname the device lacks: PREFIX/rt, for LD_LIBRARY_PATH.
  mkdir -p "$P/rt"
  while IFS= read -r f; do
    soname=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    [ -n "$soname" ] || soname=$(basename "$f")
    if [ "$force" = 1 ] || ! sys_lib "$soname" >/dev/null; then ln -sfn "$f" "$P/rt/$soname"; fi
  done < <(find "$L" -maxdepth 1 -type f -name "lib*.so.*")
  echo "$stamp" > "$P/.specd-stamp"
fi

# 4. Required pieces.
bd=$L/cmake/Boost-1.74.0
for f in "$bd/BoostConfig.cmake" "$L/cmake/boost_headers-1.74.0/boost_headers-config.cmake" \
  "$L/cmake/boost_program_options-1.74.0/boost_program_options-config.cmake" \
  "$P/usr/include/boost/version.hpp" "$P/usr/lib/cmake/Catch2/Catch2Config.cmake" \
  "$P/usr/lib/cmake/Catch2/Catch.cmake" "$P/usr/include/catch2/catch.hpp" "$P/usr/include/sqlite3.h" \
  "$P/usr/include/httplib.h" "$P/usr/include/utf8proc.h" "$P/usr/include/pcre2.h" "$P/usr/include/brotli/decode.h"; do
  [ -f "$f" ] || die "missing ${f#$P/} in $P"
done
grep -q 'BOOST_LIB_VERSION "1_74"' "$P/usr/include/boost/version.hpp" || die "boost/version.hpp in $P is not 1.74"
for f in libboost_program_options.so libsqlite3.so libutf8proc.so libpcre2-8.so libcpp-httplib.so \
  libbrotlicommon.so libbrotlidec.so libbrotlienc.so; do
  [ -e "$L/$f" ] || die "$f in $L does not resolve"
done

# 5. Environment.
pp() { echo "$1${2:+:$2}"; }
PKG_CONFIG_PATH=$(pp "$L/pkgconfig:$P/usr/share/pkgconfig" "${PKG_CONFIG_PATH:-}")
CMAKE_PREFIX_PATH=$(pp "$P/usr" "${CMAKE_PREFIX_PATH:-}")
LD_LIBRARY_PATH=$(pp "$P/rt" "${LD_LIBRARY_PATH:-}")
export PKG_CONFIG_PATH CMAKE_PREFIX_PATH LD_LIBRARY_PATH
# CPATH/LIBRARY_PATH only on request: every header and library of the prefix reaches the build
# through a CMake target (-isystem, full library paths, build RPATH to PREFIX/usr/lib). With them
# set, CMake counts the prefix among the compiler's implicit directories, leaves it out of the
# RPATH and (newer CMake) the -isystem flags, and pkgconf drops its -I/-L: the build then works
# only inside this environment.
if [ "${GPU_CPATH:-0}" = 1 ]; then
  CPATH=$(pp "$P/usr/include" "${CPATH:-}"); LIBRARY_PATH=$(pp "$L" "${LIBRARY_PATH:-}")
  export CPATH LIBRARY_PATH PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1
fi
if [[ " ${fallbacks[*]} " == *" pkg-config "* ]]; then
  export PATH=$P/usr/bin:$PATH PKG_CONFIG=$P/usr/bin/pkg-config
fi
command -v pkg-config >/dev/null || die "no pkg-config on the device or in $P"
missing=()
for m in libpcre2-8 libutf8proc cpp-httplib sqlite3 zlib openssl "hdf5 >= 1.10"; do
  pkg-config --exists "$m" || missing+=("$m")
done
[ ${#missing[@]} -eq 0 ] || die "pkg-config cannot resolve: ${missing[*]}"
[ -f /usr/include/nlohmann/json.hpp ] || [ -f "$P/usr/include/nlohmann/json.hpp" ] || die "no nlohmann/json.hpp"
[ -f /usr/include/openssl/evp.h ] || [ -f "$P/usr/include/openssl/evp.h" ] || die "no openssl/evp.h"
export CMAKE_ARGS="${CMAKE_ARGS:+$CMAKE_ARGS }-DBoost_DIR=$bd -Dboost_headers_DIR=$L/cmake/boost_headers-1.74.0 \
-Dboost_program_options_DIR=$L/cmake/boost_program_options-1.74.0 -DBoost_NO_SYSTEM_PATHS=ON \
-DCatch2_DIR=$P/usr/lib/cmake/Catch2 -DSQLite3_INCLUDE_DIR=$P/usr/include -DSQLite3_LIBRARY=$L/libsqlite3.so"

# 6. Summary, then the command.
{
  echo "== device.sh: ${#files[@]} debs in $P (fallbacks unpacked: ${fallbacks[*]:-none})"
  echo "resolved: hdf5 $(pkg-config --modversion hdf5 2>/dev/null || echo -) ($(pkg-config --variable=pcfiledir hdf5 2>/dev/null || echo ?))," \
    "openssl $(pkg-config --modversion openssl 2>/dev/null || echo -), zlib $(pkg-config --modversion zlib 2>/dev/null || echo -)," \
    "device nlohmann_json $(sys_cmake_config nlohmann_jsonConfig.cmake >/dev/null && echo yes || echo no)," \
    "device eigen3 $([ -d /usr/include/eigen3 ] && echo yes || echo no), pkg-config $(command -v pkg-config)," \
    "system boost $(sed -n 's/^#define BOOST_LIB_VERSION "\(.*\)"/\1/p' /usr/include/boost/version.hpp 2>/dev/null || echo -)"
  echo "runtime libs from $P/rt: $(ls "$P/rt" | tr '\n' ' ')"
  echo "CMAKE_ARGS=$CMAKE_ARGS"
} >&2
exec "$@"
