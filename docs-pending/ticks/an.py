import sys, bisect, glob, collections
log, prefix = sys.argv[1], sys.argv[2]
iv = {}
for fn in glob.glob(prefix + '.*'):
    tid = int(fn.rsplit('.', 1)[1])
    a = [tuple(map(int, l.split())) for l in open(fn)]
    iv[tid] = ([x[0] for x in a], [x[1] for x in a])
def truth(tid, t):
    st, en = iv[tid]
    i = bisect.bisect_right(st, t) - 1
    return i >= 0 and t <= en[i]
recs = [l.split() for l in open(log)]
lo = {tid: iv[tid][0][0] for tid in iv}; hi = {tid: iv[tid][1][-1] for tid in iv}
fire = None
stats = collections.defaultdict(lambda: collections.Counter())
lagF = []
pending = collections.defaultdict(list)  # ticks awaiting state from next sample
credit = collections.defaultdict(lambda: collections.Counter())  # tid -> (perchR, truthR) counts
for r in recs:
    t, tid, path, state, missed = int(r[0]), int(r[1]), r[2], r[3], int(r[4])
    if tid == 0:
        if path == 'F': fire = t; fmiss = missed
        else: lagF.append(t - fire)
        continue
    if tid not in iv or fire is None or fire < lo[tid] or fire > hi[tid]: continue
    tr_fire = truth(tid, fire); tr_now = truth(tid, t)
    if path == 'O':
        continue
    stats[tid][(path, state, 'T' if tr_fire else 'f')] += 1
    # perch R for this tick: L -> decided later; approximate by the path's state
    pr = state == 'R'
    if path == 'L':
        pr = True  # credited to next sample, usually R
    credit[tid]['perchR'] += pr; credit[tid]['truthR'] += tr_fire; credit[tid]['n'] += 1
    credit[tid]['truthR_now'] += tr_now
for tid in sorted(stats):
    c = credit[tid]
    print(tid, 'n', c['n'], 'perchR %.1f truth@fire %.1f truth@read %.1f' % (100*c['perchR']/c['n'], 100*c['truthR']/c['n'], 100*c['truthR_now']/c['n']))
    for k, v in sorted(stats[tid].items(), key=lambda x: -x[1]):
        print('   ', k, v)
lagF.sort()
print('tick lag fire->start us p50 %.0f p90 %.0f p99 %.0f' % (lagF[len(lagF)//2]/1e3, lagF[len(lagF)*9//10]/1e3, lagF[len(lagF)*99//100]/1e3))
