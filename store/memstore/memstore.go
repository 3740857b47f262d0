// Package memstore is a [store.Store] in memory, for tests and for
// single-process apps that need nothing to outlive the process.
//
// It keeps what other backends keep, in the same form (histories as their
// JSON, so a history that would not store in a database does not store
// here either), and follows the same rules: it passes the storetest
// conformance suite. Followers and stop waiters are woken in-process as
// soon as a stream changes; there are no other processes to poll.
package memstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/internal/backend"
)

// Options configure a [Store]. The zero value is ready to use.
type Options struct {
	// Now is the store's clock, for timestamps and leases; nil means
	// time.Now. Tests pass a settable clock to expire leases.
	Now func() time.Time
}

// Store is a [store.Store] in memory. It is safe for concurrent use; use
// [New] to make one.
type Store struct {
	now    func() time.Time
	hub    backend.Hub
	waiter backend.Waiter

	mu      sync.Mutex
	closed  bool
	seq     int64 // the last version handed out
	chats   map[string]*chat
	docs    map[string]*store.Doc // the documents of no chat, by name
	streams map[string]*stream    // by stream id
}

type chat struct {
	owner, title     string
	version          int64
	created, updated time.Time
	history          []byte // the JSON of the history
	docs             map[string]*store.Doc
	streams          map[string]bool // ids of the chat's streams
}

type stream struct {
	info   store.Stream // State as stored: active until ended
	token  string
	chunks [][]byte
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New(opts Options) *Store {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	s := &Store{
		now:     now,
		chats:   make(map[string]*chat),
		streams: make(map[string]*stream),
	}
	s.waiter = backend.Waiter{Hub: &s.hub, Now: now}
	return s
}

// lock takes the store's lock after checking ctx and that the store is
// open; the caller unlocks s.mu.
func (s *Store) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return store.ErrClosed
	}
	return nil
}

// clock returns the store's time, as every backend keeps it.
func (s *Store) clock() time.Time { return backend.Micro(s.now()) }

func (s *Store) nextVersion() int64 {
	s.seq++
	return s.seq
}

// GetChat implements [store.Chats].
func (s *Store) GetChat(ctx context.Context, id string) (*store.Chat, error) {
	if err := store.CheckID("chat id", id); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	c := s.chats[id]
	if c == nil {
		s.mu.Unlock()
		return nil, notFound("chat", id)
	}
	out := &store.Chat{ID: id, Owner: c.owner, Title: c.title, Version: c.version, Created: c.created, Updated: c.updated}
	data := c.history // never changed in place
	s.mu.Unlock()
	h, err := backend.DecodeHistory(id, out.Version, data)
	out.History = h
	return out, err
}

// PutChat implements [store.Chats].
func (s *Store) PutChat(ctx context.Context, c *store.Chat) error {
	if err := store.CheckChat(c); err != nil {
		return err
	}
	data, err := backend.EncodeHistory(c.ID, c.History)
	if err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	old := s.chats[c.ID]
	if have := versionOf(old); have != c.Version {
		return &store.ConflictError{ChatID: c.ID, Want: c.Version, Have: have}
	}
	now := s.clock()
	rec := &chat{owner: c.Owner, title: c.Title, version: s.nextVersion(), created: now, updated: now, history: data,
		docs: map[string]*store.Doc{}, streams: map[string]bool{}}
	if old != nil {
		rec.created, rec.docs, rec.streams = old.created, old.docs, old.streams
	}
	s.chats[c.ID] = rec
	c.Version, c.Created, c.Updated = rec.version, rec.created, rec.updated
	return nil
}

func versionOf(c *chat) int64 {
	if c == nil {
		return 0
	}
	return c.version
}

// DeleteChat implements [store.Chats].
func (s *Store) DeleteChat(ctx context.Context, id string, version int64) error {
	if err := store.CheckID("chat id", id); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	c := s.chats[id]
	switch {
	case c == nil:
		return notFound("chat", id)
	case c.version != version:
		return &store.ConflictError{ChatID: id, Want: version, Have: c.version}
	}
	for sid := range c.streams {
		delete(s.streams, sid)
		s.hub.Notify(sid)
	}
	delete(s.chats, id)
	return nil
}

// ListChats implements [store.ChatLister].
func (s *Store) ListChats(ctx context.Context, q store.ListQuery) (*store.ChatPage, error) {
	limit, err := q.PageSize()
	if err != nil {
		return nil, err
	}
	var afterTime time.Time
	var afterID string
	if q.Cursor != "" {
		if afterTime, afterID, err = backend.DecodeCursor(q.Cursor); err != nil {
			return nil, err
		}
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	var all []store.ChatSummary
	for id, c := range s.chats {
		if c.owner != q.Owner {
			continue
		}
		sum := store.ChatSummary{ID: id, Title: c.title, Updated: c.updated}
		if q.Cursor == "" || newerFirst(sum, store.ChatSummary{ID: afterID, Updated: afterTime}) > 0 {
			all = append(all, sum)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(all, newerFirst)
	page := &store.ChatPage{Chats: all[:min(limit, len(all))]}
	if len(all) > limit {
		last := page.Chats[limit-1]
		page.Next = backend.EncodeCursor(last.Updated, last.ID)
	}
	return page, nil
}

// newerFirst orders chats as a list shows them: by update time, then id,
// both descending.
func newerFirst(a, b store.ChatSummary) int {
	if c := b.Updated.Compare(a.Updated); c != 0 {
		return c
	}
	return cmp.Compare(b.ID, a.ID)
}

// GetDoc implements [store.Docs].
func (s *Store) GetDoc(ctx context.Context, chatID, name string) (*store.Doc, error) {
	if err := store.CheckDoc(&store.Doc{ChatID: chatID, Name: name}); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	d := s.doc(chatID, name)
	if d == nil {
		return nil, docNotFound(chatID, name)
	}
	out := *d
	out.Data = bytes.Clone(d.Data)
	return &out, nil
}

// docsOf returns the documents of the chat (nil if it does not exist), or
// of no chat for chatID "".
func (s *Store) docsOf(chatID string) map[string]*store.Doc {
	if chatID == "" {
		if s.docs == nil {
			s.docs = map[string]*store.Doc{}
		}
		return s.docs
	}
	if c := s.chats[chatID]; c != nil {
		return c.docs
	}
	return nil
}

func (s *Store) doc(chatID, name string) *store.Doc {
	return s.docsOf(chatID)[name]
}

// PutDoc implements [store.Docs].
func (s *Store) PutDoc(ctx context.Context, d *store.Doc) error {
	if err := store.CheckDoc(d); err != nil {
		return err
	}
	data := bytes.Clone(d.Data)
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	docs := s.docsOf(d.ChatID)
	if docs == nil {
		return notFound("chat", d.ChatID)
	}
	var have int64
	if old := docs[d.Name]; old != nil {
		have = old.Version
	}
	if have != d.Version {
		return &store.ConflictError{ChatID: d.ChatID, Doc: d.Name, Want: d.Version, Have: have}
	}
	rec := &store.Doc{ChatID: d.ChatID, Name: d.Name, Version: s.nextVersion(), Updated: s.clock(), Data: data}
	docs[d.Name] = rec
	d.Version, d.Updated = rec.Version, rec.Updated
	return nil
}

// DeleteDoc implements [store.Docs].
func (s *Store) DeleteDoc(ctx context.Context, chatID, name string, version int64) error {
	if err := store.CheckDoc(&store.Doc{ChatID: chatID, Name: name}); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	d := s.doc(chatID, name)
	switch {
	case d == nil:
		return docNotFound(chatID, name)
	case d.Version != version:
		return &store.ConflictError{ChatID: chatID, Doc: name, Want: version, Have: d.Version}
	}
	delete(s.docsOf(chatID), name)
	return nil
}

// StartStream implements [store.StreamWriter].
func (s *Store) StartStream(ctx context.Context, chatID string, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckID("chat id", chatID); err != nil {
		return store.Lease{}, err
	}
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	if err := s.lock(ctx); err != nil {
		return store.Lease{}, err
	}
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return store.Lease{}, notFound("chat", chatID)
	}
	now := s.clock()
	for sid := range c.streams {
		old := s.streams[sid]
		if old.info.State != store.StreamActive {
			continue
		}
		if now.Before(old.info.LeaseExpires) {
			return store.Lease{}, &store.ActiveStreamError{ChatID: chatID, StreamID: sid, LeaseExpires: old.info.LeaseExpires}
		}
		old.info.State, old.info.Ended = store.StreamInterrupted, old.info.LeaseExpires
		s.hub.Notify(sid)
	}
	l := store.Lease{ChatID: chatID, StreamID: backend.RandomID(), Token: backend.RandomID(), Expires: now.Add(ttl)}
	s.streams[l.StreamID] = &stream{
		info:  store.Stream{ID: l.StreamID, ChatID: chatID, State: store.StreamActive, Started: now, LeaseExpires: l.Expires},
		token: l.Token,
	}
	c.streams[l.StreamID] = true
	return l, nil
}

// held returns the lease's stream if the lease still holds it; the caller
// holds s.mu.
func (s *Store) held(l store.Lease) (*stream, error) {
	st := s.streams[l.StreamID]
	var info *store.Stream
	var token string
	if st != nil {
		info, token = &st.info, st.token
	}
	if why := backend.WhyLost(info, token, l.Token, s.clock()); why != "" {
		return nil, backend.LeaseLost(l.StreamID, why)
	}
	return st, nil
}

// AppendChunks implements [store.StreamWriter].
func (s *Store) AppendChunks(ctx context.Context, l store.Lease, chunks ...[]byte) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	st, err := s.held(l)
	if err != nil {
		return 0, err
	}
	for _, c := range chunks {
		st.chunks = append(st.chunks, bytes.Clone(c))
	}
	st.info.Len = int64(len(st.chunks))
	if len(chunks) > 0 {
		s.hub.Notify(l.StreamID)
	}
	return st.info.Len, nil
}

// RenewLease implements [store.StreamWriter].
func (s *Store) RenewLease(ctx context.Context, l store.Lease, ttl time.Duration) (store.Lease, error) {
	if err := store.CheckTTL(ttl); err != nil {
		return store.Lease{}, err
	}
	if err := s.lock(ctx); err != nil {
		return store.Lease{}, err
	}
	defer s.mu.Unlock()
	st, err := s.held(l)
	if err != nil {
		return store.Lease{}, err
	}
	l.Expires = s.clock().Add(ttl)
	st.info.LeaseExpires = l.Expires
	s.hub.Notify(l.StreamID)
	return l, nil
}

// EndStream implements [store.StreamWriter].
func (s *Store) EndStream(ctx context.Context, l store.Lease, state store.StreamState) error {
	if err := store.CheckEndState(state); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	st, err := s.held(l)
	if err != nil {
		return err
	}
	st.info.State, st.info.Ended = state, s.clock()
	s.hub.Notify(l.StreamID)
	return nil
}

// WaitStop implements [store.StreamWriter].
func (s *Store) WaitStop(ctx context.Context, l store.Lease) error {
	return s.waiter.WaitStop(ctx, l, func(ctx context.Context, l store.Lease) (bool, time.Time, error) {
		if err := s.lock(ctx); err != nil {
			return false, time.Time{}, err
		}
		defer s.mu.Unlock()
		st, err := s.held(l)
		if err != nil {
			return false, time.Time{}, err
		}
		return st.info.StopRequested, st.info.LeaseExpires, nil
	})
}

// StopStream implements [store.Streams].
func (s *Store) StopStream(ctx context.Context, chatID string) error {
	if err := store.CheckID("chat id", chatID); err != nil {
		return err
	}
	if err := s.lock(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	st := s.active(chatID)
	if st == nil {
		return noActiveStream(chatID)
	}
	st.info.StopRequested = true
	s.hub.Notify(st.info.ID)
	return nil
}

// active returns the chat's active stream, or nil; the caller holds s.mu.
func (s *Store) active(chatID string) *stream {
	if c := s.chats[chatID]; c != nil {
		now := s.clock()
		for sid := range c.streams {
			st := s.streams[sid]
			if st.info.State == store.StreamActive && now.Before(st.info.LeaseExpires) {
				return st
			}
		}
	}
	return nil
}

// ActiveStream implements [store.StreamReader].
func (s *Store) ActiveStream(ctx context.Context, chatID string) (*store.Stream, error) {
	if err := store.CheckID("chat id", chatID); err != nil {
		return nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	st := s.active(chatID)
	if st == nil {
		return nil, noActiveStream(chatID)
	}
	info := st.info
	return &info, nil
}

// GetStream implements [store.StreamReader].
func (s *Store) GetStream(ctx context.Context, streamID string) (*store.Stream, error) {
	info, _, err := s.read(ctx, streamID, 0, 0)
	return info, err
}

// read returns the stream, in the state it effectively has now, and up to
// max of its chunks from sequence number from on.
func (s *Store) read(ctx context.Context, streamID string, from int64, max int) (*store.Stream, []store.Chunk, error) {
	if err := store.CheckID("stream id", streamID); err != nil {
		return nil, nil, err
	}
	if err := s.lock(ctx); err != nil {
		return nil, nil, err
	}
	defer s.mu.Unlock()
	st := s.streams[streamID]
	if st == nil {
		return nil, nil, notFound("stream", streamID)
	}
	info := st.info
	backend.EffectiveState(&info, s.clock())
	var chunks []store.Chunk
	for seq := from; seq < info.Len && len(chunks) < max; seq++ {
		chunks = append(chunks, store.Chunk{Seq: seq, Data: bytes.Clone(st.chunks[seq])})
	}
	return &info, chunks, nil
}

// ReadStream implements [store.StreamReader].
func (s *Store) ReadStream(ctx context.Context, streamID string, from int64) iter.Seq2[store.Chunk, error] {
	return s.waiter.Follow(ctx, streamID, from, s.read)
}

// DeleteEndedStreams implements [store.Streams].
func (s *Store) DeleteEndedStreams(ctx context.Context, before time.Time) (int64, error) {
	if err := s.lock(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	now := s.clock()
	var n int64
	for _, sid := range slices.Collect(maps.Keys(s.streams)) {
		st := s.streams[sid]
		info := st.info
		backend.EffectiveState(&info, now)
		if info.State == store.StreamActive || !info.Ended.Before(before) {
			continue
		}
		delete(s.streams, sid)
		delete(s.chats[info.ChatID].streams, sid)
		s.hub.Notify(sid)
		n++
	}
	return n, nil
}

// Close implements [store.Store]: later calls fail with [store.ErrClosed],
// and streams being followed end with it.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.hub.Close()
	return nil
}

func notFound(what, id string) error {
	return fmt.Errorf("%w: %s %q", store.ErrNotFound, what, id)
}

func docNotFound(chatID, name string) error {
	if chatID == "" {
		return fmt.Errorf("%w: document %q of no chat", store.ErrNotFound, name)
	}
	return fmt.Errorf("%w: document %q of chat %q", store.ErrNotFound, name, chatID)
}

func noActiveStream(chatID string) error {
	return fmt.Errorf("%w: chat %q has no active stream", store.ErrNotFound, chatID)
}
