#!/usr/bin/env bash
# Install the Debian packages some tests use: bubblewrap (the mining sandbox) and chromium (the
# HTML report's browser test). Without them those tests skip with a loud reason; nothing else fails.
set -u
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ((${#need[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: cannot install ${need[*]} (needs root and apt-get); the tests that use them will skip" >&2
  exit 0
fi
echo "installing system packages: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}"; } >/tmp/ragmeter-apt.log 2>&1; then
  echo "note: installing ${need[*]} failed (see /tmp/ragmeter-apt.log); the tests that use them will skip" >&2
fi
exit 0
