package supervisor

import (
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// inotifyMask is what the guard asks inotify for: names created, deleted or moved in a watched
// directory, and the directory itself deleted or moved. Not IN_MODIFY nor IN_ATTRIB, which every
// write to the store or the stream would raise (fsnotify asks for both, and cannot be told not
// to).
const inotifyMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// inotifier is the notifier on Linux: one inotify instance, read through Go's poller so that
// close ends the read.
type inotifier struct {
	fd    int // for inotify_add_watch (f.Fd would put the descriptor back in blocking mode)
	f     *os.File
	ch    chan struct{}
	once  sync.Once
	done  chan struct{}
	wakes atomic.Int64 // reads that returned events
}

func newNotifier() (notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, os.NewSyscallError("inotify_init1", err)
	}
	n := &inotifier{fd: fd, f: os.NewFile(uintptr(fd), "inotify"), ch: make(chan struct{}, 1), done: make(chan struct{})}
	go n.read()
	return n, nil
}

func (n *inotifier) add(dir string) error {
	_, err := unix.InotifyAddWatch(n.fd, dir, inotifyMask)
	return os.NewSyscallError("inotify_add_watch", err)
}

func (n *inotifier) events() <-chan struct{} { return n.ch }

// read signals events once per read of the instance, however many events the read returned (the
// guard looks at every path each time anyway); an overflow of the kernel's queue is a read too.
func (n *inotifier) read() {
	defer close(n.done)
	buf := make([]byte, 4096)
	for {
		if _, err := n.f.Read(buf); err != nil {
			return // closed
		}
		n.wakes.Add(1)
		select {
		case n.ch <- struct{}{}:
		default: // one is pending already
		}
	}
}

func (n *inotifier) close() {
	n.once.Do(func() {
		n.f.Close()
		<-n.done
	})
}
