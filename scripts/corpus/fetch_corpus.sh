#!/usr/bin/env bash
# Fetches the demo corpus through apt without installing anything, and splits it by document into
# train / calibration / eval.
#
#   scripts/corpus/fetch_corpus.sh [--record] [BUILD_DIR]
#
# BUILD_DIR (default data/corpus/build, gitignored) receives debs/, the unpacked root-corpus/ and
# root-workload/, src/ (Debian's python3.11 patches), {train,calibration,eval}.txt with their
# *.docs.tsv lists, splits.json and MANIFEST.json. The recipe then compares MANIFEST.json with the
# committed data/corpus/MANIFEST.json and warns about every difference (a package the mirror no
# longer has at the pinned version, a changed .deb, a changed split); --record copies it over the
# committed one instead. Set SPECD_CORPUS_STRICT=1 to turn those warnings into a failure.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
record=0
if [[ "${1:-}" == "--record" ]]; then record=1; shift; fi
build="$(mkdir -p "${1:-$repo/data/corpus/build}" && cd "${1:-$repo/data/corpus/build}" && pwd)"

log() { printf 'fetch_corpus: %s\n' "$*" >&2; }
for tool in apt-get dpkg-deb sha256sum node; do
  command -v "$tool" >/dev/null || { log "needs $tool"; exit 1; }
done

mkdir -p "$build/debs"
# apt drops privileges to _apt for downloads; let it write where we download.
chmod 0777 "$build/debs" 2>/dev/null || true

# Downloads PKG at VERSION into debs/ (kept between runs); on a mirror that no longer has that
# version, warns and takes apt's candidate. Prints the .deb path.
fetch_deb() {
  local pkg="$1" version="$2" file
  file="$(ls "$build/debs/${pkg}_${version}_"*.deb 2>/dev/null | head -n1 || true)"
  if [[ -n "$file" ]]; then echo "$file"; return; fi
  local tmp; tmp="$(mktemp -d "$build/debs/.download.XXXXXX")"
  chmod 0777 "$tmp" 2>/dev/null || true
  if ! (cd "$tmp" && apt-get download -q "$pkg=$version" >/dev/null 2>"$tmp/err"); then
    log "WARNING: $pkg $version is not on the mirror any more; taking apt's candidate"
    (cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>"$tmp/err") ||
      { cat "$tmp/err" >&2; log "cannot download $pkg"; exit 1; }
  fi
  file="$(ls "$tmp"/*.deb)"
  mv "$file" "$build/debs/"
  rm -rf "$tmp"
  echo "$build/debs/$(basename "$file")"
}

rm -rf "$build/root-corpus" "$build/root-workload"
mkdir -p "$build/root-corpus" "$build/root-workload"
: >"$build/debs.tsv"
while IFS=$'\t' read -r role pkg version license what; do
  [[ -z "$role" || "$role" == \#* ]] && continue
  deb="$(fetch_deb "$pkg" "$version")"
  actual="$(dpkg-deb -f "$deb" Version)"
  sha="$(sha256sum "$deb" | cut -d' ' -f1)"
  dpkg-deb -x "$deb" "$build/root-$role"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$role" "$pkg" "$version" "$actual" "$sha" \
    "$(basename "$deb")" "$license" "$what" >>"$build/debs.tsv"
  log "$role $pkg $actual"
done <"$here/packages.tsv"

if [[ -f "$here/sources.tsv" ]]; then
  "$here/fetch_sources.sh" "$build"
fi

node "$here/split_corpus.js" "$build/root-corpus" "$build" "$here/heldout.txt"
node "$here/write_manifest.js" "$build" "$repo/data/corpus/MANIFEST.json" "$record"
