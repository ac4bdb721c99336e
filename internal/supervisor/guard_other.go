//go:build !linux

package supervisor

import "github.com/fsnotify/fsnotify"

// fsnotifier is the notifier elsewhere: fsnotify, whose events also include writes to the files
// in the watched directories (kqueue and ReadDirectoryChangesW tell those anyway); any event is a
// signal.
type fsnotifier struct {
	w    *fsnotify.Watcher
	ch   chan struct{}
	done chan struct{}
}

func newNotifier() (notifier, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	n := &fsnotifier{w: w, ch: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(n.done)
		for {
			select {
			case _, ok := <-w.Events:
				if !ok {
					return
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
			}
			select {
			case n.ch <- struct{}{}:
			default:
			}
		}
	}()
	return n, nil
}

func (n *fsnotifier) add(dir string) error    { return n.w.Add(dir) }
func (n *fsnotifier) events() <-chan struct{} { return n.ch }
func (n *fsnotifier) close()                  { n.w.Close(); <-n.done }
