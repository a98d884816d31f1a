#!/usr/bin/env bash
# Fetches the source packages of scripts/corpus/sources.tsv with apt-get source --download-only
# through a private deb-src list and state directory (the machine's apt setup is left alone), and
# unpacks what the workloads need into BUILD_DIR/root-workload/src/PACKAGE/.
#
#   scripts/corpus/fetch_sources.sh BUILD_DIR      (called by fetch_corpus.sh)
#
# Appends one line per downloaded file to BUILD_DIR/sources.tsv.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
log() { printf 'fetch_sources: %s\n' "$*" >&2; }

apt_dir="$build/apt-src"
mkdir -p "$apt_dir/lists/partial" "$build/src"
chmod 0777 "$apt_dir/lists" "$apt_dir/lists/partial" "$build/src" 2>/dev/null || true
cat >"$apt_dir/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm-updates main
EOF
apt_opts=(-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o "Dir::Etc::SourceParts=/dev/null" -o "Acquire::Languages=none")
updated=0

: >"$build/sources.tsv"
while IFS=$'\t' read -r role pkg version license what; do
  [[ -z "$role" || "$role" == \#* ]] && continue
  dsc="$build/src/${pkg}_${version}.dsc"
  if [[ ! -f "$dsc" ]]; then
    if [[ $updated == 0 ]]; then
      apt-get "${apt_opts[@]}" update -q >/dev/null 2>"$apt_dir/update.err" ||
        { cat "$apt_dir/update.err" >&2; log "apt-get update of the deb-src list failed"; exit 1; }
      updated=1
    fi
    if ! (cd "$build/src" && apt-get "${apt_opts[@]}" source --download-only -q "$pkg=$version" \
      >/dev/null 2>"$apt_dir/source.err"); then
      log "WARNING: source $pkg $version is not on the mirror any more; taking the newest"
      (cd "$build/src" && apt-get "${apt_opts[@]}" source --download-only -q "$pkg" \
        >/dev/null 2>"$apt_dir/source.err") || { cat "$apt_dir/source.err" >&2; exit 1; }
      dsc="$(ls -t "$build/src/${pkg}_"*.dsc | head -n1)"
    fi
  fi
  actual="$(sed -n 's/^Version: //p' "$dsc")"
  # The .dsc names the package's files; apt checked them against the signed Sources index.
  files=("$(basename "$dsc")")
  while read -r _ _ name; do files+=("$name"); done < <(sed -n '/^Files:/,/^[^ ]/{/^ /p}' "$dsc")
  for name in "${files[@]}"; do
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$role" "$pkg" "$version" "$actual" "$name" \
      "$(sha256sum "$build/src/$name" | cut -d' ' -f1)" "$license" "$what" >>"$build/sources.tsv"
  done
  log "$role $pkg $actual (source)"

  out="$build/root-$role/src/$pkg"
  rm -rf "$out" && mkdir -p "$out"
  debian_tar="$(printf '%s\n' "${files[@]}" | grep '\.debian\.tar\.' || true)"
  orig_tar="$(printf '%s\n' "${files[@]}" | grep '\.orig\.tar\.' || true)"
  [[ -n "$debian_tar" ]] && tar -C "$out" -xf "$build/src/$debian_tar" debian/patches
  if [[ -n "$orig_tar" && -f "$here/sources-$pkg.files" ]]; then
    # Only the listed files of the upstream tarball, without its top directory.
    mapfile -t wanted < <(grep -v '^#' "$here/sources-$pkg.files" | sed '/^$/d')
    top="$(tar -tzf "$build/src/$orig_tar" | awk -F/ 'NR == 1 { print $1 }')"
    tar -C "$out" -xzf "$build/src/$orig_tar" --strip-components=1 "${wanted[@]/#/$top/}"
  fi
done <"$here/sources.tsv"
