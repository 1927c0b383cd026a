# A recursion of a depth given on the command line (44 in the e2e-realart suite): main(n) ->
# down(n) -> down(n-1) -> ... -> down(0), which spins in Deep.spin() forever. In the switch
# interpreter each level is a large native frame, so a sampled stack copy of the default size
# ends long before main: the frames past the copy must show the right line or none (":?").
.class public Lperch/realart/Recur;
.super Ljava/lang/Object;
.source "Recur.java"

.method public static main(I)V
    .registers 1
    .line 7
    invoke-static {}, Lperch/realart/Native;->ready()V
    .line 8
    invoke-static {p0}, Lperch/realart/Recur;->down(I)V
    .line 9
    return-void
.end method

.method public static down(I)V
    .registers 2
    .line 13
    if-eqz p0, :bottom
    .line 14
    add-int/lit8 v0, p0, -1
    invoke-static {v0}, Lperch/realart/Recur;->down(I)V
    .line 15
    return-void
    :bottom
    .line 17
    const v0, 200000
    invoke-static {v0}, Lperch/realart/Deep;->spin(I)I
    .line 18
    goto :bottom
.end method
