#!/usr/bin/env bash
# Checks the documentation, one line per problem on stderr, exit 1 if any:
#   - README.md is a front page: at most 250 lines;
#   - every relative link in README.md, docs/*.md and the folders' README.md files points at a file
#     or folder of the repository, and a #anchor into a Markdown file at one of its headings
#     (GitHub's rule: lower case, punctuation dropped, spaces to hyphens);
#   - nothing the repository holds (docs, code comments, scripts) points outside it through
#     ../shared, which a clone does not have.
#   scripts/check_docs.sh   (run from anywhere; ctest runs it as docs.links)
set -euo pipefail
cd "$(dirname "$0")/.."

max_readme_lines=250
problems=0
problem() { echo "$1" >&2; problems=$((problems + 1)); }

lines=$(wc -l < README.md)
if (( lines > max_readme_lines )); then
  problem "README.md: $lines lines, more than $max_readme_lines (move details to docs/)"
fi

# Markdown files whose links are checked.
files=(README.md docs/*.md)
for f in */README.md data/*/README.md; do files+=("$f"); done

# The anchors of a Markdown file's headings, one per line (fenced code skipped).
anchors() {
  awk '/^```/ { fence = !fence; next }
       !fence && /^#+ / {
         h = $0; sub(/^#+ /, "", h); h = tolower(h)
         gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h); print h }' "$1"
}

for f in "${files[@]}"; do
  [[ -f $f ]] || continue
  dir=$(dirname "$f")
  # Links outside fenced code: ](target), one per line as "LINE TARGET".
  while read -r line target; do
    case $target in http://*|https://*|mailto:*) continue ;; esac
    path=${target%%#*}
    anchor=""
    [[ $target == *#* ]] && anchor=${target#*#}
    if [[ -z $path ]]; then
      resolved=$f
    else
      resolved=$dir/$path
      if [[ ! -e $resolved ]]; then
        problem "$f:$line: link to $target: no such file"
        continue
      fi
    fi
    if [[ -n $anchor && $resolved == *.md ]]; then
      if ! anchors "$resolved" | grep -qxF -- "$anchor"; then
        problem "$f:$line: link to $target: no heading with that anchor"
      fi
    fi
  done < <(awk '/^```/ { fence = !fence; next }
                !fence { s = $0
                  while (match(s, /\]\([^) ]+\)/)) {
                    print NR, substr(s, RSTART + 2, RLENGTH - 3); s = substr(s, RSTART + RLENGTH) } }' "$f")
done

# Every tracked file but this one (which names the pattern).
while IFS= read -r hit; do
  problem "${hit%%:*}:$(cut -d: -f2 <<< "$hit"): refers to ../shared, outside the repository"
done < <(git ls-files -z 2>/dev/null | xargs -0 grep -n -I '\.\./shared' -- 2>/dev/null | grep -v '^scripts/check_docs.sh:' || true)

if (( problems > 0 )); then
  echo "check_docs: $problems problem(s)" >&2
  exit 1
fi
echo "check_docs: ok (README.md $lines lines, ${#files[@]} files' links resolve)"
