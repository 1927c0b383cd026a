# Threads in each of ART's Java states, for the e2e-realart suite's oracle test (perch dump
# beside ART's own thread dump, tests/e2e/check_realart_states.c). main() starts them with
# Native.spawn(name, mode) (the launcher attaches a thread under that name, which calls
# thread(mode)); each counts itself in, then:
#   0 "blocked"   enters the monitor of Native.lock, which the launcher's "holder" holds
#   1 "waiting"   Object.wait() on an object of its own
#   2 "sleeping"  Thread.sleep (ART waits on the lock object given to it)
#   3 "clinit"    runs Glacier.<clinit>, which parks in a native method
#   4 "initwait"  touches Glacier while "clinit" initializes it: waits for the class
#   5 "native"    parks in the native method Native.park()
#   6 "running"   spins in Deep.spin() forever
# Once all seven counted in, main() calls Native.block(), which prints the ready line.
.class public Lperch/realart/States;
.super Ljava/lang/Object;
.source "States.java"

.field public static count:I
.field public static busy:I
.field public static lock:Ljava/lang/Object;

.method public static main(I)V
    .registers 4
    .line 10
    new-instance v0, Ljava/lang/Object;
    invoke-direct {v0}, Ljava/lang/Object;-><init>()V
    sput-object v0, Lperch/realart/States;->lock:Ljava/lang/Object;
    .line 11
    const-string v1, "blocked"
    const/4 v2, 0
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "waiting"
    const/4 v2, 1
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "sleeping"
    const/4 v2, 2
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "clinit"
    const/4 v2, 3
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "initwait"
    const/4 v2, 4
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "native"
    const/4 v2, 5
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    const-string v1, "running"
    const/4 v2, 6
    invoke-static {v1, v2}, Lperch/realart/Native;->spawn(Ljava/lang/String;I)V
    :wait
    .line 13
    monitor-enter v0
    sget v1, Lperch/realart/States;->count:I
    monitor-exit v0
    .line 14
    const/4 v2, 7
    if-lt v1, v2, :wait
    .line 16
    invoke-static {}, Lperch/realart/Native;->block()V
    .line 17
    return-void
.end method

# Count the calling thread in.
.method public static arrive()V
    .registers 2
    .line 20
    sget-object v0, Lperch/realart/States;->lock:Ljava/lang/Object;
    monitor-enter v0
    .line 21
    sget v1, Lperch/realart/States;->count:I
    add-int/lit8 v1, v1, 1
    sput v1, Lperch/realart/States;->count:I
    .line 22
    monitor-exit v0
    return-void
.end method

.method public static thread(I)V
    .registers 5
    .line 30
    invoke-static {}, Lperch/realart/States;->arrive()V
    .line 31
    packed-switch p0, :modes
    .line 32
    return-void
    :blocked
    .line 40
    sget-object v0, Lperch/realart/Native;->lock:Ljava/lang/Object;
    .line 41
    monitor-enter v0
    monitor-exit v0
    return-void
    :waiting
    .line 50
    new-instance v0, Ljava/lang/Object;
    invoke-direct {v0}, Ljava/lang/Object;-><init>()V
    .line 51
    monitor-enter v0
    .line 52
    const-wide/16 v1, 0
    const/4 v3, 0
    invoke-virtual {v0, v1, v2, v3}, Ljava/lang/Object;->wait(JI)V
    monitor-exit v0
    return-void
    :sleeping
    .line 60
    new-instance v0, Ljava/lang/Object;
    invoke-direct {v0}, Ljava/lang/Object;-><init>()V
    .line 61
    monitor-enter v0
    .line 62
    const-wide/32 v1, 100000000
    const/4 v3, 0
    invoke-static {v0, v1, v2, v3}, Ljava/lang/Thread;->sleep(Ljava/lang/Object;JI)V
    monitor-exit v0
    return-void
    :clinit
    .line 70
    invoke-static {}, Lperch/realart/Glacier;->touch()V
    return-void
    :initwait
    .line 80
    sget v0, Lperch/realart/States;->busy:I
    if-eqz v0, :initwait
    .line 81
    invoke-static {}, Lperch/realart/Glacier;->touch()V
    return-void
    :native
    .line 90
    invoke-static {}, Lperch/realart/Native;->park()V
    return-void
    :running
    .line 100
    const v0, 200000
    invoke-static {v0}, Lperch/realart/Deep;->spin(I)I
    .line 101
    goto :running

    :modes
    .packed-switch 0x0
        :blocked
        :waiting
        :sleeping
        :clinit
        :initwait
        :native
        :running
    .end packed-switch
.end method
