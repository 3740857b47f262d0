package toolstate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
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
	// fn must not call the store. Updates of different conversations may
	// run in parallel.
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

// FileStore is a [Store] that keeps each conversation's state in its own
// JSON file ([Marshal]) in one directory, the embedded default. It is safe
// for concurrent use. Updates of one conversation are serialized by a mutex
// per id within the process and, on Unix, by an exclusive flock(2) on the
// conversation's lock file (its file name plus ".lock", kept beside it), so
// separate processes or FileStores sharing the directory lose no update
// either (not on network file systems without flock). Elsewhere only the
// writers of one FileStore are coordinated. Each file is always whole: it
// is replaced atomically.
//
// File names are derived from the id so that any id is safe: "c-" plus the
// unpadded lower-case base32 encoding of the id, or, for ids too long for a
// file name, "h-" plus the hex SHA-256 of the id; then ".json". An id can
// never name a path outside the directory, and two ids never share a file,
// even on case-insensitive file systems (macOS, Windows).
//
// [FileStore.Discard] keeps a file it cannot decode, renamed to its name
// plus ".corrupt-" and a Unix time in nanoseconds, for a person to look at.
type FileStore struct {
	dir   string
	locks keyLocks
}

// NewFileStore returns a FileStore over dir, creating dir (mode 0700) if
// needed.
func NewFileStore(dir string) (*FileStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("toolstate: file store: %w", err)
	}
	return &FileStore{dir: dir}, nil
}

// Dir returns the store's directory.
func (f *FileStore) Dir() string { return f.dir }

// Path returns the file that holds the conversation's state.
func (f *FileStore) Path(id string) string {
	return filepath.Join(f.dir, fileName(id))
}

// lock takes the conversation's in-process mutex, then its lock file. An
// empty id is ErrEmptyID.
func (f *FileStore) lock(id string) (func(), error) {
	if id == "" {
		return nil, ErrEmptyID
	}
	unlock := f.locks.lock(id)
	unlockFile, err := lockFile(f.Path(id) + ".lock")
	if err != nil {
		unlock()
		return nil, err
	}
	return func() {
		unlockFile()
		unlock()
	}, nil
}

// fileName maps an id to a safe file name (see FileStore).
func fileName(id string) string {
	enc := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(id)))
	if len(enc) <= 200 {
		return "c-" + enc + ".json"
	}
	sum := sha256.Sum256([]byte(id))
	return "h-" + hex.EncodeToString(sum[:]) + ".json"
}

// Load implements [Store]. The error of a corrupt file names the file.
func (f *FileStore) Load(ctx context.Context, id string) (*State, error) {
	s, _, err := f.load(ctx, id)
	return s, err
}

func (f *FileStore) load(ctx context.Context, id string) (*State, []byte, error) {
	if id == "" {
		return nil, nil, ErrEmptyID
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	path := f.Path(id)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewState(Config{}), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	s, err := Unmarshal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("conversation %q, file %s: %w", id, path, err)
	}
	return s, data, nil
}

// Update implements [Store]. The new state is written to a temporary file
// in the same directory, synced, and renamed over the old one, so a crash
// leaves either the old or the new state. When fn leaves the state as it
// was, nothing is written.
func (f *FileStore) Update(ctx context.Context, id string, fn func(*State) error) error {
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	s, old, err := f.load(ctx, id)
	if err != nil {
		return err
	}
	if err := fn(s); err != nil {
		return err
	}
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	if bytes.Equal(data, old) {
		return nil
	}
	return f.write(id, data)
}

// Save replaces the conversation's state with s, whatever is stored (for
// instance after [LoadOrFresh] fell back to a fresh state).
func (f *FileStore) Save(ctx context.Context, id string, s *State) error {
	if id == "" {
		return ErrEmptyID
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	return f.write(id, data)
}

// Discard implements [Store]: a file that does not decode is renamed (see
// FileStore), not removed.
func (f *FileStore) Discard(ctx context.Context, id string) error {
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	_, _, err = f.load(ctx, id)
	if !undecodable(err) {
		return err // nil: nothing to set aside
	}
	// The name is new: the conversation's lock is held, and a coarse clock
	// could repeat a time.
	aside := f.Path(id) + ".corrupt-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	for i := 1; ; i++ {
		if _, err := os.Lstat(aside); err != nil { // free (or Rename will say why not)
			break
		}
		aside = fmt.Sprintf("%s.corrupt-%d-%d", f.Path(id), time.Now().UnixNano(), i)
	}
	if err := os.Rename(f.Path(id), aside); err != nil {
		return fmt.Errorf("toolstate: setting aside conversation %q: %w", id, err)
	}
	f.syncDir()
	return nil
}

// syncDir makes renames in the directory survive a crash, where the
// system allows it.
func (f *FileStore) syncDir() {
	if d, err := os.Open(f.dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

func (f *FileStore) write(id string, data []byte) (err error) {
	defer func() {
		if err != nil {
			err = fmt.Errorf("toolstate: saving conversation %q: %w", id, err)
		}
	}()
	tmp, err := os.CreateTemp(f.dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), f.Path(id)); err != nil {
		return err
	}
	f.syncDir()
	return nil
}

// Delete implements [Store].
func (f *FileStore) Delete(ctx context.Context, id string) error {
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	err = os.Remove(f.Path(id))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("toolstate: deleting conversation %q: %w", id, err)
	}
	return nil
}
