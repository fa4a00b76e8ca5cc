#!/usr/bin/env bash
# On the GPU machine (the device tool, carrying .carry/gb.tar.xz: an xz tar
# of scripts/grader-bundle.sh's folder): issue 52's "Done when". Grades the
# costly bundle's honest students alone, then the whole class (the honest
# students and one student of each costly kind: a remake sleeper, a report
# flood, a trace flood, a static array of 80 MiB), each timed with the
# grader's peak memory (GNU time), and checks that every honest student's
# record is the same in both (same-grades.py's comparison: every run's
# verdict and points, every check) and that the class took at most 1.25
# times the honest students' time. Leaves both results.json, the logs and
# timelines in $OUT/costly.
# Usage: bench/harness/costly-class.sh [GRADER_RUN_FLAGS...]
set -uo pipefail
[ -d /tmp/grader-bundle ] || tar -xJf .carry/gb.tar.xz -C /tmp
here=/tmp/grader-bundle
. $here/bwrap.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
grep -E "MemTotal|MemAvailable" /proc/meminfo
honest=$(python3 -c "
import json; m = json.load(open('$here/costly/bundle.json'))
print(' '.join(sorted({'--student ' + i['student'] for i in m['items'] if i['student'].startswith('honest')})))")
mkdir -p $OUT/costly
grade() {  # NAME [FLAGS...]: seconds and peak KiB on stdout's last line
    local name=$1; shift
    local start=$(date +%s.%N)
    GRADER_TIMELINE=$OUT/costly/$name.tsv /usr/bin/time -f "%M" -o /tmp/$name.peak \
        timeout 560 $here/grader run $here/costly --out /tmp/$name "$@" > $OUT/costly/$name.log 2>&1
    echo "$name: exit $? in $(python3 -c "print(round($(date +%s.%N)-$start,1))") s, grader peak $(( $(tail -1 /tmp/$name.peak) / 1024 )) MiB"
    cp /tmp/$name/results.json $OUT/costly/$name.json
    $here/grader report /tmp/$name > /dev/null 2>&1
}
grade honest $honest "$@" | tee $OUT/costly/times.txt
grade class "$@" | tee -a $OUT/costly/times.txt
python3 - $OUT/costly <<'CHECK'
import json, re, sys
out = sys.argv[1]
times = {l.split(':')[0]: float(re.search(r'in ([\d.]+) s', l)[1]) for l in open(f'{out}/times.txt')}
honest, klass = (json.load(open(f'{out}/{n}.json'))['students'] for n in ('honest', 'class'))
def rows(record):
    return [(name, r.get('tag'), r.get('role'), r['verdict']['kind'], r.get('points'))
            for name, ex in sorted(record['exercises'].items()) for r in ex.get('runs', [])] + \
           [(name, c['name'], c.get('passed'), c.get('points'))
            for name, ex in sorted(record['exercises'].items()) for c in ex.get('checks', [])]
differ = [s for s in honest if rows(honest[s]) != rows(klass[s])]
ratio = times['class'] / times['honest']
for s in sorted(klass):
    if not s.startswith('honest'):
        ex = klass[s]['exercises']['dot-sm']
        kinds = sorted({r['verdict']['kind'] for r in ex.get('runs', [])})
        print(f"{s}: {kinds} build_errors={str(ex.get('build_errors'))[:100]!r}, "
              f"{len(json.dumps(klass[s]))} bytes of results.json")
print(f"honest {times['honest']} s, class {times['class']} s: {ratio:.2f} times; "
      f"honest records that differ: {differ or 'none'}")
sys.exit(0 if ratio <= 1.25 and not differ else 1)
CHECK
