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
fire=None; lags=collections.defaultdict(list)
tids=sorted(iv)
for l in open(log):
    r=l.split(); t=int(r[0]); tid=int(r[1]); path=r[2]
    if tid==0 and path=='F': fire=t
    elif tid==0 and path=='N':
        if fire < iv[tids[0]][0][0] or fire>iv[tids[0]][1][-1]: continue
        key=tuple(tr(x,fire) for x in tids)
        lags[sum(key)].append((t-fire)/1e3)
for k in sorted(lags):
    v=sorted(lags[k]); n=len(v)
    print('threads runnable at fire', k, 'n', n, 'start lag us p50 %.0f p75 %.0f p90 %.0f' % (v[n//2], v[n*3//4], v[n*9//10]))
