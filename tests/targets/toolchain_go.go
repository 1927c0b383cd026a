// toolchain target in Go (go build, default flags: compressed .debug_frame, frameless
// assembly leaves): the main goroutine blocks in syscall.Read on a pipe nobody writes to, the
// runtime's threads in futex and epoll waits. Prints "ready PID" first.
package main

import (
	"fmt"
	"os"
	"syscall"
)

//go:noinline
func blockRead(fd int) {
	buf := make([]byte, 1)
	syscall.Read(fd, buf)
}

func main() {
	// PR_SET_PTRACER, PR_SET_PTRACER_ANY: let perch and gdb attach (Yama)
	syscall.RawSyscall(syscall.SYS_PRCTL, 0x59616d61, ^uintptr(0), 0)
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	blockRead(p[0])
}
