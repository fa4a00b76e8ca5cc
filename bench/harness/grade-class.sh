#!/usr/bin/env bash
# On the GPU machine (the device tool, carrying .carry/gb.tar.xz: an xz tar
# of scripts/grader-bundle.sh's folder): grades the grader's class with the
# flags given, times it, verifies every expectation, and leaves results.json
# and the log in $OUT/NAME. Stops grading at 540 s (a device call's limit is
# 600 s): grade in shards (--shard 1/2, 2/2) and `grader merge` them here.
# Usage: bench/harness/grade-class.sh NAME [GRADER_RUN_FLAGS...]
name=$1; shift
[ -d /tmp/grader-bundle ] || tar -xJf .carry/gb.tar.xz -C /tmp
here=/tmp/grader-bundle
. $here/bwrap.sh
nvidia-smi --query-gpu=name,memory.total,memory.free,driver_version --format=csv,noheader
grep -E "MemTotal|MemAvailable" /proc/meminfo
start=$(date +%s.%N)
timeout 540 $here/grader run $here/class --timeout 120 --out /tmp/$name "$@" > /tmp/$name.log 2>&1
rc=$?
end=$(date +%s.%N)
echo "$name: grader run exit $rc in $(python3 -c "print(round($end-$start,1))") s"
$here/grader mutants verify /tmp/$name 2>&1 | tail -20
mkdir -p $OUT/$name
cp /tmp/$name/results.json /tmp/$name.log $OUT/$name/ 2>/dev/null
