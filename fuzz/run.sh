#!/usr/bin/env bash
# Builds every fuzz target (one `cargo fuzz build`) and runs each for SECONDS
# (default 60); exits non-zero when any target finds a crash, a panic, a
# timeout (>10 s on one input), a leak or an out-of-memory (>2 GiB).
#
#   fuzz/run.sh [SECONDS] [TARGET...]
#
# FUZZ_JOBS=N runs N targets at a time (default 1). FUZZ_BUILD_FLAGS adds
# cargo-fuzz build flags (CI passes `--dev` for a faster build). Needs
# cargo-fuzz (installed from crates.io when missing) and libFuzzer's nightly
# flags, which the stable compiler accepts with RUSTC_BOOTSTRAP=1.
# New corpus entries go to fuzz/work/<target>/ (seeds: fuzz/corpus/<target>/),
# findings to fuzz/artifacts/<target>/, logs to fuzz/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")"

secs="${1:-60}"
shift || true
jobs="${FUZZ_JOBS:-1}"
# shellcheck disable=SC2206
build_flags=(-a ${FUZZ_BUILD_FLAGS:-})
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo fuzz list)
fi

start=$(date +%s)
cargo fuzz build "${build_flags[@]}"
echo "fuzz: built ${#targets[@]} targets in $(( $(date +%s) - start )) s"
# The binaries are run directly, so an edit made while they run does not
# rebuild them mid-way.
profile=release
case " ${build_flags[*]} " in *" --dev "*|*" -D "*) profile=debug ;; esac
bin_dir="${CARGO_TARGET_DIR:-target}/x86_64-unknown-linux-gnu/$profile"

run_one() {
  local t="$1"
  mkdir -p "work/$t" "artifacts/$t" logs
  # A target's libFuzzer dictionary (field names, magics, boundary values), when it has one.
  local dict=()
  if [ -f "dicts/$t.dict" ]; then dict=(-dict="dicts/$t.dict"); fi
  if ASAN_OPTIONS="detect_odr_violation=0" "$bin_dir/$t" "work/$t" "corpus/$t" "${dict[@]}" \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
      -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"logs/$t.log" 2>&1; then
    echo "fuzz: $t: ok ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "logs/$t.log" | grep -o '[0-9]*$' || echo '?') runs in ${secs} s)"
  else
    echo "fuzz: $t: FINDING (see fuzz/logs/$t.log and fuzz/artifacts/$t/)"
    grep -m 5 -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written' "logs/$t.log" || true
    return 1
  fi
}

failed=0
running=0
for t in "${targets[@]}"; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done

if [ "$failed" -ne 0 ]; then
  echo "fuzz: findings; reproduce with: (cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -a <target> artifacts/<target>/<file>)"
  exit 1
fi
echo "fuzz: no findings (${#targets[@]} targets, ${secs} s each)"
