// The Go oracle program (built with `go build`, default flags). Goroutines park in known
// places; the OS threads under them block in the kernel:
//   reader: main.readChain -> main.readLeaf -> syscall.Read on a pipe; the goroutine is locked
//           to its thread, which blocks in read(2) (syscall.Syscall -> runtime/internal/syscall
//           assembly)
//   main:   main.main -> main.waitChain -> a channel receive nobody sends to; its thread, like
//           the runtime's idle threads, sleeps in futex (runtime.futexsleep, assembly leaf)
//   sleeper: time.Sleep in main.sleepChain; the goroutine parks on a timer
// Prints "ready PID"; tests/real/oracle.py waits until every thread sleeps.
package main

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
)

var sink int

//go:noinline
func readLeaf(fd int) {
	var b [1]byte
	n, _ := syscall.Read(fd, b[:])
	sink += n
}

//go:noinline
func readChain(fd int, depth int) {
	if depth == 0 {
		readLeaf(fd)
	} else {
		readChain(fd, depth-1)
	}
	sink++
}

//go:noinline
func sleepChain() {
	for {
		time.Sleep(time.Hour)
		sink++
	}
}

//go:noinline
func waitChain(ch chan int) {
	sink += <-ch
}

func main() {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	started := make(chan bool)
	go func() {
		runtime.LockOSThread()
		started <- true
		readChain(p[0], 3)
	}()
	go sleepChain()
	<-started
	fmt.Printf("ready %d\n", os.Getpid())
	waitChain(make(chan int))
}
