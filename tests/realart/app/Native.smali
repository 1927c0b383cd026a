# The launcher's natives (tests/realart/launcher.c registers them): ready() prints the ready
# line and returns, block() prints it and sleeps forever. A thread of the launcher holds the
# monitor of @lock forever.
.class public final Lperch/realart/Native;
.super Ljava/lang/Object;
.source "Native.java"

.field public static lock:Ljava/lang/Object;

.method public static native ready()V
.end method

.method public static native block()V
.end method

# spawn(name, mode): the launcher starts a thread attached to the runtime as @name, which calls
# States.thread(mode). park(): sleeps forever in native code (no ready line).
.method public static native spawn(Ljava/lang/String;I)V
.end method

.method public static native park()V
.end method
