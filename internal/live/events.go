package live

import (
	"net/http"
	"time"
)

// frame is one rendering of the state: the event every page gets (with
// its id) and the page a new visitor gets.
type frame struct {
	id    uint64
	event []byte // "id: …\nevent: …\ndata: …\n\n"
	page  []byte
	final bool // the run is over: the page is the report
}

// client is one open event stream. It holds at most the latest frame
// not yet written: a newer one replaces it.
type client struct {
	next chan *frame // capacity 1
}

// offer gives c the frame f, replacing one it has not taken yet; it
// never blocks.
func (c *client) offer(f *frame) {
	for {
		select {
		case c.next <- f:
			return
		default:
		}
		select {
		case <-c.next: // drop the stale frame
		default:
		}
	}
}

// publish makes f the latest frame and offers it to every page.
func (s *Server) publish(f *frame) {
	s.out.Lock()
	defer s.out.Unlock()
	s.latest, s.page = f, f.page
	for c := range s.clients {
		c.offer(f)
	}
}

// keepAlive is how often an idle stream gets a comment line: a page
// that went away is noticed, and proxies keep the stream open.
const keepAlive = 15 * time.Second

// serveEvents streams the frames to one page (text/event-stream): the
// latest at once, then each new one, at most one a render. A page that
// does not take a write within the write timeout is dropped.
func (s *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	if n := s.nconn.Add(1); n > int64(s.opts.MaxClients) {
		s.nconn.Add(-1)
		w.Header().Set("Retry-After", "10")
		http.Error(w, "too many pages open", http.StatusServiceUnavailable)
		return
	}
	defer s.nconn.Add(-1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("X-Accel-Buffering", "no")
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	c := &client{next: make(chan *frame, 1)}
	s.out.Lock()
	s.clients[c] = struct{}{}
	if s.latest != nil {
		c.offer(s.latest)
	}
	s.out.Unlock()
	defer func() {
		s.out.Lock()
		delete(s.clients, c)
		s.out.Unlock()
	}()
	write := func(b []byte) bool {
		if rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout)) != nil {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: 2000\n\n")) {
		return
	}
	idle := time.NewTimer(keepAlive)
	defer idle.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-r.Context().Done():
			return
		case <-idle.C:
			if !write([]byte(": still here\n\n")) {
				return
			}
		case f := <-c.next:
			if !write(f.event) || f.final {
				return
			}
		}
		idle.Reset(keepAlive)
	}
}
