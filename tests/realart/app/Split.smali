# A known time split: main() calls a() then b() over and over; both run the same loop, b()
# three times as many iterations, so b() should get three quarters of the samples. Each call is
# short (under a millisecond in nterp) so that even a thread preempted often on a loaded
# machine stops in a() and b() in proportion to their time.
.class public Lperch/realart/Split;
.super Ljava/lang/Object;
.source "Split.java"

.method public static main(I)V
    .registers 2
    .line 10
    invoke-static {}, Lperch/realart/Native;->ready()V
    :loop
    .line 12
    invoke-static {}, Lperch/realart/Split;->a()I
    .line 13
    invoke-static {}, Lperch/realart/Split;->b()I
    .line 14
    goto :loop
.end method

.method public static a()I
    .registers 3
    .line 20
    const v2, 30000
    const/4 v0, 0
    const/4 v1, 0
    :loop
    .line 21
    if-ge v0, v2, :done
    add-int/2addr v1, v0
    xor-int/lit8 v1, v1, 0x5
    add-int/lit8 v0, v0, 1
    goto :loop
    :done
    .line 22
    return v1
.end method

.method public static b()I
    .registers 3
    .line 30
    const v2, 90000
    const/4 v0, 0
    const/4 v1, 0
    :loop
    .line 31
    if-ge v0, v2, :done
    add-int/2addr v1, v0
    xor-int/lit8 v1, v1, 0x5
    add-int/lit8 v0, v0, 1
    goto :loop
    :done
    .line 32
    return v1
.end method
