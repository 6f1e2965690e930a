# bench/stats.sh: sourced by cache_bench.sh and fix_bench.sh. Both read numbers separated by spaces on stdin.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
maxof() { tr ' ' '\n' | grep -v '^$' | sort -g | tail -1; }
