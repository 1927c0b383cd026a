// The Rust oracle program (rustc, default linker; also built with v0 mangling and with lld).
// Threads park in known places:
//   recv:   oracle::recv_chain -> Chain::<u32>::wait (generic) -> mpsc::Receiver::recv (futex)
//   reader: oracle::read_chain -> a closure -> std::io::Read::read on a pipe (read(2))
//   cond:   oracle::cond_chain -> Condvar::wait (futex)
//   sleeper: std::thread::sleep (nanosleep)
//   main:   JoinHandle::join (futex)
// Prints "ready PID"; tests/real/oracle.py waits until every thread sleeps.
use std::fs::File;
use std::io::Read;
use std::os::unix::io::FromRawFd;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

extern "C" {
    fn pipe(fds: *mut i32) -> i32;
    fn prctl(option: i32, arg2: u64, arg3: u64, arg4: u64, arg5: u64) -> i32;
}

mod oracle {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static SINK: AtomicUsize = AtomicUsize::new(0);

    /// A side effect after a call, so that the call is not a tail call.
    pub fn keep(v: usize) -> usize {
        SINK.fetch_add(v, Ordering::SeqCst) + v
    }

    pub struct Chain<T> {
        pub rx: mpsc::Receiver<T>,
    }

    impl<T: Copy + Into<u64>> Chain<T> {
        #[inline(never)]
        pub fn wait(&self) -> u64 {
            match self.rx.recv() {
                Ok(v) => v.into(),
                Err(_) => 0,
            }
        }
    }

    #[inline(never)]
    pub fn recv_chain(c: Chain<u32>) -> u64 {
        let v = c.wait();
        keep(v as usize) as u64 + 1
    }

    #[inline(never)]
    pub fn with_file<F: FnMut(&mut File) -> usize>(mut f: File, mut op: F) -> usize {
        let n = op(&mut f);
        keep(n) + 1
    }

    #[inline(never)]
    pub fn read_chain(fd: i32) -> usize {
        let f = unsafe { File::from_raw_fd(fd) };
        let n = with_file(f, |f| {
            let mut b = [0u8; 1];
            f.read(&mut b).unwrap_or(0)
        });
        keep(n) + 1
    }

    #[inline(never)]
    pub fn cond_chain(pair: Arc<(Mutex<bool>, Condvar)>) {
        let (m, cv) = &*pair;
        let mut done = m.lock().unwrap();
        while !*done {
            done = cv.wait(done).unwrap();
        }
    }

    #[inline(never)]
    pub fn sleep_chain() {
        loop {
            thread::sleep(Duration::from_secs(100000));
        }
    }
}

fn main() {
    unsafe {
        prctl(0x59616d61, u64::MAX, 0, 0, 0); // PR_SET_PTRACER, PR_SET_PTRACER_ANY
    }
    let mut fds = [0i32; 2];
    if unsafe { pipe(fds.as_mut_ptr()) } != 0 {
        std::process::exit(1);
    }
    let (tx, rx) = mpsc::channel::<u32>();
    let pair = Arc::new((Mutex::new(false), Condvar::new()));
    let pair2 = pair.clone();
    let rfd = fds[0];
    let mut hs = Vec::new();
    hs.push(thread::Builder::new().name("recv".into())
        .spawn(move || { oracle::recv_chain(oracle::Chain { rx }); }).unwrap());
    hs.push(thread::Builder::new().name("reader".into())
        .spawn(move || { oracle::read_chain(rfd); }).unwrap());
    hs.push(thread::Builder::new().name("cond".into())
        .spawn(move || oracle::cond_chain(pair2)).unwrap());
    hs.push(thread::Builder::new().name("sleeper".into())
        .spawn(oracle::sleep_chain).unwrap());
    println!("ready {}", std::process::id());
    for h in hs {
        h.join().unwrap();
    }
    drop(tx);
    drop(pair);
}
