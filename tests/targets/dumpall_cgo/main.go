// dumpall cgo target: Go calls C and C calls back into Go, the two directions of Go's stack
// switches. Goroutine "callback": main.viaC -> C c_call_back -> crosscall2 -> Go goBlocked,
// which blocks in a read (the Go frames of a callback sit on the goroutine's stack above the
// C frames on the thread's system stack). Goroutine "sleeper": main.sleepInC -> C c_sleep ->
// nanosleep (C code on the system stack under Go's asmcgocall). Prints "ready PID".
package main

/*
#include <time.h>

extern void goBlocked(void);

static __attribute__((noinline)) void c_call_back(void)
{
	goBlocked();
}

static __attribute__((noinline)) void c_sleep(void)
{
	struct timespec ts = {1000000, 0};

	while (nanosleep(&ts, &ts) != 0)
		;
}
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

var readFd int
var started = make(chan bool, 2)

//export goBlocked
func goBlocked() {
	buf := make([]byte, 1)
	started <- true
	syscall.Read(readFd, buf)
}

//go:noinline
func viaC() {
	runtime.LockOSThread()
	C.c_call_back()
}

//go:noinline
func sleepInC() {
	started <- true
	C.c_sleep()
}

func main() {
	syscall.RawSyscall(syscall.SYS_PRCTL, 0x59616d61, ^uintptr(0), 0)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	readFd = p[0]
	go viaC()
	go sleepInC()
	<-started
	<-started
	fmt.Printf("ready %d\n", os.Getpid())
	select {}
}
