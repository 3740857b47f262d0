package toolstate

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
)

// compactAfter is how many journal records a conversation collects before
// its snapshot is rewritten and its journal emptied.
const compactAfter = 64

// maxCached bounds the conversations whose decoded state a FileStore keeps.
const maxCached = 1024

// FileStore is a [Store] that keeps each conversation's state in files of
// one directory, the embedded default. It is safe for concurrent use.
//
// A conversation has a snapshot, a whole [Marshal] document written
// atomically (temporary file, sync, rename), and beside it a journal (the
// snapshot's name plus ".log") to which each [FileStore.Update] appends one
// line holding the tool states it changed, synced before Update returns:
// one durable write per update, whatever the number of tools. Every 64
// records the snapshot is rewritten and the journal emptied. A journal line
// that a crash cut short is ignored (its Update never returned). The
// decoded state of recently used conversations is kept in memory and
// checked against the files' identity, size and time before each use, so
// an update neither re-reads nor re-decodes a large state.
//
// Calls on one conversation are serialized by a mutex per id within the
// process and, on Unix, by an exclusive flock(2) on the conversation's lock
// file (its snapshot's name plus ".lock", kept beside it), so separate
// processes or FileStores sharing the directory lose no update either (not
// on network file systems without flock). Elsewhere only the callers of one
// FileStore are coordinated.
//
// File names are derived from the id so that any id is safe: "c-" plus the
// unpadded lower-case base32 encoding of the id, or, for ids too long for a
// file name, "h-" plus the hex SHA-256 of the id; then ".json". An id can
// never name a path outside the directory, and two ids never share a file,
// even on case-insensitive file systems (macOS, Windows).
//
// [FileStore.Discard] keeps files it cannot decode, renamed to their names
// plus ".corrupt-" and a Unix time in nanoseconds, for a person to look at.
type FileStore struct {
	dir   string
	locks keyLocks

	mu    sync.Mutex
	cache map[string]*cached // by id; guarded by mu, entries by the id's lock
}

// cached is the decoded state of a conversation and what its files looked
// like when it was read or written. state is what the files hold; working
// is a copy of it that Update hands to its fn, so that an update neither
// copies nor re-reads the whole state.
type cached struct {
	state   *State
	working *State      // nil until an Update needs it; equal to state between calls
	snap    os.FileInfo // nil: no snapshot
	log     os.FileInfo // nil: no journal
	logLen  int64       // bytes of the journal that hold whole records
	records int         // whole records in the journal
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

// Path returns the snapshot file of the conversation's state; its journal
// is Path(id) + ".log".
func (f *FileStore) Path(id string) string {
	return filepath.Join(f.dir, fileName(id))
}

func (f *FileStore) journal(id string) string { return f.Path(id) + ".log" }

// fileName maps an id to a safe file name (see FileStore).
func fileName(id string) string {
	enc := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte(id)))
	if len(enc) <= 200 {
		return "c-" + enc + ".json"
	}
	sum := sha256.Sum256([]byte(id))
	return "h-" + hex.EncodeToString(sum[:]) + ".json"
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

// Load implements [Store]. The error of a corrupt file names the file.
func (f *FileStore) Load(ctx context.Context, id string) (*State, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	unlock, err := f.lock(id)
	if err != nil {
		return nil, err
	}
	defer unlock()
	c, err := f.current(id)
	if err != nil {
		return nil, err
	}
	return c.state.Clone(), nil
}

// Update implements [Store]: it appends the tool states fn changed to the
// conversation's journal and syncs it (the first update of a conversation
// writes its snapshot instead). When fn leaves the state as it was, nothing
// is written.
func (f *FileStore) Update(ctx context.Context, id string, fn func(*State) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	c, err := f.current(id)
	if err != nil {
		return err
	}
	if c.working == nil {
		c.working = c.state.Clone()
	}
	s := c.working
	if err := fn(s); err != nil {
		c.working = nil // fn may have changed it half way
		return err
	}
	rec, changed := diff(c.state, s)
	if !changed {
		return nil
	}
	if err := rec.validate(); err != nil {
		c.working = nil
		return fmt.Errorf("toolstate: conversation %q: %w: %w", id, ErrInvalid, err)
	}
	if c.snap == nil || c.records+1 >= compactAfter {
		return f.writeSnapshot(id, s)
	}
	return f.appendRecord(id, c, rec)
}

// Save replaces the conversation's state with s, whatever is stored (for
// instance after [LoadOrFresh] fell back to a fresh state).
func (f *FileStore) Save(ctx context.Context, id string, s *State) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := Marshal(s); err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	return f.writeSnapshot(id, s.Clone())
}

// Discard implements [Store]: files that do not decode are renamed (see
// FileStore), not removed.
func (f *FileStore) Discard(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	unlock, err := f.lock(id)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err = f.current(id); !undecodable(err) {
		return err // nil: nothing to set aside
	}
	f.forget(id)
	// The names are new: the conversation's lock is held, and a coarse
	// clock could repeat a time.
	suffix := ".corrupt-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	for i := 1; exists(f.Path(id)+suffix) || exists(f.journal(id)+suffix); i++ {
		suffix = fmt.Sprintf(".corrupt-%d-%d", time.Now().UnixNano(), i)
	}
	for _, p := range []string{f.Path(id), f.journal(id)} {
		if err := os.Rename(p, p+suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("toolstate: setting aside conversation %q: %w", id, err)
		}
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
	f.forget(id)
	for _, p := range []string{f.journal(id), f.Path(id)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("toolstate: deleting conversation %q: %w", id, err)
		}
	}
	return nil
}

// current returns the conversation's state as its files hold it: the
// cached one when the files are as they were, the cached one plus the
// records another process appended since, or one read afresh. The caller
// holds the conversation's lock.
func (f *FileStore) current(id string) (*cached, error) {
	snap, err := stat(f.Path(id))
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	log, err := stat(f.journal(id))
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	f.mu.Lock()
	c := f.cache[id]
	f.mu.Unlock()
	if c != nil && sameFile(c.snap, snap) && log != nil && c.log != nil && os.SameFile(c.log, log) && log.Size() >= c.logLen {
		if log.Size() == c.logLen {
			return c, nil
		}
		// Another process appended: replay what it wrote.
		c.log = log
		if err := f.replay(id, c); err != nil {
			f.forget(id)
			return nil, err
		}
		return c, nil
	}
	if c != nil && sameFile(c.snap, snap) && log == nil && c.log == nil {
		return c, nil
	}
	next := &cached{snap: snap, log: log}
	next.state = NewState(Config{})
	if snap != nil {
		data, err := os.ReadFile(f.Path(id))
		if err != nil {
			return nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
		}
		if next.state, err = Unmarshal(data); err != nil {
			return nil, fmt.Errorf("conversation %q, file %s: %w", id, f.Path(id), err)
		}
	}
	if log != nil {
		if err := f.replay(id, next); err != nil {
			return nil, err
		}
	}
	f.remember(id, next)
	return next, nil
}

// replay applies the whole records of the journal from c.logLen on to
// c.state, advancing c.logLen and c.records. A last line without its
// newline is a record a crash cut short: it is left out.
func (f *FileStore) replay(id string, c *cached) error {
	file, err := os.Open(f.journal(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	defer file.Close()
	if _, err := file.Seek(c.logLen, io.SeekStart); err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	r := bufio.NewReader(file)
	for {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil // a line without its newline (if any) was cut short
		}
		if err != nil {
			return fmt.Errorf("toolstate: conversation %q: %w", id, err)
		}
		var rec record
		if err := json.Unmarshal(line, &rec); err != nil {
			return fmt.Errorf("conversation %q, file %s: %w: record %d: %w", id, f.journal(id), ErrCorrupt, c.records+1, err)
		}
		if err := rec.validate(); err != nil {
			return fmt.Errorf("conversation %q, file %s: %w: record %d: %w", id, f.journal(id), ErrCorrupt, c.records+1, err)
		}
		rec.apply(c.state)
		if c.working != nil {
			rec.apply(c.working)
		}
		c.logLen += int64(len(line))
		c.records++
	}
}

// appendRecord appends rec to the journal, syncs it, and applies it to the
// cached state.
func (f *FileStore) appendRecord(id string, c *cached, rec record) (err error) {
	defer func() {
		if err != nil {
			f.forget(id)
			err = fmt.Errorf("toolstate: saving conversation %q: %w", id, err)
		}
	}()
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	file, err := os.OpenFile(f.journal(id), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}()
	// Write after the last whole record: a line a crash cut short is
	// overwritten.
	if err := file.Truncate(c.logLen); err != nil {
		return err
	}
	if _, err := file.WriteAt(append(line, '\n'), c.logLen); err != nil {
		return err
	}
	if err := file.Sync(); err != nil {
		return err
	}
	if c.log, err = file.Stat(); err != nil {
		return err
	}
	c.logLen += int64(len(line)) + 1
	c.records++
	rec.apply(c.state)
	return nil
}

// writeSnapshot replaces the snapshot with s atomically and empties the
// journal.
func (f *FileStore) writeSnapshot(id string, s *State) (err error) {
	defer func() {
		if err != nil {
			f.forget(id)
			err = fmt.Errorf("toolstate: saving conversation %q: %w", id, err)
		}
	}()
	data, err := Marshal(s)
	if err != nil {
		return err
	}
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
	// The snapshot holds every record: a crash before the journal is
	// emptied replays records the snapshot already has, which sets the
	// same values again.
	if err := os.Remove(f.journal(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	snap, err := os.Stat(f.Path(id))
	if err != nil {
		return err
	}
	f.remember(id, &cached{state: s, snap: snap}) // s is the caller's: no working copy yet
	return nil
}

func (f *FileStore) remember(id string, c *cached) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cache == nil {
		f.cache = make(map[string]*cached)
	}
	if _, ok := f.cache[id]; !ok && len(f.cache) >= maxCached {
		for other := range f.cache { // drop any one
			delete(f.cache, other)
			break
		}
	}
	f.cache[id] = c
}

func (f *FileStore) forget(id string) {
	f.mu.Lock()
	delete(f.cache, id)
	f.mu.Unlock()
}

// syncDir makes renames in the directory survive a crash, where the
// system allows it.
func (f *FileStore) syncDir() {
	if d, err := os.Open(f.dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// stat returns the file's info, or nil if it does not exist.
func stat(path string) (os.FileInfo, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return info, err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// sameFile reports whether two stats (nil: no file) are of the same,
// unchanged file.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// record is one journal line: the tool states an update changed, set to
// their new values (so replaying a record twice changes nothing).
type record struct {
	Tools   map[string]ToolState `json:"tools,omitempty"`
	Removed []string             `json:"removed,omitempty"`
	Config  *Config              `json:"config,omitempty"`
	Updated time.Time            `json:"updated"`
}

// diff returns the record that turns old into s, and whether they differ.
func diff(old, s *State) (record, bool) {
	rec := record{Updated: s.Updated}
	changed := !old.Updated.Equal(s.Updated)
	for name, ts := range s.Tools {
		if prev, ok := old.Tools[name]; !ok || !sameToolState(prev, ts) {
			if rec.Tools == nil {
				rec.Tools = make(map[string]ToolState)
			}
			rec.Tools[name] = ts
			changed = true
		}
	}
	for name := range old.Tools {
		if _, ok := s.Tools[name]; !ok {
			rec.Removed = append(rec.Removed, name)
			changed = true
		}
	}
	if !reflect.DeepEqual(old.Config, s.Config) {
		cfg := s.Config.clone()
		rec.Config = &cfg
		changed = true
	}
	return rec, changed
}

func sameToolState(a, b ToolState) bool {
	return a.Status == b.Status && a.Reason == b.Reason && a.LastUpdated.Equal(b.LastUpdated) &&
		a.ConsecutiveFailures == b.ConsecutiveFailures && a.LastSuccess.Equal(b.LastSuccess) &&
		a.LastFailure.Equal(b.LastFailure) && a.Successes == b.Successes && a.Failures == b.Failures
}

// validate reports the first thing in the record that Unmarshal would
// refuse in a state.
func (r record) validate() error {
	if r.Config != nil {
		if err := r.Config.Validate(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	for name, ts := range r.Tools {
		if checkTool(name, ts) != nil {
			return firstBadTool(r.Tools)
		}
	}
	return nil
}

// apply sets what the record holds in s.
func (r record) apply(s *State) {
	if s.Tools == nil {
		s.Tools = make(map[string]ToolState, len(r.Tools))
	}
	maps.Copy(s.Tools, r.Tools)
	for _, name := range r.Removed {
		delete(s.Tools, name)
	}
	if r.Config != nil {
		s.Config = r.Config.clone()
	}
	s.Updated = r.Updated
}
