// Package storetest is the conformance suite of [store.Store], which every
// backend runs from its tests, as file systems run [testing/fstest]:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(tb testing.TB, now func() time.Time) store.Store {
//			s := mybackend.New(mybackend.Options{Now: now})
//			tb.Cleanup(func() { s.Close() })
//			return s
//		}, storetest.Options{})
//	}
//
// [Run] checks every promise of the store package's interfaces: versions
// and conflicts, writers that lose nothing under contention, large
// histories, hostile ids, corrupt rows, schema migrations, stream leases,
// fencing, live following, stop requests, expiry, list paging and context
// cancellation. [Benchmark] measures one chat write, one stream append and
// many concurrent chats, so that backends can be compared.
package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/store"
)

// NewStore makes a new, empty store for one test or benchmark, and closes it
// when tb ends (tb.Cleanup). now is the clock the store must use for its
// timestamps and leases: the suite moves it on to expire leases. A nil now
// means the real clock.
type NewStore func(tb testing.TB, now func() time.Time) store.Store

// Options tell [Run] how to reach below the interface of a backend. A nil
// func skips the tests that need it, with a message.
type Options struct {
	// Corrupt overwrites the stored history of the chat (which exists) with
	// bytes that do not decode, as a disk error or a bad manual edit would.
	Corrupt func(tb testing.TB, s store.Store, chatID string)

	// Reopen opens another handle on the database of s, as another
	// process or replica would, with the given clock. The suite closes
	// it. Backends without a database to share (memory) leave it nil.
	Reopen func(tb testing.TB, s store.Store, now func() time.Time) (store.Store, error)

	// BumpSchema makes the database of s look migrated by a newer build:
	// its schema version becomes one more than this build knows. Reopen
	// must then fail with an error wrapping [store.ErrNewerSchema].
	BumpSchema func(tb testing.TB, s store.Store)
}

// Run runs the conformance suite against the stores newStore makes. Its
// subtests run in parallel, each with its own store.
func Run(t *testing.T, newStore NewStore, opts Options) {
	su := &suite{newStore: newStore, opts: opts}
	groups := []struct {
		name  string
		tests []test
	}{
		{"Chats", chatTests},
		{"Docs", docTests},
		{"DocsOfNoChat", chatlessDocTests},
		{"ConversationDocs", conversationDocTests},
		{"Concurrency", concurrencyTests},
		{"Data", dataTests},
		{"Schema", schemaTests},
		{"Streams", streamTests},
		{"List", listTests},
		{"Context", contextTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, su)
				})
			}
		})
	}
}

type test struct {
	name string
	run  func(t *testing.T, su *suite)
}

type suite struct {
	newStore NewStore
	opts     Options
}

// env is one test's store and its clock.
type env struct {
	t     *testing.T
	s     store.Store
	clock *Clock
	ctx   context.Context
}

func (su *suite) env(t *testing.T) *env {
	c := NewClock()
	return &env{t: t, s: su.newStore(t, c.Now), clock: c, ctx: t.Context()}
}

// reopen returns a second handle on e's database, or skips the test.
func (su *suite) reopen(e *env) store.Store {
	e.t.Helper()
	if su.opts.Reopen == nil {
		e.t.Skip("the backend has no database to share (Options.Reopen is nil)")
	}
	s2, err := su.opts.Reopen(e.t, e.s, e.clock.Now)
	if err != nil {
		e.t.Fatalf("reopening the database: %v", err)
	}
	e.t.Cleanup(func() { _ = s2.Close() })
	return s2
}

// Clock is a settable clock that is safe for concurrent use. It starts at a
// fixed time, on a whole microsecond.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at 2030-01-02 03:04:05 UTC.
func NewClock() *Clock { return &Clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
