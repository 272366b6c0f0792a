package agent

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/ordoplane/ordo/commands/httpapi"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/all"
)

// projectionSet returns the projections the server maintains.
func (a *Agent) projectionSet() []projections.Projection {
	if len(a.cfg.Projections) > 0 {
		return a.cfg.Projections
	}
	return all.Projections()
}

// rebuildStale rebuilds the projections a version change made stale before
// raft starts: no entry applies until they have caught up, and meanwhile
// the API listener answers health (503, with each projection's progress),
// metrics and the projection status, and 503 to everything else.
func (a *Agent) rebuildStale(ln net.Listener) error {
	if len(a.fsm.Stale()) == 0 {
		return nil
	}
	pl := &phaseListener{Listener: ln, closed: make(chan struct{})}
	srv := a.newHTTPServer(httpapi.Starting(httpapi.StartingConfig{Rebuilds: a.rebuilder, Gatherer: a.reg}))
	served := make(chan struct{})
	go func() { // joined below, before Start goes on
		defer close(served)
		_ = srv.Serve(pl)
	}()
	err := a.rebuilder.RebuildStale(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if serr := srv.Shutdown(ctx); serr != nil {
		srv.Close()
	}
	cancel()
	<-served
	if derr := pl.release(); err == nil {
		err = derr
	}
	return err
}

// phaseListener lends the API listener to a temporary server: closing it
// stops that server's Accept without closing the listener, which the real
// API serves next.
type phaseListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

type deadliner interface{ SetDeadline(time.Time) error }

func (l *phaseListener) Accept() (net.Conn, error) {
	for {
		select {
		case <-l.closed:
			return nil, net.ErrClosed
		default:
		}
		c, err := l.Listener.Accept()
		if err == nil {
			return c, nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue // the deadline Close set: look at closed again
		}
		return nil, err
	}
}

// Close stops Accept: it wakes a blocked Accept with a deadline in the past.
func (l *phaseListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		if d, ok := l.Listener.(deadliner); ok {
			_ = d.SetDeadline(time.Now())
		}
	})
	return nil
}

// release clears the deadline Close set, for the listener's next server.
func (l *phaseListener) release() error {
	if d, ok := l.Listener.(deadliner); ok {
		return d.SetDeadline(time.Time{})
	}
	return nil
}
