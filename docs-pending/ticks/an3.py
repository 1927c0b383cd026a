import sys, bisect, glob, collections
log, prefix = sys.argv[1], sys.argv[2]
iv = {}
for fn in glob.glob(prefix + '.*'):
    tid = int(fn.rsplit('.', 1)[1])
    a = [tuple(map(int, l.split())) for l in open(fn)]
    iv[tid] = ([x[0] for x in a], [x[1] for x in a])
def tr(tid, t):
    st, en = iv[tid]
    i = bisect.bisect_right(st, t) - 1
    return i>=0 and t <= en[i]
fire=None
c=collections.defaultdict(collections.Counter)
for l in open(log):
    r=l.split(); t=int(r[0]); tid=int(r[1]); path=r[2]; state=r[3]
    if tid==0:
        if path=='F': fire=t
        continue
    if tid not in iv or path=='O' or fire is None or fire<iv[tid][0][0] or fire>iv[tid][1][-1]: continue
    c[tid][(path, state, 'fireT' if tr(tid,fire) else 'fireF', 'readT' if tr(tid,t) else 'readF')]+=1
for tid in c:
    print(tid)
    for k,v in sorted(c[tid].items(), key=lambda x:-x[1]): print('  ',k,v)
