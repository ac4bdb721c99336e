package transcript

// PendingCall is what a Pending list holds: a tool call known by its id until its result comes.
type PendingCall interface {
	PendingID() string
}

// Pending is a parser's list of tool calls waiting for their results, oldest first. It lives in
// the parser's state, which is saved as JSON between runs: as a named slice it marshals exactly
// as the plain slice of calls did, so the states written before it read the same.
//
// The readers disagree on what a call given again (the same id) means, so each way has its own
// method: Add keeps the first, Replace updates it in place, Renew makes it the newest. All of
// them keep only the last max calls: a call whose result never comes must not grow the state for
// ever.
type Pending[T PendingCall] []T

// Add appends c, unless a call with its id is listed: that one stays, with what it was first
// given (the time of the call, not of a repeat).
func (l *Pending[T]) Add(c T, max int) {
	if l.index(c.PendingID()) >= 0 {
		return
	}
	l.push(c, max)
}

// Replace puts c in the place of the call with its id, or appends it when there is none.
func (l *Pending[T]) Replace(c T, max int) {
	if i := l.index(c.PendingID()); i >= 0 {
		(*l)[i] = c
		return
	}
	l.push(c, max)
}

// Renew takes out the call with c's id, if any, and appends c: a call given again is the newest,
// the last to be dropped by the bound.
func (l *Pending[T]) Renew(c T, max int) {
	if i := l.index(c.PendingID()); i >= 0 {
		*l = append((*l)[:i], (*l)[i+1:]...)
	}
	l.push(c, max)
}

// Take returns the call with the id and removes it: a call has one result.
func (l *Pending[T]) Take(id string) (T, bool) {
	if i := l.index(id); i >= 0 {
		c := (*l)[i]
		*l = append((*l)[:i], (*l)[i+1:]...)
		return c, true
	}
	var zero T
	return zero, false
}

// index returns the place of the first call with the id, or -1.
func (l Pending[T]) index(id string) int {
	for i := range l {
		if l[i].PendingID() == id {
			return i
		}
	}
	return -1
}

// push appends c and drops the oldest calls beyond max. The kept calls move to a new array, so
// the dropped ones (and their memos) do not stay reachable through the old one.
func (l *Pending[T]) push(c T, max int) {
	*l = append(*l, c)
	if n := len(*l); n > max {
		*l = append((*l)[:0:0], (*l)[n-max:]...)
	}
}
