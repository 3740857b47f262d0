package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// The contention of the concurrency tests: writers × writes each. Writes
// that append to a history re-encode all of it, so there are fewer.
const (
	writers          = 8
	writesPerWriter  = 50
	appendsPerWriter = 15
	maxRetriesPerPut = 10 * writers * writesPerWriter
)

// appendMessage appends one user message to the chat's history with
// get-and-put, retrying on conflicts, and returns how many conflicts it
// met.
func appendMessage(ctx context.Context, s store.Chats, chatID, text string) (int, error) {
	for conflicts := 0; conflicts < maxRetriesPerPut; conflicts++ {
		c, err := s.GetChat(ctx, chatID)
		if err != nil {
			return conflicts, err
		}
		c.History = append(c.History, agentloop.UserMessage(text))
		err = s.PutChat(ctx, c)
		if !errors.Is(err, store.ErrConflict) {
			return conflicts, err
		}
	}
	return maxRetriesPerPut, fmt.Errorf("still conflicting after %d tries", maxRetriesPerPut)
}

// incrementDoc adds one to the decimal counter in the document, with
// get-and-put, retrying on conflicts.
func incrementDoc(ctx context.Context, s store.Docs, chatID, name string) error {
	for range maxRetriesPerPut {
		d, err := s.GetDoc(ctx, chatID, name)
		if errors.Is(err, store.ErrNotFound) {
			d, err = &store.Doc{ChatID: chatID, Name: name}, nil
		}
		if err != nil {
			return err
		}
		n, _ := strconv.Atoi(string(d.Data))
		d.Data = strconv.AppendInt(nil, int64(n+1), 10)
		err = s.PutDoc(ctx, d)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("still conflicting after %d tries", maxRetriesPerPut)
}

// hammer runs fn(writer, i) for every writer concurrently, each writer
// calling it n times in order, and fails on the first error.
func hammer(t *testing.T, n int, fn func(writer, i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range n {
				if err := fn(w, i); err != nil {
					errs <- fmt.Errorf("writer %d, write %d: %w", w, i, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// checkAppends asserts that the history holds every writer's messages
// exactly once and in each writer's order.
func checkAppends(t *testing.T, h agentloop.History) {
	t.Helper()
	require.Len(t, h, writers*appendsPerWriter, "no message lost or duplicated")
	next := make([]int, writers)
	for _, m := range h {
		var w, i int
		_, err := fmt.Sscanf(m.Text(), "w%d-%d", &w, &i)
		require.NoError(t, err)
		require.Equal(t, next[w], i, "writer %d's messages in order", w)
		next[w]++
	}
}

var concurrencyTests = []test{
	{"ConcurrentHistoryAppendsLoseNothing", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		var mu sync.Mutex
		conflicts := 0
		hammer(t, appendsPerWriter, func(w, i int) error {
			n, err := appendMessage(e.ctx, e.s, "chat-1", fmt.Sprintf("w%d-%d", w, i))
			mu.Lock()
			conflicts += n
			mu.Unlock()
			return err
		})
		c, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		checkAppends(t, c.History)
		t.Logf("%d appends, %d conflicts retried", writers*appendsPerWriter, conflicts)
	}},
	{"ConcurrentDocIncrementsLoseNothing", func(t *testing.T, su *suite) {
		e := su.env(t)
		e.create(e.s, "chat-1", "", nil)
		hammer(t, writesPerWriter, func(w, i int) error { return incrementDoc(e.ctx, e.s, "chat-1", "counter") })
		d, err := e.s.GetDoc(e.ctx, "chat-1", "counter")
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(writers*writesPerWriter), string(d.Data))
	}},
	{"DocAndChatWritersDoNotConflict", func(t *testing.T, su *suite) {
		e := su.env(t)
		c := e.create(e.s, "chat-1", "", nil)
		d := &store.Doc{ChatID: "chat-1", Name: "toolstate"}
		// Each writer writes on from its own last version, never re-reading:
		// any conflict between the chat and its document fails the test.
		var wg sync.WaitGroup
		var chatErr, docErr error
		wg.Go(func() {
			for i := range writesPerWriter {
				c.History = append(c.History, agentloop.UserMessage(fmt.Sprintf("w0-%d", i)))
				if chatErr = e.s.PutChat(e.ctx, c); chatErr != nil {
					return
				}
			}
		})
		wg.Go(func() {
			for i := range writesPerWriter {
				d.Data = strconv.AppendInt(nil, int64(i+1), 10)
				if docErr = e.s.PutDoc(e.ctx, d); docErr != nil {
					return
				}
			}
		})
		wg.Wait()
		require.NoError(t, chatErr)
		require.NoError(t, docErr)
		got, err := e.s.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		require.Len(t, got.History, writesPerWriter)
		gotDoc, err := e.s.GetDoc(e.ctx, "chat-1", "toolstate")
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(writesPerWriter), string(gotDoc.Data))
	}},
	{"WritersOnTwoHandlesLoseNothing", func(t *testing.T, su *suite) {
		e := su.env(t)
		s2 := su.reopen(e)
		e.create(e.s, "chat-1", "", nil)
		e.create(e.s, "chat-2", "", nil)
		handles := []store.Store{e.s, s2}
		hammer(t, writesPerWriter, func(w, i int) error {
			s := handles[w%2]
			if i < appendsPerWriter {
				if _, err := appendMessage(e.ctx, s, "chat-1", fmt.Sprintf("w%d-%d", w, i)); err != nil {
					return err
				}
			}
			return incrementDoc(e.ctx, s, "chat-2", "counter")
		})
		c, err := s2.GetChat(e.ctx, "chat-1")
		require.NoError(t, err)
		checkAppends(t, c.History)
		d, err := e.s.GetDoc(e.ctx, "chat-2", "counter")
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(writers*writesPerWriter), string(d.Data))
	}},
}
