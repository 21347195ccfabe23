#!/usr/bin/env bash
# Pin deploy/Containerfile's base to the digest its tag names now (the tag's newest build, with
# its security updates), and write nothing else. Then build, run tests/test_deploy_container.py
# and commit the changed FROM line: the image builds the same again until this is run again.
#
#   deploy/update-base-digest.sh                                # python:3.11-slim-bookworm
#   deploy/update-base-digest.sh python:3.11-slim-bookworm      # the same, said
#
# Asks the registry with skopeo, docker buildx or crane, whichever is installed (in that order).
# The digest is the image index's (every platform), the one `docker pull TAG` prints.
# CONTAINERFILE names another file to rewrite (the tests use a copy).
set -euo pipefail

tag="${1:-python:3.11-slim-bookworm}"
file="${CONTAINERFILE:-$(dirname "$0")/Containerfile}"
case "$tag" in
    */*) ref="$tag" ;;
    *) ref="docker.io/library/$tag" ;;
esac

if command -v skopeo >/dev/null 2>&1; then
    digest="$(skopeo inspect --format '{{.Digest}}' "docker://$ref")"
elif command -v docker >/dev/null 2>&1 && docker buildx version >/dev/null 2>&1; then
    digest="$(docker buildx imagetools inspect "$ref" --format '{{.Manifest.Digest}}')"
elif command -v crane >/dev/null 2>&1; then
    digest="$(crane digest "$ref")"
else
    echo "update-base-digest: none of skopeo, docker buildx or crane is installed" >&2
    exit 1
fi

if [[ ! "$digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
    echo "update-base-digest: the registry's answer for $ref is not a digest: $digest" >&2
    exit 1
fi

# Exactly one FROM line, the base's: anything else means the file changed shape; say so, write nothing.
if [ "$(grep -c '^FROM ' "$file")" != 1 ]; then
    echo "update-base-digest: $file does not have exactly one FROM line" >&2
    exit 1
fi
old="$(grep '^FROM ' "$file")"
sed -i -E "s|^FROM [^ ]+|FROM ${tag}@${digest}|" "$file"
new="$(grep '^FROM ' "$file")"
if [ "$old" = "$new" ]; then
    echo "$file: unchanged, $new"
else
    echo "$file: $old -> $new"
    echo "Also update the base's date and source in the comment above the FROM line."
fi
