#!/bin/bash
# run.sh HZ DUR SPECS...  (perch records DUR-1.5 s)
W=/work/wt/ticks; T=$W/build/targets; HZ=$1; DUR=$2; shift 2
rm -f /tmp/ticks/tr.*
uptime | sed 's/.*load/load/'
DUTY_TRACE=/tmp/ticks/tr $T/duty $DUR "$@" > /tmp/ticks/d.out & D=$!; sleep 0.5
PERCH_TICKLOG=/tmp/ticks/log $W/build/perch record $PX -p $D -F $HZ -d $(echo "$DUR-1.5"|bc) -o /tmp/ticks/d.folded 2>/tmp/ticks/p.err
wait $D
grep -E "ticks:" /tmp/ticks/p.err
for n in $(seq 0 $(($#-1))); do
  tr=$(grep "truth d$n " /tmp/ticks/d.out | awk "{print \$13}")
  pr=$(grep -E "  d$n  " /tmp/ticks/p.err | awk '{print $5}')
  echo "d$n ${!n+} spec=$(eval echo \${$((n+1))}) truth=$tr perch=$pr diff=$(echo "$pr-$tr"|bc)"
done
