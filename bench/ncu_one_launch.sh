# Sourced by the Nsight Compute topics (bench/gpu_*ncu_session.sh). ncu_one_launch NAME REGEX SKIP
# BUDGET SECTIONS -- COMMAND...: profiles launch SKIP + 1 of the kernels matching REGEX in COMMAND
# (the SECTIONS, a space-separated list, plus source counters), then writes $out/ncu_details.log
# and $out/ncu_source.csv (SASS lines with their warp samples) and deletes the report.
ncu_one_launch() {
  local name=$1 regex=$2 skip=$3 budget=$4 sections=$5
  shift 6
  local args=()
  for s in $sections SourceCounters; do args+=(--section "$s"); done
  timeout $((budget - 10)) ncu --clock-control none -k "regex:$regex" --launch-skip "$skip" \
    --launch-count 1 "${args[@]}" -o "$out/$name" -f "$@" >"$out/ncu.log" 2>&1 ||
    echo "ncu failed or cut"
  ncu -i "$out/$name.ncu-rep" --page details >"$out/ncu_details.log" 2>&1
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/ncu_source.csv" 2>&1
  rm -f "$out/$name.ncu-rep"
}
