#!/usr/bin/env bash
# CI's durable history: every run's bundle is committed to a data branch of this repository
# (default `tidemark-history`, folder bundles/), and the DuckDB history is rebuilt from them
# with `tidemark ingest` (deterministic: the same bundles give the same rows). Nothing lives
# only in a cache; restoring the history anywhere is `scripts/history.sh restore`.
#
#   scripts/history.sh restore DB           # fetch the branch, ingest every bundle into DB
#   scripts/history.sh save FOLDER...       # add the bundles under FOLDER to the branch, push
#
# Exit codes: 0 all good; 4 some bundles refused, each named, the others restored or saved (2
# from restore when none could be: ingest's codes); 1 the branch could not be fetched or pushed. `save` keeps only
# bundles that `tidemark ingest --check` accepts: one damaged bundle on the branch would make
# every later restore fail. TIDEMARK_HISTORY_BRANCH names another branch; the branch's worktree
# is .history/, made afresh from the remote branch by every command (a self-hosted runner keeps
# its workspace between jobs, and its checkout step deletes .history/ but not git's record of it).
set -euo pipefail

HERE=$(cd "$(dirname "$0")/.." && pwd)
TIDEMARK=${TIDEMARK:-$HERE/.venv/bin/tidemark}
BRANCH=${TIDEMARK_HISTORY_BRANCH:-tidemark-history}
TREE=$HERE/.history

checkout() {
  cd "$HERE"
  if [ -d "$TREE" ]; then git worktree remove --force "$TREE" 2>/dev/null || rm -rf "$TREE"; fi
  git worktree prune
  local found=0
  git ls-remote --exit-code origin "refs/heads/$BRANCH" >/dev/null || found=$?
  case $found in
    0) git fetch -q origin "$BRANCH" && git worktree add -q --detach "$TREE" FETCH_HEAD ;;
    2) # The first run: an empty branch of its own.
      git worktree add -q --detach "$TREE"
      (cd "$TREE" && git checkout -q --orphan "$BRANCH" && git rm -rqf . && mkdir -p bundles) ;;
    *) # Never an empty history in place of one that could not be reached.
      echo "history: cannot read branch $BRANCH from origin (git ls-remote exit $found); check the" \
        "remote and its credentials, then run this again" >&2
      exit 1 ;;
  esac
}

restore() {
  local db
  db=$(realpath -m "$1")
  checkout
  mkdir -p "$TREE/bundles"
  if [ -n "$(ls -A "$TREE/bundles")" ]; then
    "$TIDEMARK" ingest "$TREE/bundles" --db "$db"
  else
    echo "history: branch $BRANCH has no bundles yet"
  fi
}

save() {
  local folder bundle refused=0 list
  list=$(mktemp)
  for folder in "$@"; do
    find "$(realpath "$folder")" -name manifest.json -printf '%h\n' >> "$list"
  done
  checkout
  # Each bundle keeps its own folder name (its run id): never overwritten, never merged twice.
  while read -r bundle; do
    [ -e "$TREE/bundles/$(basename "$bundle")" ] && continue
    if "$TIDEMARK" ingest --check "$bundle" > /dev/null 2> "$list.err"; then
      cp -r "$bundle" "$TREE/bundles/"
    else
      echo "history: not saving $bundle: $(tail -n 1 "$list.err")" >&2
      refused=1
    fi
  done < "$list"
  rm -f "$list" "$list.err"
  push_saved
  [ $refused -eq 0 ] || return 4
}

push_saved() {
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
