// dumpall Go target: goroutines that never yield (the runtime preempts them with SIGURG, all
// the time) and allocate (garbage collections stop the world), beside a main goroutine
// blocked in a read. Prints "ready PID", runs until killed.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

var sink []byte

//go:noinline
func spin(n int) int {
	x := 0
	for i := 0; ; i++ {
		x += i * n
		if i%100000 == 0 {
			sink = make([]byte, 4096)
		}
	}
}

func main() {
	// PR_SET_PTRACER, PR_SET_PTRACER_ANY: let perch and gdb attach (Yama)
	syscall.RawSyscall(syscall.SYS_PRCTL, 0x59616d61, ^uintptr(0), 0)
	runtime.GOMAXPROCS(4)
	for i := 0; i < 4; i++ {
		go spin(i)
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		panic(err)
	}
	fmt.Printf("ready %d\n", os.Getpid())
	buf := make([]byte, 1)
	syscall.Read(p[0], buf)
}
