package toolstate

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrEmptyID is wrapped by the error of a store call with an empty
// conversation id.
var ErrEmptyID = errors.New("toolstate: empty conversation id")

// Store keeps one [State] per conversation id. Implementations must be
// safe for concurrent use.
type Store interface {
	// Load returns a copy of the conversation's state; the caller owns it,
	// and changing it changes nothing stored. A conversation with no state
	// yet gets a fresh one (NewState(Config{})). A stored state that cannot
	// be decoded is an error wrapping [ErrCorrupt] or [ErrVersion].
	Load(ctx context.Context, id string) (*State, error)

	// Update is an atomic read-modify-write of the conversation's state:
	// it loads the state as Load does, calls fn with it, and stores the
	// result unless fn returns an error (which Update returns). A result
	// that [Marshal] refuses is not stored: Update returns an error
	// wrapping [ErrInvalid]. Updates of
	// one conversation are serialized, so concurrent updates lose nothing;
	// fn must not call the store, nor keep the state after it returns (the
	// store may keep it). Updates of different conversations may run in
	// parallel.
	Update(ctx context.Context, id string, fn func(*State) error) error

	// Delete removes the conversation's state; the next Load is fresh.
	// Deleting a missing id is not an error.
	Delete(ctx context.Context, id string) error

	// Discard sets aside the conversation's stored state if it cannot be
	// decoded (Load fails with [ErrCorrupt] or [ErrVersion]), so that the
	// next Load is fresh; a state that decodes, or none, is left as it is.
	// Repair a corrupt conversation with Discard rather than Delete: when
	// several runs meet the same corrupt state at once, the first one's
	// Discard sets it aside and the others' do nothing, so no update made
	// after the repair is lost.
	Discard(ctx context.Context, id string) error
}

// LoadOrFresh loads the conversation's state from store. If the stored
// state is corrupt or of an unknown version, it returns a fresh state with
// cfg together with the error, so the caller can report it and go on; any
// other error (an I/O failure, a done ctx) returns a nil state.
func LoadOrFresh(ctx context.Context, store Store, id string, cfg Config) (*State, error) {
	s, err := store.Load(ctx, id)
	if undecodable(err) {
		return NewState(cfg), err
	}
	return s, err
}

// keyLocks hands out one mutex per key, dropping it when nobody holds or
// waits for it.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (k *keyLocks) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyLock)
	}
	l := k.locks[key]
	if l == nil {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// MemoryStore is a [Store] in memory, for tests and single-process apps
// that need no persistence. The zero value is ready to use; it must not be
// copied after first use. It is safe for concurrent use.
type MemoryStore struct {
	locks keyLocks
	mu    sync.Mutex
	data  map[string]*State
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Load implements [Store].
func (m *MemoryStore) Load(ctx context.Context, id string) (*State, error) {
	if id == "" {
		return nil, ErrEmptyID
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.data[id]; ok {
		return s.Clone(), nil
	}
	return NewState(Config{}), nil
}

// Update implements [Store].
func (m *MemoryStore) Update(ctx context.Context, id string, fn func(*State) error) error {
	if id == "" {
		return ErrEmptyID
	}
	unlock := m.locks.lock(id)
	defer unlock()
	s, err := m.Load(ctx, id)
	if err != nil {
		return err
	}
	if err := fn(s); err != nil {
		return err
	}
	if err := s.validate(); err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w: %w", id, ErrInvalid, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = make(map[string]*State)
	}
	m.data[id] = s
	return nil
}

// Delete implements [Store].
func (m *MemoryStore) Delete(ctx context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	unlock := m.locks.lock(id)
	defer unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, id)
	return nil
}

// Discard implements [Store]. States in memory are always decodable, so
// it does nothing.
func (m *MemoryStore) Discard(ctx context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	return ctx.Err()
}
