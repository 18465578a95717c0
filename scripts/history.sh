#!/usr/bin/env bash
# CI's durable history: every run's bundle is committed to a data branch of this repository
# (default `tidemark-history`, folder bundles/), and the DuckDB history is rebuilt from them
# with `tidemark ingest` (deterministic: the same bundles give the same rows). Nothing lives
# only in a cache; restoring the history anywhere is `scripts/history.sh restore`.
#
#   scripts/history.sh restore DB           # fetch the branch, ingest every bundle into DB
#   scripts/history.sh save FOLDER...       # add the bundles under FOLDER to the branch, push
#
# TIDEMARK_HISTORY_BRANCH names another branch; the branch's worktree is .history/.
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
TIDEMARK=${TIDEMARK:-$HERE/.venv/bin/tidemark}
BRANCH=${TIDEMARK_HISTORY_BRANCH:-tidemark-history}
TREE=$HERE/.history

checkout() {
  cd "$HERE"
  [ -d "$TREE" ] && return 0
  if git fetch -q origin "$BRANCH" 2>/dev/null; then
    git worktree add -q "$TREE" FETCH_HEAD
  else  # the first run: an empty branch of its own
    git worktree add -q --detach "$TREE"
    (cd "$TREE" && git checkout -q --orphan "$BRANCH" && git rm -rqf . && mkdir -p bundles)
  fi
}

restore() {
  checkout
  mkdir -p "$TREE/bundles"
  if [ -n "$(ls -A "$TREE/bundles")" ]; then
    "$TIDEMARK" ingest "$TREE/bundles" --db "$1"
  else
    echo "history: branch $BRANCH has no bundles yet"
  fi
}

save() {
  checkout
  local folder
  for folder in "$@"; do
    # Each bundle keeps its own folder name (its run id): never overwritten, never merged twice.
    find "$folder" -name manifest.json -printf '%h\n' | while read -r bundle; do
      [ -e "$TREE/bundles/$(basename "$bundle")" ] || cp -r "$bundle" "$TREE/bundles/"
    done
  done
  cd "$TREE"
  git add bundles
  if git diff --cached --quiet; then
    echo "history: nothing new to save"
    return 0
  fi
  git -c user.name="tidemark" -c user.email="tidemark@users.noreply.github.com" \
    commit -qm "history: $(git diff --cached --name-only | cut -d/ -f2 | sort -u | wc -l) bundle(s)"
  # Another job may have pushed meanwhile: bundles never conflict (one folder each), so rebase.
  for _ in 1 2 3; do
    git push -q origin "HEAD:refs/heads/$BRANCH" && return 0
    git pull -q --rebase origin "$BRANCH"
  done
  echo "history: could not push $BRANCH after 3 tries" >&2
  return 1
}

case ${1:-} in
  restore) [ $# -eq 2 ] || { echo "usage: $0 restore DB" >&2; exit 2; }; restore "$2" ;;
  save) [ $# -ge 2 ] || { echo "usage: $0 save FOLDER..." >&2; exit 2; }; shift; save "$@" ;;
  *) echo "usage: $0 {restore DB|save FOLDER...}" >&2; exit 2 ;;
esac
