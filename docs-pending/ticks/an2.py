import sys, bisect, glob, collections
log, prefix = sys.argv[1], sys.argv[2]
iv = {}
for fn in glob.glob(prefix + '.*'):
    tid = int(fn.rsplit('.', 1)[1])
    a = [tuple(map(int, l.split())) for l in open(fn)]
    iv[tid] = ([x[0] for x in a], [x[1] for x in a])
def where(tid, t):
    st, en = iv[tid]
    i = bisect.bisect_right(st, t) - 1
    if i < 0: return None
    return (t - st[i], t <= en[i], en[i]-t)
fire=None
for tidsel in iv:
  d = collections.defaultdict(list)
  for l in open(log):
    r=l.split(); t=int(r[0]); tid=int(r[1]); path=r[2]; state=r[3]
    if tid==0:
        if path=='F': fire=t
        continue
    if tid!=tidsel or path not in 'rIWX': continue
    wf = where(tid, fire); wr = where(tid, t)
    if not wf or not wr: continue
    if path in 'rI' and wf[1]:
        # truth at fire runnable, perch S
        d['S_T_fire'].append((wf[0]/1e3, wr[1], wr[0]/1e3, (t-fire)/1e3))
    if path in 'WX' and state=='R' and not wf[1]:
        d['R_f_fire'].append((wf[0]/1e3, wr[1], wr[0]/1e3, (t-fire)/1e3))
  print(tidsel)
  for k,v in d.items():
    v.sort()
    n=len(v); tr_at_read=sum(1 for x in v if x[1])
    since=[x[2] for x in v if x[1]]; since.sort()
    lag=[x[3] for x in v]; lag.sort()
    print(' ',k,n,'truth-at-read-runnable',tr_at_read, 'us since wakeup req at read p10/50/90', [round(since[int(len(since)*q)]) for q in (0.1,.5,.9)] if since else '', 'read lag us p50/90', round(lag[n//2]), round(lag[n*9//10]))
