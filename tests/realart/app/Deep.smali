# A recursion of known depth (tests/e2e/check_realart.c knows this structure; the lines it
# expects come from dexdump of the assembled dex):
#   main(mode) -> run(6, mode) -> down(6) -> down(5) -> ... -> down(0) -> block() or spin()
# mode 0: down(0) enters the monitor of Native.lock, which a thread of the launcher holds: the
#         thread sleeps there and its stack stays still (no native method on it: under method
#         tracing, ART's instrumentation stub of a native method cannot be unwound through).
# mode 1: down(0) calls spin() (a loop on one line), over and over.
# Both first call Native.ready(), which prints the ready line.
.class public Lperch/realart/Deep;
.super Ljava/lang/Object;
.source "Deep.java"

.method public constructor <init>()V
    .registers 1
    .line 5
    invoke-direct {p0}, Ljava/lang/Object;-><init>()V
    return-void
.end method

.method public static main(I)V
    .registers 3
    .line 11
    invoke-static {}, Lperch/realart/Native;->ready()V
    :loop
    .line 13
    new-instance v0, Lperch/realart/Deep;
    invoke-direct {v0}, Lperch/realart/Deep;-><init>()V
    .line 14
    const/4 v1, 6
    invoke-virtual {v0, v1, p0}, Lperch/realart/Deep;->run(II)V
    .line 15
    goto :loop
.end method

.method public run(II)V
    .registers 3
    .line 20
    invoke-static {p1, p2}, Lperch/realart/Deep;->down(II)V
    .line 21
    return-void
.end method

.method public static down(II)V
    .registers 3
    .line 30
    if-eqz p0, :bottom
    .line 31
    add-int/lit8 v0, p0, -1
    invoke-static {v0, p1}, Lperch/realart/Deep;->down(II)V
    .line 32
    return-void
    :bottom
    .line 34
    if-nez p1, :spin
    .line 35
    sget-object v0, Lperch/realart/Native;->lock:Ljava/lang/Object;
    .line 36
    monitor-enter v0
    monitor-exit v0
    :spin
    .line 37
    const v0, 200000
    invoke-static {v0}, Lperch/realart/Deep;->spin(I)I
    .line 38
    return-void
.end method

.method public static spin(I)I
    .registers 3
    .line 40
    const/4 v0, 0
    const/4 v1, 0
    :loop
    .line 41
    if-ge v0, p0, :done
    add-int/2addr v1, v0
    xor-int/lit8 v1, v1, 0x5
    add-int/lit8 v0, v0, 1
    goto :loop
    :done
    .line 42
    return v1
.end method
