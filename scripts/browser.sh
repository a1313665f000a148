#!/usr/bin/env bash
# The Chromium the browser tests (tests/test_view_browser.py) and scripts/view_screenshots.py drive.
#
#   export CLINEVAL_TEST_CHROMIUM="$(bash scripts/browser.sh)"   # installs Debian's chromium if missing
#
# Prints the path of the browser executable on stdout (and nothing else there): $CLINEVAL_TEST_CHROMIUM when it
# names an executable, else the first of chromium, chromium-browser, google-chrome found on PATH; none: installs
# Debian's `chromium` package with apt-get (as root, or with sudo), as scripts/test_postgres.sh does PostgreSQL.
# Exits 1 when no browser can be found or installed.
set -euo pipefail

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

find_browser() {
    local name found
    if [ -n "${CLINEVAL_TEST_CHROMIUM:-}" ] && [ -x "$CLINEVAL_TEST_CHROMIUM" ]; then
        echo "$CLINEVAL_TEST_CHROMIUM"
        return 0
    fi
    for name in chromium chromium-browser google-chrome google-chrome-stable; do
        found=$(command -v "$name" || true)
        # Ubuntu's chromium-browser is a stub that asks for the snap: accept only one that runs
        if [ -n "$found" ] && "$found" --version >/dev/null 2>&1; then
            echo "$found"
            return 0
        fi
    done
    return 0
}

browser=$(find_browser)
if [ -z "$browser" ]; then
    echo "installing Debian's chromium package" >&2
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get install -y -q --no-install-recommends chromium >&2 ||
        { as_root apt-get update -q >&2 && as_root apt-get install -y -q --no-install-recommends chromium >&2; }
    browser=$(find_browser)
fi
if [ -z "$browser" ]; then
    echo "no Chromium found or installed (looked for chromium, chromium-browser, google-chrome)" >&2
    exit 1
fi
echo "$browser"
